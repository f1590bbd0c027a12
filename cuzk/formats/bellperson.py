"""bellperson's Groth16 byte layouts: ``.vk`` and ``.params`` (DESIGN §6), plus a JSON vk.

Layout (every point uncompressed zcash encoding, counts u32 big-endian)::

    vk:      alpha_g1 beta_g1 beta_g2 gamma_g2 delta_g1 delta_g2 | u32 n + ic[n]
    params:  vk | u32 + h[] | u32 + l[] | u32 + a[] | u32 + b_g1[] | u32 + b_g2[]

Reading streams a file section by section and decodes points in bounded chunks, each split over
``threads`` threads (default: every core) running the ``nogil`` Numba decoder
(:mod:`cuzk.curve.validate`); every count is compared with the bytes left before anything is
allocated, so a corrupt count cannot make the reader allocate gigabytes. Like bellperson's
``Parameters::read``, a point at infinity is rejected in ``ic``, ``h``, ``l``, ``a``, ``b_g1``
and ``b_g2`` (bellperson stores those queries without infinities); cuzk also rejects it in the
six fixed vk elements, where no valid setup produces it. ``checked=True`` (default) checks
every point is on the curve and in the prime-order subgroup; ``checked=False`` keeps the
cheap on-curve check and skips the subgroup check, for trusted files. Every problem raises
:class:`cuzk.errors.ParamsFormatError` naming the field, the point index and the byte offset.

A ``.params`` file does not carry the circuit's density bitmaps or digest: attach them with
``ProvingKey.read(path, r1cs=synth.r1cs)`` (or ``pk.with_circuit``) before proving.

    >>> import io
    >>> from cuzk.curve import G1, G2
    >>> g1, g2 = G1.generator(), G2.generator()
    >>> vk = VerifyingKey(alpha_g1=g1, beta_g1=g1, beta_g2=g2, gamma_g2=g2, delta_g1=g1, delta_g2=g2, ic=[g1])
    >>> data = vk_to_bytes(vk)
    >>> len(data), vk_from_bytes(data) == vk, vk_from_json(vk_to_json(vk)) == vk
    (964, True, True)
"""

from __future__ import annotations

import io
import json
import os
import struct

import numpy as np

from cuzk.atomic_file import atomic_write
from cuzk.bounded_json import loads_bounded
from cuzk.curve import G1, G2
from cuzk.curve.encoding import encoded_size, points_from_bytes, points_to_bytes
from cuzk.curve.validate import decode_rows, resolve_threads
from cuzk.errors import ParamsFormatError, PointEncodingError
from cuzk.formats.snarkjs_json import MAX_PUBLIC_INPUTS
from cuzk.groth16.keys import ProvingKey, VerifyingKey, check_bellperson

__all__ = [
    "check_params_layout",
    "vk_to_bytes", "vk_from_bytes", "write_params", "read_params", "vk_to_json", "vk_from_json",
    "VK_FIXED", "PARAMS_QUERIES",
]

#: The six fixed vk elements, in file order, with their groups.
VK_FIXED = (("alpha_g1", G1), ("beta_g1", G1), ("beta_g2", G2), ("gamma_g2", G2), ("delta_g1", G1), ("delta_g2", G2))
#: The proving-key queries after the vk, in file order.
PARAMS_QUERIES = (("h", G1), ("l", G1), ("a", G1), ("b_g1", G1), ("b_g2", G2))

_U32 = struct.Struct(">I")
_INFINITY_FLAG = 0x40  # zcash byte-0 flag; uncompressed infinity is 0x40 then zeros
# Points decoded per chunk: bounds the transient byte buffer (~12 MiB for G2) on huge files.
_CHUNK = 1 << 16
# vk JSON: ~1.2 KiB of fixed points, then ~200 characters per ic point (192 hex digits, quotes,
# comma, indent); the bounds leave room for any whitespace, for up to MAX_PUBLIC_INPUTS inputs
_VK_JSON_BYTES = (64 << 10) + 256 * (MAX_PUBLIC_INPUTS + 1)
_VK_JSON_ITEMS = 64 + MAX_PUBLIC_INPUTS + 1


