"""bellperson's byte layout of Groth16 keys: the ``.vk`` and ``.params`` files (DESIGN §6).

Layout (every point uncompressed zcash encoding, counts u32 big-endian)::

    vk:      alpha_g1 beta_g1 beta_g2 gamma_g2 delta_g1 delta_g2 | u32 n + ic[n]
    params:  vk | u32 + h[] | u32 + l[] | u32 + a[] | u32 + b_g1[] | u32 + b_g2[]

This module writes a key's points and reads them back as plain arrays; it takes keys by their
attributes and builds none, so the key classes (:mod:`cuzk.groth16.keys`) can offer
``to_bytes``/``read``/``write`` through it while :mod:`cuzk.formats.bellperson`, the format's
public module, builds on both. The points are of the key's curve; only a curve with the zcash
encoding has the layout (:func:`check_bellperson`).

Reading streams a file section by section and decodes points in bounded chunks, each split over
``threads`` threads (default: every core) running the ``nogil`` Numba decoder
(:mod:`cuzk.curve.validate`); every count is compared with the bytes left before anything is
allocated, so a corrupt count cannot make the reader allocate gigabytes. Like bellperson's
``Parameters::read``, a point at infinity is rejected in ``ic``, ``h``, ``l``, ``a``, ``b_g1``
and ``b_g2`` (bellperson stores those queries without infinities); cuzk also rejects it in the
six fixed vk elements, where no valid setup produces it. ``checked=True`` checks every point is
on the curve and in the prime-order subgroup; ``checked=False`` keeps the cheap on-curve check
and skips the subgroup check, for trusted files. Every problem raises
:class:`cuzk.errors.ParamsFormatError` naming the field, the point index and the byte offset.

    >>> [name for name, _ in vk_fixed()], [name for name, _ in params_queries()]
    (['alpha_g1', 'beta_g1', 'beta_g2', 'gamma_g2', 'delta_g1', 'delta_g2'], ['h', 'l', 'a', 'b_g1', 'b_g2'])
"""

from __future__ import annotations

import io
import os
import struct

import numpy as np

from cuzk import curves
from cuzk.atomic_file import atomic_write
from cuzk.curve.encoding import encoded_size, points_from_bytes, points_to_bytes
from cuzk.curve.validate import decode_rows, resolve_threads
from cuzk.errors import ParamsFormatError, PointEncodingError, UnsupportedCurveError

__all__ = ["check_bellperson", "vk_fixed", "params_queries", "vk_to_bytes", "write_params", "read_vk", "read_params"]

# (name, group) in file order, the group as 1 (G1) or 2 (G2) of the key's curve: the groups are
# looked up when a key is written or read, so importing the key classes loads no point kernels
_VK_FIXED = (("alpha_g1", 1), ("beta_g1", 1), ("beta_g2", 2), ("gamma_g2", 2), ("delta_g1", 1), ("delta_g2", 2))
_PARAMS_QUERIES = (("h", 1), ("l", 1), ("a", 1), ("b_g1", 1), ("b_g2", 2))

_U32 = struct.Struct(">I")
_INFINITY_FLAG = 0x40  # zcash byte-0 flag; uncompressed infinity is 0x40 then zeros
# Points decoded per chunk: bounds the transient byte buffer (~12 MiB for G2) on huge files.
_CHUNK = 1 << 16


def check_bellperson(curve: str, what: str) -> None:
    """Refuse a bellperson format (zcash point encodings) for a curve that has none.

    >>> check_bellperson("bls12_381", "a .vk file")
    >>> check_bellperson("bn254", "a .vk file")
    Traceback (most recent call last):
    cuzk.errors.UnsupportedCurveError: a .vk file is a bellperson format (zcash point encoding, BLS12-381); this key/proof is over BN254, which has none: use the snarkjs formats (cuzk.formats.snarkjs, cuzk.formats.snarkjs_json)
    """
    spec = curves.resolve(curves.canonical(curve))
    if spec.point_encoding != "zcash":
        having = ", ".join(s.title for s in curves.CURVES.values() if s.point_encoding == "zcash")
        raise UnsupportedCurveError(
            f"{what} is a bellperson format (zcash point encoding, {having}); this key/proof is over {spec.title}, "
            "which has none: use the snarkjs formats (cuzk.formats.snarkjs, cuzk.formats.snarkjs_json)"
        )


def _with_groups(fields, curve: str | None) -> tuple:
    bundle = curves.get(curves.canonical(curve))
    return tuple((name, bundle.G1 if g == 1 else bundle.G2) for name, g in fields)


def vk_fixed(curve: str | None = None) -> tuple:
    """The six fixed vk elements, in file order, with their groups of ``curve`` (default
    :data:`cuzk.curves.DEFAULT`)."""
    return _with_groups(_VK_FIXED, curve)


