"""The PCE file: a compiled circuit (R1CS + witness program) on disk, without pickle.

Layout (little-endian)::

    b"CUZKPCE\\0"  u32 version (=2)  u32 0  u64 header_len
    header: UTF-8 JSON {counts, digest, curve, inputs, names, arrays: [[name, dtype, shape, offset, nbytes]...]}
        (names: a list, or for circuits with cs.repeat blocks the compact segments of
        cuzk/synth/rownames.py, one entry per template rather than per row)
    raw array bytes (offsets relative to the end of the header): per matrix indptr, indices, a
        table of distinct coefficients and one int32 table index per nonzero; then the witness
        program (code, consts, var_slot)
    sha256 of everything above (32 bytes)

Version 2 added ``curve`` (a canonical ``cuzk.curves`` name); version 1 files, written before
curves were data, have none and load as BLS12-381. Array widths follow the curve's Fr limbs.

Written to a temp file and renamed. Loading checks the checksum, every count and offset, the
CSR structure, the witness program (op by op) and recomputes the digest; any failure raises
:class:`cuzk.errors.PceFormatError`.

    >>> import tempfile, os
    >>> from cuzk.circuit import Circuit
    >>> from cuzk.synth import Synthesizer
    >>> class Sq(Circuit):
    ...     def define(self, cs, x, y):
    ...         cs.assert_equal(cs.private(x) * cs.private(x), cs.public(y))
    >>> s = Synthesizer(Sq()); path = os.path.join(tempfile.mkdtemp(), "sq.pce")
    >>> s.save(path); Synthesizer.load(path).r1cs.digest == s.r1cs.digest
    True
"""

from __future__ import annotations

import hashlib
import json
import os
import struct

import numpy as np

from cuzk.atomic_file import atomic_write
from cuzk import curves
from cuzk.errors import PceFormatError, R1csFormatError, UnsupportedCurveError
from cuzk.field.conversions import is_canonical
from cuzk.synth import kernels as K
from cuzk.synth.program import WitnessProgram
from cuzk.synth.r1cs import R1CS, CsrMatrix
from cuzk.synth.rownames import decode_names, encode_names

__all__ = ["save_pce", "load_pce", "PCE_MAGIC", "PCE_VERSION"]

PCE_MAGIC = b"CUZKPCE\0"
PCE_VERSION = 2
_READS = (1, 2)  # version 1: no curve in the header, BLS12-381
_PRE = struct.Struct("<8sIIQ")
_DTYPES = {"<i8": np.int64, "<i4": np.int32, "<u8": np.uint64}
# the dtype save_pce writes for each array: another one (uint64 row pointers, say) would slip
# past the signed range checks below
_EXPECTED = {**{f"{m}.{k}": dt for m in "abc" for k, dt in (("indptr", "<i8"), ("indices", "<i4"),
                                                            ("table", "<u8"), ("index", "<i4"))},
             "code": "<i8", "consts": "<u8", "var_slot": "<i8"}


def save_pce(path, r1cs: R1CS, program: WitnessProgram) -> None:
    """Write ``r1cs`` and ``program`` to ``path`` atomically."""
    arrays = {}
    for label, m in (("a", r1cs.a), ("b", r1cs.b), ("c", r1cs.c)):
        arrays[f"{label}.indptr"] = np.ascontiguousarray(m.indptr, "<i8")
        arrays[f"{label}.indices"] = np.ascontiguousarray(m.indices, "<i4")
        table, index = m.factored()
        arrays[f"{label}.table"] = np.ascontiguousarray(table, "<u8")
        arrays[f"{label}.index"] = np.ascontiguousarray(index, "<i4")
    arrays["code"] = np.ascontiguousarray(program.code, "<i8")
    arrays["consts"] = np.ascontiguousarray(program.consts, "<u8")
    arrays["var_slot"] = np.ascontiguousarray(program.var_slot, "<i8")
    table, off = [], 0
    for name, arr in arrays.items():
        table.append([name, arr.dtype.str, list(arr.shape), off, arr.nbytes])
        off += arr.nbytes
    header = json.dumps({
        "n_public": r1cs.n_public, "n_private": r1cs.n_private, "n_constraints": r1cs.n_constraints,
        "n_slots": program.n_slots, "digest": r1cs.digest, "curve": r1cs.curve,
        "inputs": [[n, list(s)] for n, s in program.inputs],
        "names": encode_names(r1cs.names), "arrays": table,
    }).encode()
    h = hashlib.sha256()
    with atomic_write(path) as f:
        for chunk in (_PRE.pack(PCE_MAGIC, PCE_VERSION, 0, len(header)), header, *(a.tobytes() for a in arrays.values())):
            h.update(chunk)
            f.write(chunk)
        f.write(h.digest())


