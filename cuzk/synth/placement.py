"""Compiling a traced constraint system into a PCE: traced rows as recorded, and every stamped
block (``cs.repeat``) as ``k`` copies of its template placed with numpy, instance ranges at a
time (docs/circuits.md, "Repeated sub-circuits"; DESIGN §8).

Steps: each template becomes a :class:`Fragment` once (its rows, witness ops and names in its own
numbering, recursively for nested blocks); the circuit's own fragment is assembled by copying
traced runs and placing blocks between them (variable positions and registers offset per
instance, parameters looked up in the block's binding arrays); :func:`finish` renumbers the
variables ``[ONE, public..., private...]``, sorts each row's columns (as a hand trace's CSR is
sorted) and turns coefficient ids into Montgomery data.

    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem(); r = cs.public(4)
    >>> _ = cs.repeat(lambda cs, x, r: cs.assert_equal(x * x, r), [(cs.private(2), r), (cs.private(-2), r)])
    >>> r1cs, prog = compile_system(cs, ())
    >>> r1cs.n_constraints, r1cs.n_public, r1cs.n_private
    (4, 1, 4)
"""

from __future__ import annotations

import itertools
import mmap
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import attrs
import numpy as np

from cuzk.circuit.blocks import index_dtype
from cuzk.circuit.stamp import keys_to_positions, var_table
from cuzk.errors import CircuitError
from cuzk import curves
from cuzk.synth.progress import Progress
from cuzk.synth.r1cs import R1CS, CsrMatrix, PendingDigest, R1csHasher
from cuzk.synth.rownames import RowNames, StampedNames
from cuzk.synth.stamp_kernels import ROLE_CONST, ROLE_INPUT, mark_roles, sort_rows, stamp_code, stamp_cols, stamp_words
from cuzk.synth.witness_program import WitnessProgram

__all__ = ["Fragment", "compile_system", "code_roles", "pce_sizes", "populated"]

_CHUNK = 1 << 22  # words per range of instances placed at once: bounds the temporaries


@attrs.frozen(eq=False)
class Fragment:
    """A constraint system as flat arrays in its own numbering: variables by allocation position
    (0 = ONE), its own registers; coefficient and constant ids index the compile's shared tables."""

    indptr: tuple  # per matrix A, B, C: int64 (rows + 1,) row pointers
    cols: tuple  # per matrix: int32 (nnz,) variable positions, in recording order within a row
    coef: tuple  # per matrix: int32 (nnz,) coefficient ids
    code: np.ndarray  # int64 witness ops
    roles: np.ndarray | None  # int8 per code word (ROLE_*), kept for templates only
    names: RowNames


_POPULATE_BYTES = 64 << 20  # arrays past this are faulted in by the kernel in one call


def populated(n: int, dtype) -> np.ndarray:
    """``np.empty(n, dtype)`` whose pages the kernel has already faulted in (``MAP_POPULATE``).

    The compile writes each output array once, page by page; on VMs that hand memory back to
    the host, every first touch of a 4 KiB page is a trap (measured on the 2-core dev VM:
    0.30 GB/s touched page by page, 1.44 GB/s populated in one call; docs/perf/history.md).
    """
    dtype = np.dtype(dtype)
    size = n * dtype.itemsize
    flag = getattr(mmap, "MAP_POPULATE", 0)
    if size < _POPULATE_BYTES or not flag:
        return np.empty(n, dtype=dtype)
    buf = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | flag)
    return np.frombuffer(buf, dtype=dtype, count=n)  # the array keeps the mapping alive


def code_roles(code) -> np.ndarray:
    """What each word of a witness program is: an opcode or count (literal), a register, a
    constant id or an input index (see cuzk/circuit/ops.py for the layout)."""
    code = np.ascontiguousarray(code, dtype=np.int64)
    roles = np.zeros(code.shape[0], dtype=np.int8)
    bad = mark_roles(code, roles)
    if bad >= 0:
        raise CircuitError(f"unknown or truncated witness op {int(code[bad])} at word {bad}")
    return roles


class _Tables:
    """The compile's shared tables: row coefficients and witness constants (canonical ints)."""

    def __init__(self, root):
        self.coef: dict[int, int] = {}
        self.consts: dict[int, int] = dict(root._const_index)  # the root's ids stay as recorded
        self.fragments: dict[int, Fragment] = {}

    def const_ids(self, values) -> np.ndarray:
        return _ids(self.consts, values, np.int64)