def _usize(group) -> int:
    return encoded_size(group, compressed=False)


# ---------------------------------------------------------------------------- writing
def _check_no_infinity(field: str, group, points: np.ndarray) -> None:
    flat = points.reshape(points.shape[0], -1)
    zero = np.flatnonzero(~flat.any(axis=1))
    if zero.size:
        raise ParamsFormatError(
            f"{field}[{int(zero[0])}] is the point at infinity; the bellperson layout forbids it there "
            f"(readers reject the file). An l point at infinity means a private variable no constraint uses."
        )


def _write_points(out, field: str, group, points: np.ndarray, *, counted: bool) -> None:
    pts = np.asarray(points, dtype=np.uint64)
    if pts.shape == group.point_shape:
        pts = pts[None]
    _check_no_infinity(field, group, pts)
    if counted:
        if pts.shape[0] >= 1 << 32:
            raise ParamsFormatError(f"{field} has {pts.shape[0]} points, more than a u32 count can hold")
        out.write(_U32.pack(pts.shape[0]))
    for i in range(0, pts.shape[0], _CHUNK):
        out.write(points_to_bytes(group, pts[i : i + _CHUNK], compressed=False))


def _write_vk(out, vk: VerifyingKey) -> None:
    if not isinstance(vk, VerifyingKey):
        raise ParamsFormatError(f"expected a cuzk.groth16.VerifyingKey, got {type(vk).__name__}")
    check_bellperson(vk.curve, "the bellperson .vk layout")
    for name, group in VK_FIXED:
        _write_points(out, name, group, getattr(vk, name), counted=False)
    _write_points(out, "ic", G1, vk.ic, counted=True)


def vk_to_bytes(vk: VerifyingKey) -> bytes:
    """bellperson ``.vk`` bytes: 6 fixed points, then u32-BE count and the IC points.

    Raises:
        ParamsFormatError: a point the layout forbids (infinity).
        UnsupportedCurveError: the key is over a curve without zcash encodings (BN254).

    >>> from cuzk.curve import G1, G2
    >>> g1, g2 = G1.generator(), G2.generator()
    >>> vk = VerifyingKey(alpha_g1=g1, beta_g1=g1, beta_g2=g2, gamma_g2=g2, delta_g1=g1, delta_g2=g2, ic=[g1, g1])
    >>> len(vk_to_bytes(vk)) == 3 * 96 + 3 * 192 + 4 + 2 * 96
    True
    """
    buf = io.BytesIO()
    _write_vk(buf, vk)
    return buf.getvalue()


def write_params(pk: ProvingKey, path) -> None:
    """Write ``pk`` as a bellperson ``.params`` file, atomically (temp file in the same folder,
    then rename), so a crash never leaves a half-written file under ``path``.

    Raises:
        ParamsFormatError: the key is not of the "bellperson" H convention (its ``h`` query would
            be misread by bellperson provers), or a query holds a point at infinity.

    >>> pk.write("circuit.params")           # doctest: +SKIP
    """
    if not isinstance(pk, ProvingKey):
        raise ParamsFormatError(f"expected a cuzk.groth16.ProvingKey, got {type(pk).__name__}")
    check_bellperson(pk.curve, "the bellperson .params layout")
    if pk.convention != "bellperson":
        raise ParamsFormatError(
            f"refusing to write a {pk.convention!r}-convention proving key in the bellperson .params layout: "
            "its h query means something else there and proofs would not verify"
        )
    with atomic_write(path, fsync=True, perms=0o644) as out:  # a parameters file is public data
        _write_vk(out, pk.vk)
        for name, group in PARAMS_QUERIES:
            _write_points(out, name, group, getattr(pk, name), counted=True)


