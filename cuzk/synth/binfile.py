"""The iden3 binary container every circom/snarkjs file shares (``binfileutils`` in snarkjs), and
the field/curve checks on its headers.

It lives in ``synth`` because the ``.r1cs`` reader (:func:`cuzk.synth.read_r1cs`) needs it and
synth may not import ``formats``; the ``.zkey``/``.wtns`` readers in :mod:`cuzk.formats.snarkjs`
use it from here. Every function takes the exception class to raise, so each file kind keeps
its own (``R1csFormatError`` for ``.r1cs``, ``SnarkjsFormatError`` for the others).

Layout (little-endian): 4-byte magic (``r1cs``, ``wtns``, ``zkey``), u32 version, u32 section
count, then ``{u32 id, u64 size, size bytes}`` per section. Sections are looked up by id, never
by position (snarkjs itself writes some out of order).

    >>> blob = b"wtns" + bytes([2, 0, 0, 0, 1, 0, 0, 0]) + bytes([7, 0, 0, 0]) + bytes(8)
    >>> sorted(read_sections(blob, b"wtns", (2,), "w.wtns"))
    [7]
"""

from __future__ import annotations

import os
import struct

from cuzk.atomic_file import atomic_write
from cuzk import curves
from cuzk.errors import SnarkjsFormatError, UnsupportedCurveError

__all__ = ["read_sections", "read_container", "write_container", "check_prime", "snarkjs_name", "Cursor"]


def read_sections(data: bytes, magic: bytes, versions: tuple, where: str, *,
                  error: type[Exception] = SnarkjsFormatError) -> dict[int, memoryview]:
    """Split a container into ``{section id: bytes}``, checking magic, version and sizes.

    Raises:
        SnarkjsFormatError: (or ``error``) wrong magic or version, a truncated section table or
            section, a duplicated section id, or trailing bytes after the last section.
    """
    view = memoryview(data)
    if len(view) < 12:
        raise error(f"{where}: {len(view)} bytes is too short for a {magic.decode()} header (truncated file)")
    if bytes(view[:4]) != magic:
        raise error(f"{where}: bad magic {bytes(view[:4])!r}, expected {magic!r} (not a .{magic.decode()} file)")
    version, n_sec = struct.unpack_from("<II", view, 4)
    if version not in versions:
        raise error(f"{where}: unsupported .{magic.decode()} version {version} (supported: {versions})")
    sections: dict[int, memoryview] = {}
    off = 12
    for k in range(n_sec):
        if off + 12 > len(view):
            raise error(f"{where}: truncated file: section table entry {k} at byte {off} is cut off")
        sid, size = struct.unpack_from("<IQ", view, off)
        off += 12
        if off + size > len(view):
            raise error(
                f"{where}: truncated file: section {sid} claims {size} bytes, {len(view) - off} are left"
            )
        if sid in sections:
            raise error(f"{where}: section {sid} appears twice")
        sections[sid] = view[off:off + size]
        off += size
    if off != len(view):
        raise error(f"{where}: {len(view) - off} trailing bytes after the last section")
    return sections


def read_container(path, magic: bytes, versions: tuple, where: str, *, keep=None,
                   error: type[Exception] = SnarkjsFormatError) -> dict[int, memoryview]:
    """:func:`read_sections` for a file, read piece by piece: the 12-byte header (magic, version)
    is checked before anything else is read, each section's size is compared with the bytes
    left in the file before the section is read, and sections not in ``keep`` (None: all) are
    skipped without reading them. A 3 GiB file of another kind is refused after 12 bytes.

    Raises:
        SnarkjsFormatError: (or ``error``) as :func:`read_sections`.
        OSError: the file cannot be opened or read.
    """
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        head = f.read(12)
        if len(head) < 12 or bytes(head[:4]) != magic:
            read_sections(head, magic, versions, where, error=error)  # raises with the usual message
        version, n_sec = struct.unpack_from("<II", head, 4)
        if version not in versions:
            raise error(f"{where}: unsupported .{magic.decode()} version {version} (supported: {versions})")
        sections: dict[int, memoryview] = {}
        seen: set[int] = set()
        off = 12
        for k in range(n_sec):
            entry = f.read(12)
            if len(entry) < 12:
                raise error(f"{where}: truncated file: section table entry {k} at byte {off} is cut off")
            sid, length = struct.unpack("<IQ", entry)
            off += 12
            if off + length > size:
                raise error(f"{where}: truncated file: section {sid} claims {length} bytes, {size - off} are left")
            if sid in seen:
                raise error(f"{where}: section {sid} appears twice")
            seen.add(sid)
            if keep is None or sid in keep:
                body = f.read(length)
                if len(body) != length:  # the file shrank under us
                    raise error(f"{where}: truncated file: section {sid} is cut off at byte {off + len(body)}")
                sections[sid] = memoryview(body)
            else:
                f.seek(length, os.SEEK_CUR)
            off += length
        if off != size:
            raise error(f"{where}: {size - off} trailing bytes after the last section")
    return sections