def _ids(table: dict, values, dtype) -> np.ndarray:
    """The ids of ``values`` in ``table``, new values numbered in order of first appearance.
    Circuits repeat few distinct values (1, −1, powers of two), so the new ones are found over
    the distinct values and every value is then mapped at C speed: a generator calling
    ``setdefault`` per value took 0.8 µs each (10^6 per 2 KiB PoRep compile)."""
    values = values if isinstance(values, list) else list(values)
    for v in dict.fromkeys(values):
        if v not in table:
            table[v] = len(table)
    return np.fromiter(map(table.__getitem__, values), dtype=dtype, count=len(values))


def _traced_rows(cs, rows, tables: _Tables):
    """Row lengths, variable positions, coefficient ids and row pointers of traced rows."""
    n = len(rows)
    lens = np.fromiter(map(len, rows), dtype=np.int32, count=n)
    nnz = int(lens.sum(dtype=np.int64))
    keys = np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int64, count=nnz)
    coef = _ids(tables.coef, list(itertools.chain.from_iterable(map(dict.values, rows))), np.int32)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lens, out=ptr[1:])
    return lens, keys_to_positions(cs, keys).astype(np.int32), coef, ptr


def fragment(t, tables: _Tables) -> Fragment:
    """The template ``t``'s fragment (once per compile)."""
    f = tables.fragments.get(id(t))
    if f is None:
        f = tables.fragments[id(t)] = _assemble(t, tables, roles=True)
    return f