# ---------------------------------------------------------------------------- reading
class _Reader:
    """A binary stream with its position and the number of bytes left (for count checks)."""

    def __init__(self, f, what: str, threads=None):
        self.f = f
        self.what = what
        self.threads = resolve_threads(threads)
        start = f.tell()
        end = f.seek(0, io.SEEK_END)
        f.seek(start)
        self.pos = 0
        self.left = end - start

    def exact(self, n: int, field: str) -> bytes:
        if n > self.left:
            raise ParamsFormatError(
                f"{self.what} truncated in {field} at byte offset {self.pos}: need {n} bytes, {self.left} left"
            )
        data = self.f.read(n)
        if len(data) != n:  # the file shrank under us
            raise ParamsFormatError(f"{self.what} truncated in {field} at byte offset {self.pos}")
        self.pos += n
        self.left -= n
        return data

    def count(self, field: str, group) -> int:
        at = self.pos
        (n,) = _U32.unpack(self.exact(4, f"{field} count"))
        need = n * _usize(group)
        if need > self.left:
            raise ParamsFormatError(
                f"{self.what}: {field} count {n} at byte offset {at} needs {need} bytes of points, "
                f"only {self.left} left in the file"
            )
        return n

    def points(self, field: str, group, n: int, checked: bool) -> np.ndarray:
        size = _usize(group)
        out = np.empty((n,) + group.point_shape, dtype=np.uint64)
        for i in range(0, n, _CHUNK):
            k = min(_CHUNK, n - i)
            at = self.pos
            rows = np.frombuffer(self.exact(k * size, field), dtype=np.uint8).reshape(k, size)
            inf = np.flatnonzero(rows[:, 0] & _INFINITY_FLAG)
            # only the rows before the first infinity need decoding: the lowest bad index wins
            upto = int(inf[0]) if inf.size else k
            bad = decode_rows(group, rows[:upto], out[i : i + upto], compressed=False, checked=checked,
                              threads=self.threads)
            if bad is not None:
                self._raise_bad(field, group, rows, i, at, bad, checked)
            if inf.size:
                raise ParamsFormatError(
                    f"{self.what}: {field}[{i + upto}] at byte offset {at + upto * size} is the point at infinity, "
                    "which the bellperson layout forbids there"
                )
        return out

    def _raise_bad(self, field, group, rows, first, at, bad, checked):
        j, code = bad
        try:  # the one-row decode produces the encoding layer's exact reason
            points_from_bytes(group, rows[j : j + 1], compressed=False, checked=checked)
            reason = f"rejected (status {code})"
        except PointEncodingError as e:
            reason = str(e).split(": ", 1)[-1]
        raise ParamsFormatError(f"{self.what}: {field}[{first + j}] at byte offset {at + j * rows.shape[1]}: {reason}")

    def one(self, field: str, group, checked: bool) -> np.ndarray:
        return self.points(field, group, 1, checked)[0]


def _read_vk(rd: _Reader, checked: bool) -> VerifyingKey:
    fixed = {name: rd.one(name, group, checked) for name, group in VK_FIXED}
    n = rd.count("ic", G1)
    if n == 0:
        raise ParamsFormatError(f"{rd.what}: ic count is 0 at byte offset {rd.pos - 4}; it must hold ONE's point")
    return VerifyingKey(ic=rd.points("ic", G1, n, checked), **fixed)