def params_queries(curve: str | None = None) -> tuple:
    """The proving-key queries after the vk, in file order, with their groups of ``curve``."""
    return _with_groups(_PARAMS_QUERIES, curve)


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


def _write_vk(out, vk) -> None:
    check_bellperson(vk.curve, "the bellperson .vk layout")
    for name, group in vk_fixed(vk.curve):
        _write_points(out, name, group, getattr(vk, name), counted=False)
    _write_points(out, "ic", curves.get(vk.curve).G1, vk.ic, counted=True)


def vk_to_bytes(vk) -> bytes:
    """bellperson ``.vk`` bytes of a :class:`~cuzk.groth16.VerifyingKey`: 6 fixed points, then
    u32-BE count and the IC points.

    Raises:
        ParamsFormatError: a point the layout forbids (infinity).
        UnsupportedCurveError: the key is over a curve without zcash encodings (BN254).
    """
    buf = io.BytesIO()
    _write_vk(buf, vk)
    return buf.getvalue()


def write_params(pk, path) -> None:
    """Write a :class:`~cuzk.groth16.ProvingKey` as a bellperson ``.params`` file, atomically
    (temp file in the same folder, then rename), so a crash never leaves a half-written file
    under ``path``.

    Raises:
        ParamsFormatError: the key is not of the "bellperson" H convention (its ``h`` query would
            be misread by bellperson provers), or a query holds a point at infinity.
        UnsupportedCurveError: the key is over a curve without zcash encodings (BN254).
    """
    check_bellperson(pk.curve, "the bellperson .params layout")
    if pk.convention != "bellperson":
        raise ParamsFormatError(
            f"refusing to write a {pk.convention!r}-convention proving key in the bellperson .params layout: "
            "its h query means something else there and proofs would not verify"
        )
    with atomic_write(path, fsync=True, perms=0o644) as out:  # a parameters file is public data
        _write_vk(out, pk.vk)
        for name, group in params_queries(pk.curve):
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


def _read_vk(rd: _Reader, checked: bool) -> dict:
    fixed = {name: rd.one(name, group, checked) for name, group in vk_fixed()}
    g1 = curves.get(curves.DEFAULT).G1
    n = rd.count("ic", g1)
    if n == 0:
        raise ParamsFormatError(f"{rd.what}: ic count is 0 at byte offset {rd.pos - 4}; it must hold ONE's point")
    return {"ic": rd.points("ic", g1, n, checked), **fixed}


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


def read_vk(data, *, checked: bool = True, threads=None) -> dict:
    """The fields of a :class:`~cuzk.groth16.VerifyingKey` from bellperson ``.vk`` bytes (or a
    binary file / path holding exactly that), over the default curve (the layout names none);
    ``checked`` and ``threads`` as for :func:`read_params`.

    Raises:
        ParamsFormatError: truncated data, a count larger than the bytes left, a bad point or
            a point at infinity (field, index and byte offset named), or trailing bytes.

    >>> read_vk(b"\\x00" * 10)
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


def read_params(source, *, checked: bool = True, threads=None) -> tuple[dict, dict]:
    """``(vk fields, queries)`` of a bellperson ``.params`` file (path, bytes or seekable binary
    file object): the keyword arguments of a :class:`~cuzk.groth16.VerifyingKey` and of its
    :class:`~cuzk.groth16.ProvingKey`'s five queries.

    Args:
        source: path, bytes or binary file.
        checked: check every point is in the prime-order subgroup (False: trusted files only).
        threads: threads decoding and checking points (None: every core). Errors name the
            first bad point whatever the thread count.

    Raises:
        ParamsFormatError: see :func:`read_vk`; also h not of size 2^k − 1, fewer ``a`` points
            than inputs, ``b_g1``/``b_g2`` of different lengths, or trailing bytes.
        InputError: ``threads`` is not a positive integer or None.
    """
    f, mine = _open(source, "parameters file")
    try:
        rd = _Reader(f, "parameters file", threads)
        vk = _read_vk(rd, checked)
        queries, counts_at = {}, {}
        for name, group in params_queries():
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
    if queries["a"].shape[0] < vk["ic"].shape[0]:
        raise ParamsFormatError(
            f"parameters file: a count {queries['a'].shape[0]} at byte offset {counts_at['a']} is smaller than the "
            f"{vk['ic'].shape[0]} inputs (every input has an A point)"
        )
    if queries["b_g1"].shape[0] != queries["b_g2"].shape[0]:
        raise ParamsFormatError(
            f"parameters file: b_g2 count {queries['b_g2'].shape[0]} at byte offset {counts_at['b_g2']} differs from "
            f"b_g1 count {queries['b_g1'].shape[0]}"
        )
    return vk, queries