def _steps(b, f: Fragment):
    per = max(1, f.code.shape[0], *(c.shape[0] for c in f.cols))
    step = max(1, _CHUNK // per)
    return [(i0, min(b.k, i0 + step)) for i0 in range(0, b.k, step)]


def _place_rows(cs, frags, traced, m: int, tick):
    """Matrix ``m``'s row pointers, variable positions and coefficient ids, traced runs
    (``traced``: :func:`_traced_rows` of its rows) and stamped blocks in recording order."""
    tl, tc, tf, tp = traced
    nnz = int(tp[-1]) + sum(b.k * f.cols[m].shape[0] for b, f in zip(cs._blocks, frags))
    indptr = populated(cs.n_constraints + 1, np.int64)  # row lengths first, summed at the end
    indptr[0] = 0
    lens = indptr[1:]
    cols = populated(nnz, np.int32)
    coef = populated(nnz, np.int32)
    r = o = t_row = 0
    for b, f in [*zip(cs._blocks, frags), (None, None)]:
        hi = tl.shape[0] if b is None else b.at_row
        a, z = int(tp[t_row]), int(tp[hi])
        lens[r:r + hi - t_row] = tl[t_row:hi]
        cols[o:o + z - a] = tc[a:z]
        coef[o:o + z - a] = tf[a:z]
        r, o, t_row = r + hi - t_row, o + z - a, hi
        if b is None:
            break
        tlens = np.diff(f.indptr[m])
        per_rows, per_nnz = tlens.shape[0], f.cols[m].shape[0]
        zl, zc, none = np.zeros(tlens.shape[0], np.int64), np.zeros(per_nnz, np.int64), np.zeros(0, np.int64)
        for i0, i1 in _steps(b, f):
            n = (i1 - i0) * per_nnz
            bp = keys_to_positions(cs, b.bind_keys[i0:i1])
            stamp_cols(f.cols[m], b.n_params, b.n_vars, b.var_pos, bp, i0, cols[o:o + n])
            stamp_words(f.coef[m], zc, none, none, bp, i0, coef[o:o + n])  # plain copies
            stamp_words(tlens, zl, none, none, bp, i0, lens[r:r + (i1 - i0) * per_rows])
            r, o = r + (i1 - i0) * per_rows, o + n
            tick(n)
    np.cumsum(lens, out=lens)
    return indptr, cols, coef


def _place_code(cs, frags, tables: _Tables, roles: bool, tick):
    """The witness program (and, for a template, each word's role), traced runs and stamped
    blocks in recording order."""
    tcode = np.asarray(cs.code, dtype=np.int64)
    troles = None
    if roles:
        troles = code_roles(cs.code)
        cw = troles == ROLE_CONST
        tcode[cw] = tables.const_ids(cs.consts)[tcode[cw]]
        if (troles == ROLE_INPUT).any():
            raise CircuitError("a repeated sub-circuit reads circuit inputs directly; pass them as arguments")
    # every word is a register, constant id, input index or small literal: int32 when those fit
    dt = index_dtype(max(cs.n_slots, len(tables.consts), len(cs.input_names), 1 << 9)) if not roles else np.int64
    code = populated(tcode.shape[0] + sum(b.k * f.code.shape[0] for b, f in zip(cs._blocks, frags)), dt)
    out_roles = np.empty(code.shape[0], dtype=np.int8) if roles else None
    o = t_at = 0
    for b, f in [*zip(cs._blocks, frags), (None, None)]:
        hi = tcode.shape[0] if b is None else b.at_code
        code[o:o + hi - t_at] = tcode[t_at:hi]
        if roles:
            out_roles[o:o + hi - t_at] = troles[t_at:hi]
        o, t_at = o + hi - t_at, hi
        if b is None:
            break
        for i0, i1 in _steps(b, f):
            n = (i1 - i0) * f.code.shape[0]
            stamp_code(f.code, f.roles, b.slot_rank, b.slot_col, b.n_slots, b.slot_base, b.bind_slots[i0:i1], i0,
                       code[o:o + n])
            if roles:
                out_roles[o:o + n] = np.tile(f.roles, i1 - i0)
            o += n
            tick(n)
    return code, out_roles


def _names(cs, frags):
    if not cs._blocks:  # one tuple, as before stamping existed
        return tuple(cs.names)
    segs, t_row = [], 0
    for b, f in zip(cs._blocks, frags):
        segs += [cs.names[t_row:b.at_row], StampedNames(f.names, b.k, b.prefix, b.name)]
        t_row = b.at_row
    return RowNames([*segs, cs.names[t_row:]])


def _assemble(cs, tables: _Tables, *, roles: bool, tick=None, on_matrix=None, pool=None) -> Fragment:
    """``cs`` as a :class:`Fragment`; ``on_matrix(m, indptr, cols, coef)`` may take each matrix
    as soon as it is placed (returning what the fragment keeps of it). With ``pool`` (an
    executor) the three matrices are placed on it while this thread places the witness program:
    the stamping kernels release the GIL, so the copies of a large circuit's blocks run on
    every core."""
    tick = tick or (lambda n: None)
    frags = [fragment(b.template, tables) for b in cs._blocks]
    # the traced rows first, A, B, C in turn: coefficient ids are numbered in that order
    # whichever thread places a matrix
    traced = [_traced_rows(cs, rows, tables) for rows in (cs.a, cs.b, cs.c)]

    def matrix(m):
        part = _place_rows(cs, frags, traced[m], m, tick)
        return part if on_matrix is None else on_matrix(m, *part)

    if pool is None:
        parts = [matrix(m) for m in range(3)]
        code, out_roles = _place_code(cs, frags, tables, roles, tick)
    else:
        futures = [pool.submit(matrix, m) for m in range(3)]
        code, out_roles = _place_code(cs, frags, tables, roles, tick)
        parts = [f.result() for f in futures]
    indptr, cols, coef = zip(*parts)
    return Fragment(indptr, cols, coef, code, out_roles, _names(cs, frags))


def compile_system(cs, spec, progress: Progress | None = None):
    """The R1CS and witness program of a traced root constraint system (``spec``: its inputs).

    Each matrix is renumbered, sorted and handed to a hashing thread as soon as it is placed,
    so the digest's SHA-256 runs beside the placement of the next parts, and past the return:
    ``r1cs.digest`` waits for it on first read (:class:`~cuzk.synth.r1cs.PendingDigest`).
    """
    progress = progress or Progress(None)
    field = curves.get(cs.curve).Fr
    limbs = field.params.limbs
    tables = _Tables(cs)
    for b in cs._blocks:
        fragment(b.template, tables)
    kinds, slots = var_table(cs)
    n = kinds.shape[0]
    pub, prv = kinds == 1, kinds == 2
    n_pub, n_prv = int(pub.sum()), int(prv.sum())
    final = np.zeros(n, dtype=np.int32)  # allocation position -> [ONE, public..., private...]
    final[pub] = np.arange(1, n_pub + 1, dtype=np.int32)
    final[prv] = np.arange(n_pub + 1, n_pub + n_prv + 1, dtype=np.int32)
    var_slot = populated(n, np.int64)
    var_slot[final] = slots
    del kinds, slots, pub, prv
    frags = [tables.fragments[id(b.template)] for b in cs._blocks]
    words = sum(len(r) for rows in (cs.a, cs.b, cs.c) for r in rows) + len(cs.code) + sum(
        b.k * (f.code.shape[0] + sum(c.shape[0] for c in f.cols)) for b, f in zip(cs._blocks, frags))
    progress.stage("place", words)
    done = [0]
    lock = threading.Lock()  # the matrices are placed on several threads

    def tick(k: int) -> None:
        with lock:
            done[0] += k
            progress.update(done[0])

    hasher = R1csHasher(n_pub, n_prv, cs.n_constraints)
    mats = [None, None, None]
    coef_table = []  # one Montgomery table for the three matrices, made by the first to finish
    # one worker hashes A, B and C in order, each as soon as it and those before it are placed;
    # the R1CS is returned with the digest pending (PendingDigest: read on demand), so the
    # hashing of the last matrix overlaps what the caller does next (its first synthesis)
    pool = ThreadPoolExecutor(1, thread_name_prefix="cuzk-digest")
    adds = []

    def hexdigest() -> str:
        for f in adds:  # done already (one worker, in order); re-raises a failed add
            f.result()
        return hasher.hexdigest()

    def finish_matrix(m, indptr, cols, coef):
        for a in range(0, cols.shape[0], _CHUNK):
            cols[a:a + _CHUNK] = final[cols[a:a + _CHUNK]]
        sort_rows(indptr, cols, coef)
        with lock:
            if not coef_table:  # every coefficient is numbered by now (traced rows come first)
                coef_table.append(field.from_ints(list(tables.coef)) if tables.coef
                                  else np.zeros((0, limbs), np.uint64))
            mats[m] = CsrMatrix(indptr=indptr, indices=cols, coeff_table=coef_table[0], coeff_index=coef)
            while len(adds) < 3 and mats[len(adds)] is not None:
                adds.append(pool.submit(hasher.add, mats[len(adds)]))
        return None, None, None

    placers = ThreadPoolExecutor(min(3, os.cpu_count() or 1), thread_name_prefix="cuzk-place")
    try:
        frag = _assemble(cs, tables, roles=False, tick=tick, on_matrix=finish_matrix, pool=placers)
        digest = PendingDigest(pool.submit(hexdigest))
    finally:
        placers.shutdown(wait=True)
        pool.shutdown(wait=False)  # the worker ends once its queue is done
    progress.update(words)
    r1cs = R1CS.build(n_pub, n_prv, *mats, names=frag.names, curve=cs.curve, digest=digest)
    consts = field.from_ints(list(tables.consts))
    prog = WitnessProgram(code=frag.code, consts=consts, n_slots=cs.n_slots, var_slot=var_slot, inputs=spec)
    return r1cs, prog


def pce_sizes(cs) -> dict:
    """What :func:`compile_system` would build for the traced root system ``cs``, counted from
    its templates without placing anything: rows, nonzeros of A, B and C, witness-program words,
    variables and registers, and the bytes of the compiled arrays in memory (int64 row
    pointers, int32 columns and coefficient ids, int32 or int64 program words, int64 variable
    registers). A full Filecoin partition is counted this way where it does not fit in memory.

        >>> from cuzk.circuit import ConstraintSystem
        >>> cs = ConstraintSystem(); r = cs.public(4)
        >>> _ = cs.repeat(lambda cs, x, r: cs.assert_equal(x * x, r), [(cs.private(i), r) for i in range(1000)])
        >>> s = pce_sizes(cs); s["rows"], s["nnz"]
        (2000, (2000, 2000, 2000))
    """
    tables = _Tables(cs)
    frags = [fragment(b.template, tables) for b in cs._blocks]
    nnz = tuple(sum(len(r) for r in rows) + sum(b.k * f.cols[m].shape[0] for b, f in zip(cs._blocks, frags))
                for m, rows in enumerate((cs.a, cs.b, cs.c)))
    words = len(cs.code) + sum(b.k * f.code.shape[0] for b, f in zip(cs._blocks, frags))
    rows, n_vars, n_slots = cs.n_constraints, cs.n_vars, cs.n_slots
    word = np.dtype(index_dtype(max(n_slots, len(tables.consts), len(cs.input_names), 1 << 9))).itemsize
    return {
        "rows": rows, "nnz": nnz, "code_words": words, "vars": n_vars, "slots": n_slots,
        "memory_bytes": 3 * 8 * (rows + 1) + 8 * sum(nnz) + word * words + 8 * n_vars,
    }