def write_container(path, magic: bytes, version: int, sections: list[tuple[int, bytes]]) -> None:
    """Write a container atomically (temp file in the same folder, then rename)."""
    out = [magic, struct.pack("<II", version, len(sections))]
    for sid, body in sections:
        out += [struct.pack("<IQ", sid, len(body)), body]
    with atomic_write(path) as f:
        f.write(b"".join(out))


def snarkjs_name(curve: str) -> str:
    """snarkjs' name of a curve (its spec's ``snarkjs_name``; the canonical name if it has none).

    >>> snarkjs_name("bn254"), snarkjs_name("bls12_381")
    ('bn128', 'bls12381')
    """
    spec = curves.resolve(curves.canonical(curve))
    return spec.snarkjs_name or spec.name


def check_prime(value: int, field: str, where: str, *, curve: str | None = None,
                error: type[Exception] = SnarkjsFormatError) -> str:
    """The curve whose scalar (``field="r"``) or base (``"q"``) field has the prime ``value``.

    Args:
        curve: when given, the curve the rest of the data is over; a prime of another known
            curve then raises :class:`UnsupportedCurveError` naming both.

    Returns:
        The canonical curve name (``"bls12_381"``, ``"bn254"``).

    Raises:
        UnsupportedCurveError: the prime is another known curve's than ``curve``.
        SnarkjsFormatError: (or ``error``) the prime is no known curve's.

    >>> from cuzk.curves import BN254
    >>> check_prime(BN254.fr.modulus, "r", "c.r1cs")
    'bn254'
    """
    for spec in curves.CURVES.values():
        if value == (spec.fr.modulus if field == "r" else spec.fq.modulus):
            if curve is not None and spec.name != curves.canonical(curve):
                raise UnsupportedCurveError(
                    f"{where}: the file is for curve {spec.title} ({snarkjs_name(spec.name)}), the rest of the data "
                    f"is for {curves.resolve(curve).title} ({snarkjs_name(curve)}): the two curves cannot be mixed"
                )
            return spec.name
    known = " nor ".join(f"{s.title}'s" for s in curves.CURVES.values())
    raise error(f"{where}: prime {value} is neither {known} {'scalar' if field == 'r' else 'base'} field prime")


class Cursor:
    """Sequential little-endian reads from one section, naming the section on truncation."""

    def __init__(self, body: memoryview, where: str, section: str, *, error: type[Exception] = SnarkjsFormatError):
        self.body, self.off, self.where, self.section, self.error = body, 0, where, section, error

    def take(self, n: int) -> memoryview:
        if self.off + n > len(self.body):
            raise self.error(
                f"{self.where}: {self.section} section is truncated at byte {self.off} (needs {n} more bytes)"
            )
        out = self.body[self.off:self.off + n]
        self.off += n
        return out

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4))[0]

    def uint(self, n: int) -> int:
        return int.from_bytes(self.take(n), "little")

    def done(self) -> None:
        if self.off != len(self.body):
            raise self.error(f"{self.where}: {len(self.body) - self.off} unexpected bytes at the end of the {self.section} section")