# Header ranges. Variables and nonzeros are indexed with int32 in the CSR arrays and the
# witness kernels, so counts past 2^31 cannot be a file this cuzk wrote; a dimension past 2^40
# elements is already terabytes.
_MAX_INDEX = (1 << 31) - 1
_MAX_DIM = 1 << 40


def _int(hdr: dict, key: str, path, lo: int, hi: int) -> int:
    v = hdr[key]
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise PceFormatError(f"{path}: header field {key} = {v!r} is not an integer in [{lo}, {hi}]")
    return v


def _dims(v, path, what: str, lo: int) -> tuple:
    if not isinstance(v, list) or any(isinstance(d, bool) or not isinstance(d, int) or not lo <= d <= _MAX_DIM for d in v):
        raise PceFormatError(f"{path}: {what}: shape {v!r} is not a list of integers in [{lo}, 2^40]")
    return tuple(v)


def _prod(dims) -> int:
    n = 1
    for d in dims:
        n *= d  # Python ints: np.prod would wrap around silently at 2^63
    return n


def _array_table(hdr: dict, path, body: int, end: int) -> list:
    """The validated ``[name, dtype, shape, offset, nbytes]`` rows; every array inside the file."""
    table = hdr["arrays"]
    if not isinstance(table, list):
        raise PceFormatError(f"{path}: header field arrays is not a list")
    out = []
    for row in table:
        if not isinstance(row, list) or len(row) != 5 or not isinstance(row[0], str):
            raise PceFormatError(f"{path}: array table entry {row!r:.80} is not [name, dtype, shape, offset, nbytes]")
        name, dt, shape, off, nbytes = row
        if name not in _EXPECTED or dt != _EXPECTED[name]:
            raise PceFormatError(f"{path}: array {name[:40]!r} of dtype {dt!r:.40} is not one this format holds")
        shape = _dims(shape, path, f"array {name}", 0)
        for label, v in (("offset", off), ("size", nbytes)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise PceFormatError(f"{path}: array {name} has {label} {v!r:.40}, not a non-negative integer")
        if body + off + nbytes > end:
            raise PceFormatError(f"{path}: array {name} lies outside the file")
        count = _prod(shape)
        if count * np.dtype(dt).itemsize != nbytes:
            raise PceFormatError(f"{path}: array {name}: shape {list(shape)} does not match {nbytes} bytes")
        out.append((name, dt, shape, off, count))
    return out


def _read_checked(path) -> tuple[bytes, int]:
    """The whole file once its fixed prefix says it is a PCE file of our version; ``(bytes, header length)``."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        pre = f.read(_PRE.size)
        if len(pre) < _PRE.size or size < _PRE.size + 32:
            raise PceFormatError(f"{path}: truncated ({size} bytes) — not a PCE file")
        magic, version, _, hlen = _PRE.unpack(pre)
        if magic != PCE_MAGIC:
            raise PceFormatError(f"{path}: bad magic {magic!r}, not a PCE file")
        if version not in _READS:
            raise PceFormatError(f"{path}: PCE version {version}, this cuzk reads versions {list(_READS)}")
        if _PRE.size + hlen > size - 32:
            raise PceFormatError(f"{path}: header length {hlen} exceeds the file")
        f.seek(0)
        buf = f.read()
    if len(buf) != size:  # the file changed under us
        raise PceFormatError(f"{path}: truncated while being read ({len(buf)} of {size} bytes)")
    return buf, hlen


def _curve(hdr: dict, version: int, path) -> str:
    """The header's curve (version 2) or BLS12-381 (version 1, from before curves were data)."""
    if version == 1:
        return curves.BLS12_381.name
    name = hdr["curve"]
    try:
        return curves.canonical(name) if isinstance(name, str) else curves.resolve(name).name
    except UnsupportedCurveError as e:
        raise PceFormatError(f"{path}: header field curve: {e}") from None


def load_pce(path) -> tuple[R1CS, WitnessProgram]:
    """Read a PCE file; see the module docstring for the checks.

    The fixed prefix (magic, version, header length) is checked before the rest is read; every
    header field's type and range is checked before it sizes anything.

    Raises:
        PceFormatError: any malformed, truncated or corrupted content.
    """
    buf, hlen = _read_checked(path)
    version = _PRE.unpack_from(buf)[1]
    if hashlib.sha256(memoryview(buf)[:-32]).digest() != buf[-32:]:
        raise PceFormatError(f"{path}: checksum mismatch (truncated or corrupted)")
    body = _PRE.size + hlen
    try:
        hdr = json.loads(buf[_PRE.size:body].decode())
    except (ValueError, RecursionError) as e:  # bad JSON or UTF-8 (ValueError both)
        raise PceFormatError(f"{path}: header is not valid JSON ({type(e).__name__}: {str(e)[:200]})") from None
    try:
        if not isinstance(hdr, dict):
            raise PceFormatError(f"{path}: header is not a JSON object")
        arrays = {}
        for name, dt, shape, off, count in _array_table(hdr, path, body, len(buf) - 32):
            a = np.frombuffer(buf, dtype=dt, count=count, offset=body + off).reshape(shape)
            arrays[name] = a.astype(_DTYPES[dt])  # native byte order, owned, writable copy
        n_pub = _int(hdr, "n_public", path, 0, _MAX_INDEX)
        n_prv = _int(hdr, "n_private", path, 0, _MAX_INDEX)
        n_cons = _int(hdr, "n_constraints", path, 0, _MAX_INDEX)
        n_slots = _int(hdr, "n_slots", path, 1, _MAX_DIM)
        curve = _curve(hdr, version, path)
        limbs = curves.resolve(curve).fr.limbs
        if 1 + n_pub + n_prv > _MAX_INDEX:
            raise PceFormatError(f"{path}: {n_pub} public + {n_prv} private variables exceed 2^31")
        mats = []
        for label in "abc":
            p, cols = arrays[f"{label}.indptr"], arrays[f"{label}.indices"]
            table, index = arrays[f"{label}.table"], arrays[f"{label}.index"]
            if (p.ndim != 1 or p.shape[0] != n_cons + 1 or p[0] != 0 or p[-1] != cols.shape[0]
                    or np.any(np.diff(p) < 0) or cols.ndim != 1 or index.shape != cols.shape or table.ndim != 2
                    or table.shape[1] != limbs or (index.size and (index.min() < 0 or index.max() >= table.shape[0]))):
                raise PceFormatError(f"{path}: malformed CSR matrix {label.upper()}")
            mats.append(CsrMatrix(p, cols, coeff_table=table, coeff_index=index))  # data gathered on first use
        try:
            names = decode_names(hdr["names"])
        except ValueError as e:
            raise PceFormatError(f"{path}: names: {e}") from None
        if len(names) != n_cons:
            raise PceFormatError(f"{path}: names must be a list of {n_cons} constraint names (strings or null)")
        r1cs = R1CS.build(n_pub, n_prv, *mats, names=names, curve=curve)
        if r1cs.digest != hdr["digest"]:
            raise PceFormatError(f"{path}: circuit digest does not match the stored matrices")
        spec = hdr["inputs"]
        if not isinstance(spec, list) or any(not isinstance(e, list) or len(e) != 2 or not isinstance(e[0], str) for e in spec):
            raise PceFormatError(f"{path}: inputs must be a list of [name, shape] pairs")
        inputs = tuple((n, _dims(s, path, f"input {n}", 1)) for n, s in spec)
        if sum(_prod(s) for _, s in inputs) > _MAX_INDEX:
            raise PceFormatError(f"{path}: the inputs' shapes hold more than 2^31 values")
        prog = WitnessProgram(
            code=arrays["code"], consts=arrays["consts"], n_slots=n_slots,
            var_slot=arrays["var_slot"], inputs=inputs,
        )
    except PceFormatError:
        raise
    except KeyError as e:
        raise PceFormatError(f"{path}: the header or array table lacks {e}") from e
    except R1csFormatError as e:
        raise PceFormatError(f"{path}: malformed matrices ({e})") from e
    vs = prog.var_slot
    if (prog.code.ndim != 1 or prog.consts.ndim != 2 or prog.consts.shape[1] != limbs or prog.consts.shape[0] < 1
            or vs.shape != (r1cs.n_vars,) or prog.n_slots < 1 or (vs.size and (vs.min() < 0 or vs.max() >= prog.n_slots))):
        raise PceFormatError(f"{path}: witness program arrays have inconsistent shapes")
    # Every register but 0 is written by an op, at most 256 (BITS, 4 words) per op: a larger
    # n_slots is corrupt and would only surface as a huge allocation in every synthesis.
    if prog.n_slots > 1 + 64 * prog.code.shape[0]:
        raise PceFormatError(f"{path}: {prog.n_slots} registers for a {prog.code.shape[0]}-word witness program")
    # Montgomery limbs >= r would be computed with silently (wrong witnesses, not an error)
    for label, arr in (("consts", prog.consts), *((f"{m} coefficients", getattr(r1cs, m).coeff_table) for m in "abc")):
        if not is_canonical(arr, r1cs.field.params).all():
            raise PceFormatError(f"{path}: {label} hold a value >= r (not a canonical {curves.resolve(curve).title} Fr element)")
    bad = K.validate_program(prog.code, prog.consts.shape[0], prog.n_inputs, prog.n_slots)
    if bad >= 0:
        raise PceFormatError(f"{path}: witness program op at word {bad} is malformed")
    return r1cs, prog