def _open(source, what: str):
    """(binary seekable stream, whether we opened it) for a path, bytes or file object."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return io.BytesIO(bytes(source)), True
    if isinstance(source, (str, os.PathLike)):
        return open(source, "rb"), True
    if hasattr(source, "read"):
        if not (hasattr(source, "seekable") and source.seekable()):
            # the count checks need the size; an unseekable stream is buffered once
            return io.BytesIO(source.read()), True
        return source, False
    raise ParamsFormatError(f"cannot read a {what} from {type(source).__name__}; pass a path, bytes or a binary file")


def vk_from_bytes(data, *, checked: bool = True, threads=None) -> VerifyingKey:
    """Parse bellperson ``.vk`` bytes (or a binary file / path holding exactly that);
    ``checked`` and ``threads`` as for :func:`read_params`.

    Raises:
        ParamsFormatError: truncated data, a count larger than the bytes left, a bad point or
            a point at infinity (field, index and byte offset named), or trailing bytes.

    >>> vk_from_bytes(b"\\x00" * 10)
    Traceback (most recent call last):
    ...
    cuzk.errors.ParamsFormatError: verifying key truncated in alpha_g1 at byte offset 0: need 96 bytes, 10 left
    """
    f, mine = _open(data, "verifying key")
    try:
        rd = _Reader(f, "verifying key", threads)
        vk = _read_vk(rd, checked)
        if rd.left:
            raise ParamsFormatError(f"verifying key: {rd.left} trailing bytes after ic at byte offset {rd.pos}")
        return vk
    finally:
        if mine:
            f.close()


def read_params(source, *, checked: bool = True, threads=None) -> ProvingKey:
    """Read a bellperson ``.params`` file (path, bytes or seekable binary file object).

    The key comes back with ``density=None`` and ``digest=None`` (the file has neither); attach
    the circuit with ``pk.with_circuit(r1cs)`` before proving with sparse A/B queries.

    Args:
        source: path, bytes or binary file.
        checked: check every point is in the prime-order subgroup (False: trusted files only).
        threads: threads decoding and checking points (None: every core). Errors name the
            first bad point whatever the thread count.

    Raises:
        ParamsFormatError: see :func:`vk_from_bytes`; also h not of size 2^k − 1, fewer ``a``
            points than inputs, ``b_g1``/``b_g2`` of different lengths, or trailing bytes.
        InputError: ``threads`` is not a positive integer or None.

    >>> pk = read_params("circuit.params").with_circuit(synth.r1cs)    # doctest: +SKIP
    """
    f, mine = _open(source, "parameters file")
    try:
        rd = _Reader(f, "parameters file", threads)
        vk = _read_vk(rd, checked)
        queries, counts_at = {}, {}
        for name, group in PARAMS_QUERIES:
            counts_at[name] = rd.pos
            queries[name] = rd.points(name, group, rd.count(name, group), checked)
        if rd.left:
            raise ParamsFormatError(f"parameters file: {rd.left} trailing bytes after b_g2 at byte offset {rd.pos}")
    finally:
        if mine:
            f.close()
    m = queries["h"].shape[0] + 1
    if m & (m - 1):
        raise ParamsFormatError(
            f"parameters file: h count {m - 1} at byte offset {counts_at['h']} is not 2^k − 1 (domain size {m})"
        )
    if queries["a"].shape[0] < vk.ic.shape[0]:
        raise ParamsFormatError(
            f"parameters file: a count {queries['a'].shape[0]} at byte offset {counts_at['a']} is smaller than the "
            f"{vk.ic.shape[0]} inputs (every input has an A point)"
        )
    if queries["b_g1"].shape[0] != queries["b_g2"].shape[0]:
        raise ParamsFormatError(
            f"parameters file: b_g2 count {queries['b_g2'].shape[0]} at byte offset {counts_at['b_g2']} differs from "
            f"b_g1 count {queries['b_g1'].shape[0]}"
        )
    return ProvingKey(vk=vk, convention="bellperson", **queries)


# ---------------------------------------------------------------------------- JSON
def vk_to_json(vk: VerifyingKey) -> str:
    """Human-readable vk: each point as the hex of its uncompressed zcash encoding.

    >>> from cuzk.curve import G1, G2
    >>> g1, g2 = G1.generator(), G2.generator()
    >>> vk = VerifyingKey(alpha_g1=g1, beta_g1=g1, beta_g2=g2, gamma_g2=g2, delta_g1=g1, delta_g2=g2, ic=[g1])
    >>> sorted(json.loads(vk_to_json(vk)))[:3]
    ['alpha_g1', 'beta_g1', 'beta_g2']
    """
    data = vk_to_bytes(vk)  # one encoder, so JSON and binary cannot disagree
    doc, off = {"protocol": "groth16", "curve": "bls12-381", "encoding": "zcash-uncompressed"}, 0
    for name, group in VK_FIXED:
        doc[name] = data[off : off + _usize(group)].hex()
        off += _usize(group)
    off += 4
    doc["ic"] = [data[off + i * 96 : off + (i + 1) * 96].hex() for i in range(vk.ic.shape[0])]
    return json.dumps(doc, indent=1)


def vk_from_json(text: str, *, checked: bool = True) -> VerifyingKey:
    """Inverse of :func:`vk_to_json` (same checks as :func:`vk_from_bytes`).

    Raises:
        ParamsFormatError: not JSON (nesting deeper than 64 levels, or larger than a vk for
            ``MAX_PUBLIC_INPUTS`` public inputs can be, included), a missing or non-hex field,
            or a bad point.
    """
    doc = loads_bounded(text, "verifying-key JSON", ParamsFormatError, max_bytes=_VK_JSON_BYTES,
                        max_items=_VK_JSON_ITEMS)
    try:
        if not isinstance(doc.get("ic"), list):
            raise TypeError("ic must be a list of hex strings")
        parts = [bytes.fromhex(doc[name]) for name, _ in VK_FIXED]
        ic = [bytes.fromhex(x) for x in doc["ic"]]
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ParamsFormatError(f"verifying-key JSON must hold hex fields {[n for n, _ in VK_FIXED]} and an ic list: {e!r}") from e
    for (name, group), raw in zip(VK_FIXED, parts):
        if len(raw) != _usize(group):
            raise ParamsFormatError(f"verifying-key JSON: {name} must be {_usize(group)} bytes of hex, got {len(raw)}")
    for i, raw in enumerate(ic):
        if len(raw) != _usize(G1):
            raise ParamsFormatError(f"verifying-key JSON: ic[{i}] must be {_usize(G1)} bytes of hex, got {len(raw)}")
    return vk_from_bytes(b"".join(parts) + _U32.pack(len(ic)) + b"".join(ic), checked=checked)


def check_params_layout(f, where: str) -> None:
    """Check a .params file's length prefixes against its size without reading its points.

    Lets a caller refuse a file that is not a bellperson parameter file before hashing it.

    Raises:
        ParamsFormatError: a count that needs more bytes than the file has, or trailing bytes.
    """
    from cuzk.errors import ParamsFormatError

    size = f.seek(0, io.SEEK_END)
    pos = sum(encoded_size(g, compressed=False) for _, g in VK_FIXED)
    for field, group in (("ic", G1), *PARAMS_QUERIES):
        f.seek(pos)
        raw = f.read(4)
        if len(raw) < 4:
            raise ParamsFormatError(f"{where}: truncated before the {field} count at byte offset {pos} "
                                    f"(the file has {size} bytes)")
        n = int.from_bytes(raw, "big")
        if field == "ic" and n == 0:
            raise ParamsFormatError(f"{where}: ic count is 0 at byte offset {pos}; it must hold ONE's point")
        need = n * encoded_size(group, compressed=False)
        if pos + 4 + need > size:
            raise ParamsFormatError(f"{where}: {field} count {n} at byte offset {pos} needs {need} bytes of points, "
                                    f"only {size - pos - 4} left in the file")
        pos += 4 + need
    if pos != size:
        raise ParamsFormatError(f"{where}: {size - pos} trailing bytes after b_g2 at byte offset {pos}")
