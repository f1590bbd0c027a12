"""The PCE file: a compiled circuit (R1CS + witness program) on disk, without pickle.

Layout (little-endian)::

    b"CUZKPCE\\0"  u32 version (=1)  u32 0  u64 header_len
    header: UTF-8 JSON {counts, digest, inputs, names, arrays: [[name, dtype, shape, offset, nbytes]...]}
    raw array bytes (offsets relative to the end of the header): per matrix indptr, indices, a
        table of distinct coefficients and one int32 table index per nonzero; then the witness
        program (code, consts, var_slot)
    sha256 of everything above (32 bytes)

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

from cuzk.errors import PceFormatError, R1csFormatError
from cuzk.field import FR
from cuzk.field.conversions import is_canonical
from cuzk.synth import kernels as K
from cuzk.synth.program import WitnessProgram
from cuzk.synth.r1cs import R1CS, CsrMatrix

__all__ = ["save_pce", "load_pce", "PCE_MAGIC", "PCE_VERSION"]

PCE_MAGIC = b"CUZKPCE\0"
PCE_VERSION = 1
_PRE = struct.Struct("<8sIIQ")
_DTYPES = {"<i8": np.int64, "<i4": np.int32, "<u8": np.uint64}


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
        "n_slots": program.n_slots, "digest": r1cs.digest,
        "inputs": [[n, list(s)] for n, s in program.inputs],
        "names": list(r1cs.names), "arrays": table,
    }).encode()
    h = hashlib.sha256()
    tmp = f"{os.fspath(path)}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        for chunk in (_PRE.pack(PCE_MAGIC, PCE_VERSION, 0, len(header)), header, *(a.tobytes() for a in arrays.values())):
            h.update(chunk)
            f.write(chunk)
        f.write(h.digest())
    os.replace(tmp, path)


def load_pce(path) -> tuple[R1CS, WitnessProgram]:
    """Read a PCE file; see the module docstring for the checks."""
    with open(path, "rb") as f:
        buf = f.read()
    if len(buf) < _PRE.size + 32:
        raise PceFormatError(f"{path}: truncated ({len(buf)} bytes) — not a PCE file")
    magic, version, _, hlen = _PRE.unpack_from(buf)
    if magic != PCE_MAGIC:
        raise PceFormatError(f"{path}: bad magic {magic!r}, not a PCE file")
    if version != PCE_VERSION:
        raise PceFormatError(f"{path}: PCE version {version}, this cuzk reads version {PCE_VERSION}")
    if hashlib.sha256(buf[:-32]).digest() != buf[-32:]:
        raise PceFormatError(f"{path}: checksum mismatch (truncated or corrupted)")
    body = _PRE.size + hlen
    if body > len(buf) - 32:
        raise PceFormatError(f"{path}: header length {hlen} exceeds the file")
    try:
        hdr = json.loads(buf[_PRE.size:body].decode())
        arrays = {}
        for name, dt, shape, off, nbytes in hdr["arrays"]:
            if dt not in _DTYPES or off < 0 or body + off + nbytes > len(buf) - 32:
                raise PceFormatError(f"{path}: array {name} has a bad dtype or lies outside the file")
            count = int(np.prod(shape, dtype=np.int64))
            if count * np.dtype(dt).itemsize != nbytes:
                raise PceFormatError(f"{path}: array {name}: shape {shape} does not match {nbytes} bytes")
            a = np.frombuffer(buf, dtype=dt, count=count, offset=body + off).reshape(shape)
            arrays[name] = a.astype(_DTYPES[dt])  # native byte order, owned, writable copy
        n_pub, n_prv, n_cons = int(hdr["n_public"]), int(hdr["n_private"]), int(hdr["n_constraints"])
        mats = []
        for label in "abc":
            p, cols = arrays[f"{label}.indptr"], arrays[f"{label}.indices"]
            table, index = arrays[f"{label}.table"], arrays[f"{label}.index"]
            if (p.ndim != 1 or p.shape[0] != n_cons + 1 or p[0] != 0 or p[-1] != cols.shape[0]
                    or np.any(np.diff(p) < 0) or index.shape != cols.shape or table.ndim != 2
                    or table.shape[1] != 4 or (index.size and (index.min() < 0 or index.max() >= table.shape[0]))):
                raise PceFormatError(f"{path}: malformed CSR matrix {label.upper()}")
            mats.append(CsrMatrix(p, cols, np.ascontiguousarray(table[index]), table, index))
        names = [n if n is None else str(n) for n in hdr["names"]]
        if len(names) != n_cons:
            raise PceFormatError(f"{path}: {len(names)} constraint names for {n_cons} constraints")
        r1cs = R1CS.build(n_pub, n_prv, *mats, names=names)
        if r1cs.digest != hdr["digest"]:
            raise PceFormatError(f"{path}: circuit digest does not match the stored matrices")
        inputs = tuple((str(n), tuple(int(d) for d in s)) for n, s in hdr["inputs"])
        prog = WitnessProgram(
            code=arrays["code"], consts=arrays["consts"], n_slots=int(hdr["n_slots"]),
            var_slot=arrays["var_slot"], inputs=inputs,
        )
    except PceFormatError:
        raise
    except (KeyError, TypeError, ValueError, UnicodeDecodeError, R1csFormatError) as e:
        raise PceFormatError(f"{path}: malformed header or arrays ({e})") from e
    vs = prog.var_slot
    if (prog.code.ndim != 1 or prog.consts.ndim != 2 or prog.consts.shape[1] != 4 or prog.consts.shape[0] < 1
            or vs.shape != (r1cs.n_vars,) or prog.n_slots < 1 or (vs.size and (vs.min() < 0 or vs.max() >= prog.n_slots))):
        raise PceFormatError(f"{path}: witness program arrays have inconsistent shapes")
    # Every register but 0 is written by an op, at most 256 (BITS, 4 words) per op: a larger
    # n_slots is corrupt and would only surface as a huge allocation in every synthesis.
    if prog.n_slots > 1 + 64 * prog.code.shape[0]:
        raise PceFormatError(f"{path}: {prog.n_slots} registers for a {prog.code.shape[0]}-word witness program")
    # Montgomery limbs >= r would be computed with silently (wrong witnesses, not an error)
    for label, arr in (("consts", prog.consts), *((f"{m} coefficients", getattr(r1cs, m).coeff_table) for m in "abc")):
        if not is_canonical(arr, FR).all():
            raise PceFormatError(f"{path}: {label} hold a value >= r (not a canonical Fr element)")
    bad = K.validate_program(prog.code, prog.consts.shape[0], prog.n_inputs, prog.n_slots)
    if bad >= 0:
        raise PceFormatError(f"{path}: witness program op at word {bad} is malformed")
    return r1cs, prog
