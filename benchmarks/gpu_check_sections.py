"""The sections of benchmarks/gpu_check.py: smoke, verified timings, phases, sweep, build, the chain
A/B, and the list of every section (the proofs: benchmarks/gpu_check_proofs.py).

Each section takes ``(ctx)`` (runtime, sizes, reporter, background tasks) and reports rows as it
measures them (``ctx.rep.row``); a row with ``verified=False`` fails the run. Timings (see
:func:`time_calls`): R back-to-back calls between one pair of events (mean per call), R calls
with an event pair each (median), and one call's kernels alone (the sum of each launch's own
event pair: no Python plan-building, no gaps). On the host build every "event" is the wall clock.
"""

from __future__ import annotations

import random
import statistics

import numpy as np

from cuzk.field import Fq, Fr
from cuzk.field import FQ, FR
from cuzk.kernels import cuda
from cuzk.curves import get as _get_curve
BLS_CUDA = cuda.kernels_for(_get_curve("bls12_381").cuda)  # BLS12-381's CUDA kernels
cpu = _get_curve("bls12_381").kernels  # BLS12-381's CPU kernels
from cuzk.kernels.cuda_msm import MSM_PHASES
from gpu_check_bn254 import bn254_section  # noqa: E402 - benchmarks/ is on sys.path (gpu_check.py)
from gpu_check_engine import engine_section, workers_section  # noqa: E402
from gpu_check_porep import porep_section  # noqa: E402
from gpu_check_proofs import cpu_proof, g2_on_cpu, proofs, two_workers  # noqa: E402

__all__ = ["Sizes", "SECTIONS", "time_calls", "fold_scalars", "tiled_points"]

BASES = 1 << 12  # distinct MSM base points: every timed MSM tiles them, and one CPU MSM checks it


class Sizes:
    """What each section runs at: the GPU sizes, or toy sizes for the host build and the fake."""

    def __init__(self, toy: bool, quick: bool, prove_logs=None):
        self.toy = toy
        self.field_n = 300 if toy else 4099
        self.ntt_check = 8 if toy else 12
        self.msm_check = {"g1": 7, "g2": 5} if toy else {"g1": 12, "g2": 10}
        self.ntt_timed = (6, 10) if toy else ((20,) if quick else (20, 22, 24))
        self.ntt_cpu = 8 if toy else 16
        self.msm_timed = [("g1", 8), ("g2", 6)] if toy else (
            [("g1", 20), ("g2", 20)] if quick else [("g1", 20), ("g2", 20), ("g1", 22), ("g1", 24)])
        self.phase_log = {"g1": 8, "g2": 6, "ntt": 10} if toy else {"g1": 20, "g2": 20, "ntt": 20}
        self.sweep_log = 8 if toy else 20
        self.sweep_msm = ([6, 8], [8]) if toy else ([14, 15, 16, 17], [4, 8, 16, 32])
        # G2 at the default window: which running-sum segment length (its default is G1's guess)
        self.sweep_g2 = (6, 6, [4, 8]) if toy else (20, 16, [4, 8, 16, 32])
        # window widths at the large sizes (default segments): does c = 16 stay best as n grows?
        self.sweep_msm_large = [(9, [6, 8])] if toy else ([] if quick else [(22, [16, 18, 20]), (24, [16, 18, 20, 22])])
        self.sweep_ntt_logs = (10,) if toy else (20, 24)
        # (group, log n of the full-width MSM, rows per point and bits after a split, window widths):
        # the shape an endomorphism split would give (G1 GLV: 2n points of 128 bits; G2 GLS: 4n of 65)
        self.glv_shape = ([("g1", 7, 2, 128, [6, 8]), ("g2", 5, 4, 65, [6])] if toy else
                          [("g1", 20, 2, 128, [14, 16, 17]), ("g2", 20, 4, 65, [13, 15, 16])] + (
                              [] if quick else [("g1", 24, 2, 128, [16, 18, 20, 22])]))
        # (None, None): the default plan (cuzk/kernels/cuda_ntt.py ntt_plan), timed beside the
        # others on a GPU (on the host build its 512-thread blocks would be 512 std::threads)
        self.sweep_ntt = ([(4, 1), (3, 2)] if toy
                          else [(None, None), (10, 1), (9, 2), (8, 4), (7, 8), (6, 8), (5, 8)])
        self.reps = 2 if toy else 5
        default = (10,) if toy else ((16,) if quick else (18, 20))
        self.prove_logs = tuple(prove_logs) if prove_logs else default


# ---------------------------------------------------------------- helpers
class Timing:
    def __init__(self, mean, median, kernels, per_kernel):
        self.mean, self.median, self.kernels, self.per_kernel = mean, median, kernels, per_kernel

    def fields(self) -> dict:
        return {"ms": self.median, "mean_ms": self.mean, "median_ms": self.median, "kernels_ms": self.kernels}

    def note(self) -> str:
        return f"mean {self.mean:.3f}, kernels only {self.kernels:.3f} ms"


def time_calls(rt, fn, reps: int) -> Timing:
    """Honest timing of ``fn``: a warm-up call, then R calls between one pair of events (mean),
    R calls with a pair each (median), and one call's launches on their own (kernels only)."""
    fn()
    with rt.timer() as t:
        for _ in range(reps):
            fn()
    mean = t.ms / reps
    per = []
    for _ in range(reps):
        with rt.timer() as t1:
            fn()
        per.append(t1.ms)
    rt.kernel_log = []
    try:
        fn()
        log = rt.kernel_log
    finally:
        rt.kernel_log = None
    per_kernel: dict = {}
    for name, a, b in log:
        per_kernel[name] = per_kernel.get(name, 0.0) + rt.elapsed_ms(a, b)
    return Timing(mean, statistics.median(per), sum(per_kernel.values()), per_kernel)


def tiled_points(group: str, n: int, base=None):
    """n affine points: the BASES random ones (or ``base``) repeated."""
    from cuzk.curve import G1, G2

    if base is None:
        base = (G1 if group == "g1" else G2).random(min(n, BASES), np.random.default_rng(6))
    reps = -(-n // len(base))
    return np.ascontiguousarray(np.tile(base, (reps,) + (1,) * (base.ndim - 1))[:n]), base


def fold_scalars(sc: np.ndarray, m: int) -> np.ndarray:
    """Σ_i s_i·B_(i mod m) = Σ_j (Σ_(i≡j) s_i mod r)·B_j: the m folded scalars, (m, 4) canonical."""
    n = sc.shape[0]
    rows = -(-n // m)
    words = np.zeros((rows * m, 8), np.uint32)
    words[:n] = np.ascontiguousarray(sc).view(np.uint32).reshape(n, 8)
    sums = words.reshape(rows, m, 8).astype(np.uint64).sum(axis=0)  # < 2^32 * rows: exact
    vals = [sum(int(v) << (32 * k) for k, v in enumerate(row)) % FR.modulus for row in sums]
    return np.frombuffer(b"".join(v.to_bytes(32, "little") for v in vals), np.uint64).reshape(m, 4).copy()


def random_scalars(n: int, seed: int) -> np.ndarray:
    return Fr.from_mont(Fr.random(n, np.random.default_rng(seed)))


def _cpu_msm(group, base, sc):

    return getattr(cpu, f"msm_{group}")(base, sc)


# ---------------------------------------------------------------- (1) smoke
def smoke(ctx) -> None:
    """Every kernel once at small sizes, each launch synchronised: a fault names its kernel."""
    rt, sz, rep = ctx.rt, ctx.sz, ctx.rep
    saved, rt.sync_launches = rt.sync_launches, True  # what CUZK_CUDA_SYNC=1 does for a whole run
    try:
        _smoke_fields(rt, sz, rep)
        _smoke_ntt_msm(rt, sz, rep)
    finally:
        rt.sync_launches = saved


def _smoke_fields(rt, sz, rep) -> None:
    rng = random.Random(1)
    for field, arr in ((FR, Fr), (FQ, Fq)):
        p = field.modulus
        a = [rng.randrange(p) for _ in range(sz.field_n - 3)] + [0, 1, p - 1]
        b = [rng.randrange(p) for _ in range(sz.field_n - 3)] + [p - 1, p - 1, p - 1]
        A, B = arr.from_ints(a), arr.from_ints(b)
        for op, f in ((cuda.ArithOp.ADD, lambda x, y: (x + y) % p), (cuda.ArithOp.SUB, lambda x, y: (x - y) % p),
                      (cuda.ArithOp.MUL, lambda x, y: x * y % p), (cuda.ArithOp.SQR, lambda x, y: x * x % p)):
            got = arr.to_ints(cuda.field_op(rt, field.name, op, A, B))
            ok = got == [f(x, y) for x, y in zip(a, b)]
            rep.row("smoke", f"{field.name} {op.name} x {sz.field_n}", verified=ok)
    from cuzk.curve import G1, G2

    for group, G in (("g1", G1), ("g2", G2)):
        ks = [(3, 5), (7, 7), (9, FR.modulus - 9), (0, 4), (11, 0)]
        gen = G.generator()
        P = np.stack([G.mul(gen, x) for x, _ in ks])
        Q = np.stack([G.mul(gen, y) for _, y in ks])
        for op, sign in ((cuda.EcOp.ADD_MIXED, 1), (cuda.EcOp.SUB_MIXED, -1), (cuda.EcOp.ADD, 1)):
            got = np.stack(cuda.ec_op(rt, group, op, P, Q))
            want = np.stack([G.mul(gen, (x + sign * y) % FR.modulus) for x, y in ks])
            rep.row("smoke", f"{group} {op.name} incl. infinity, P = Q, P = -Q", verified=bool((got == want).all()))


def _smoke_ntt_msm(rt, sz, rep) -> None:

    x = Fr.random(1 << sz.ntt_check, np.random.default_rng(2))
    for inverse in (False, True):
        for shift in (None, 7):
            ok = (BLS_CUDA.ntt(x, inverse=inverse, shift=shift) == cpu.ntt(x, inverse=inverse, shift=shift)).all()
            rep.row("smoke", f"NTT 2^{sz.ntt_check} inverse={inverse} shift={shift} == CPU", verified=bool(ok))
    a, b, c = (Fr.random(1 << sz.ntt_check, np.random.default_rng(s)) for s in (3, 4, 5))
    ok = (BLS_CUDA.h_pointwise(a, b, c, 12345) == cpu.h_pointwise(a, b, c, 12345)).all()
    rep.row("smoke", "fused H pointwise == CPU", verified=bool(ok))
    for group, log_n in sz.msm_check.items():
        pts, sc = _edge_msm_instance(group, log_n)
        want = _cpu_msm(group, pts, sc)
        host_ok = (getattr(BLS_CUDA, f"msm_{group}")(pts, sc) == want).all()
        dsc, = BLS_CUDA.stage(sc)
        dev_ok = (getattr(BLS_CUDA, f"msm_{group}")(BLS_CUDA.upload_points(pts), dsc) == want).all()
        rep.row("smoke", f"{group.upper()} MSM 2^{log_n} (zeros, infinity, duplicates; host and resident inputs)",
                verified=bool(host_ok and dev_ok))


def _edge_msm_instance(group: str, log_n: int):
    from cuzk.curve import G1, G2

    n = 1 << log_n
    rng = np.random.default_rng(3)
    pts = (G1 if group == "g1" else G2).random(n, rng)
    sc = random_scalars(n, 3)
    sc[0], sc[1] = 0, 0
    sc[1, 0] = 1
    sc[2] = np.frombuffer((FR.modulus - 1).to_bytes(32, "little"), np.uint64)
    pts[5] = 0  # a point at infinity
    pts[7:7 + n // 8] = pts[6]  # a run of duplicates: one heavy bucket per window
    sc[7:7 + n // 8] = sc[6]
    return pts, sc


# ---------------------------------------------------------------- (2) verified timings
def timed_ntt(ctx) -> None:

    rt, sz, rep = ctx.rt, ctx.sz, ctx.rep
    for log_n in sz.ntt_timed:
        host = Fr.random(1 << log_n, np.random.default_rng(log_n))
        x = rt.asarray(host.view(np.uint32))
        w = FR.root_of_unity_for(log_n)
        fwd = time_calls(rt, lambda: cuda.run_ntt(rt, x, log_n, w, None, False), sz.reps)
        back = cuda.run_ntt(rt, cuda.run_ntt(rt, x, log_n, w, None, False), log_n, w, None, True)
        ok = bool((rt.asnumpy(back).view(np.uint64) == host).all())
        rep.row("timed", f"Fr NTT 2^{log_n}", verified=ok, note=fwd.note() + "; forward then inverse == input",
                **fwd.fields())
        coset = time_calls(rt, lambda: cuda.run_ntt(rt, x, log_n, w, 7, True), sz.reps)
        back = cuda.run_ntt(rt, cuda.run_ntt(rt, x, log_n, w, 7, True), log_n, w, 7, False)
        ok = bool((rt.asnumpy(back).view(np.uint64) == host).all())
        rep.row("timed", f"Fr iNTT 2^{log_n} coset 7", verified=ok, note=coset.note() + "; round trip == input",
                **coset.fields())
        del x, back
    host = Fr.random(1 << sz.ntt_cpu, np.random.default_rng(16))
    ok = bool((BLS_CUDA.ntt(host, shift=7) == cpu.ntt(host, shift=7)).all())
    rep.row("timed", f"Fr NTT 2^{sz.ntt_cpu} coset 7 == CPU backend", verified=ok)


def _msm_inputs(group: str, log_n: int, kind: str):
    n = 1 << log_n
    sc = random_scalars(n, log_n)
    if kind == "equal scalars":  # every digit of a window in one bucket: the sort's atomics serialise
        sc[:] = sc[0]
    elif kind == "zero-heavy":  # 90% zeros, 5% ones (real witnesses): empty windows, one heavy bucket
        rng = np.random.default_rng(1)
        u = rng.random(n)
        sc[u < 0.9] = 0
        ones = (u >= 0.9) & (u < 0.95)
        sc[ones] = 0
        sc[ones, 0] = 1
    return sc


def timed_msm(ctx) -> None:
    rt, sz, rep = ctx.rt, ctx.sz, ctx.rep
    kinds = {0: ("random", "equal scalars", "zero-heavy")}
    for idx, (group, log_n) in enumerate(sz.msm_timed):
        n = 1 << log_n
        host_pts, base = tiled_points(group, n)
        pts = BLS_CUDA.upload_points(host_pts)
        del host_pts
        for kind in kinds.get(idx, ("random",)):
            sc = _msm_inputs(group, log_n, kind)
            dsc = rt.asarray(sc.view(np.uint32))
            t = time_calls(rt, lambda: cuda.run_msm(rt, group, pts.words, dsc, n), max(1, sz.reps - 2))
            got = cuda.run_msm(rt, group, pts.words, dsc, n)
            ok = bool((got == _cpu_msm(group, base, fold_scalars(sc, len(base)))).all())
            label = f"{group.upper()} MSM 2^{log_n}" + ("" if kind == "random" else f", {kind}")
            rep.row("timed", label, verified=ok, note=f"c={cuda.msm_window_bits(n)}; {t.note()}; == {len(base)}-point "
                    "CPU MSM of the folded scalars", **t.fields())
            del dsc
        del pts


# ---------------------------------------------------------------- (3) phases
def phases(ctx) -> None:
    rt, sz, rep = ctx.rt, ctx.sz, ctx.rep
    for group in ("g1", "g2"):
        log_n = sz.phase_log[group]
        n = 1 << log_n
        host_pts, _ = tiled_points(group, n)
        pts = BLS_CUDA.upload_points(host_pts)
        dsc = rt.asarray(random_scalars(n, 5).view(np.uint32))
        cuda.run_msm(rt, group, pts.words, dsc, n)
        runs = []
        for _ in range(max(1, sz.reps - 2)):
            marks = []
            cuda.run_msm(rt, group, pts.words, dsc, n, marks=marks)
            runs.append([rt.elapsed_ms(a, b) for (_, a), (_, b) in zip(marks, marks[1:])])
        for i, phase in enumerate(MSM_PHASES):
            rep.row("phases", f"{group.upper()} MSM 2^{log_n}: {phase}", ms=statistics.median(r[i] for r in runs))
    log_n = sz.phase_log["ntt"]
    x = rt.asarray(Fr.random(1 << log_n, np.random.default_rng(9)).view(np.uint32))
    w = FR.root_of_unity_for(log_n)
    for shift, inverse in ((None, False), (7, True)):
        cuda.run_ntt(rt, x, log_n, w, shift, inverse)
        marks = []
        cuda.run_ntt(rt, x, log_n, w, shift, inverse, marks=marks)
        for (_, a), (step, b) in zip(marks, marks[1:]):
            rep.row("phases", f"Fr {'iNTT coset' if inverse else 'NTT'} 2^{log_n}: {step}", ms=rt.elapsed_ms(a, b))


# ---------------------------------------------------------------- (4) sweep
def sweep(ctx) -> None:
    rt, sz, rep = ctx.rt, ctx.sz, ctx.rep
    cs, segs = sz.sweep_msm
    best = _msm_sweep(ctx, "g1", sz.sweep_log, cs, segs, seed=9)
    rep.row("sweep", f"  best MSM: c={best[1]} seg={best[2]}", ms=best[0])
    # G2 at one window width over running-sum segment lengths (its default is G1's guess)
    log_n, c, segs = sz.sweep_g2
    best = _msm_sweep(ctx, "g2", log_n, [c], segs, seed=11)
    rep.row("sweep", f"  best G2 MSM segments at c={c}: seg={best[2]}", ms=best[0])
    for log_n, widths in sz.sweep_msm_large:
        _sweep_widths(ctx, log_n, widths)
    for log_n in sz.sweep_ntt_logs:
        x = rt.asarray(Fr.random(1 << log_n, np.random.default_rng(log_n)).view(np.uint32))
        w = FR.root_of_unity_for(log_n)
        ref = rt.asnumpy(cuda.run_ntt(rt, x, log_n, w, None, False))
        saved = getattr(rt, "ntt_max_stages", None), getattr(rt, "ntt_columns", None)
        results = []
        try:
            for stages, cols in sz.sweep_ntt:
                rt.ntt_max_stages, rt.ntt_columns = stages, cols
                plan = cuda.ntt_plan(log_n, stages, cols)
                t = time_calls(rt, lambda: cuda.run_ntt(rt, x, log_n, w, None, False), sz.reps)
                ok = bool((rt.asnumpy(cuda.run_ntt(rt, x, log_n, w, None, False)) == ref).all())
                one_width = sorted({c for _, _, c in plan}) == [plan[0][2]]
                desc = ("+".join(f"{k}" for _, k, _ in plan) + " stages, "
                        + (f"{plan[0][2]}" if one_width else "/".join(f"{c}" for _, _, c in plan)) + " columns"
                        + (" (default)" if stages is None and cols is None else ""))
                rep.row("sweep", f"Fr NTT 2^{log_n} plan {desc}", verified=ok, note=t.note(), **t.fields())
                results.append((t.median, desc))
        finally:
            rt.ntt_max_stages, rt.ntt_columns = saved
        rep.row("sweep", f"  best NTT 2^{log_n} plan: {min(results)[1]}", ms=min(results)[0])


def _msm_sweep(ctx, group: str, log_n: int, cs, segs, seed: int) -> tuple:
    """A row per (window width, segment length) of a 2^log_n MSM over ``group``, each checked
    against the default configuration's result; returns the best (median ms, c, seg)."""
    rt, rep = ctx.rt, ctx.rep
    n = 1 << log_n
    host_pts, _ = tiled_points(group, n)
    pts = BLS_CUDA.upload_points(host_pts)
    del host_pts
    dsc = rt.asarray(random_scalars(n, seed).view(np.uint32))
    want = cuda.run_msm(rt, group, pts.words, dsc, n)
    best = None
    for c in cs:
        for seg in segs:
            t = time_calls(rt, lambda: cuda.run_msm(rt, group, pts.words, dsc, n, c, seg), max(1, ctx.sz.reps - 3))
            ok = bool((cuda.run_msm(rt, group, pts.words, dsc, n, c, seg) == want).all())
            rep.row("sweep", f"{group.upper()} MSM 2^{log_n} c={c} seg={seg}", verified=ok, note=t.note(), **t.fields())
            best = min(best or (t.median, c, seg), (t.median, c, seg))
    return best


def _sweep_widths(ctx, log_n: int, widths) -> None:
    """G1 MSM 2^log_n at each window width (default segments), checked against the first."""
    rt, rep = ctx.rt, ctx.rep
    n = 1 << log_n
    host_pts, _ = tiled_points("g1", n)
    pts = BLS_CUDA.upload_points(host_pts)
    del host_pts
    dsc = rt.asarray(random_scalars(n, 10).view(np.uint32))
    want, results = None, []
    for c in widths:
        t = time_calls(rt, lambda: cuda.run_msm(rt, "g1", pts.words, dsc, n, c), max(1, ctx.sz.reps - 3))
        got = cuda.run_msm(rt, "g1", pts.words, dsc, n, c)
        want = got if want is None else want
        rep.row("sweep", f"G1 MSM 2^{log_n} c={c}", verified=bool((got == want).all()), note=t.note(), **t.fields())
        results.append((t.median, c))
    rep.row("sweep", f"  best G1 MSM 2^{log_n}: c={min(results)[1]} (default {cuda.msm_window_bits(n)})",
            ms=min(results)[0])


# ---------------------------------------------------------------- GLV shape
def narrow_scalars(n: int, bits: int, seed: int) -> np.ndarray:
    """(n, 4) canonical rows below 2^bits, uniform (below r when bits < 255)."""
    sc = np.random.default_rng(seed).integers(0, 2**64, size=(n, 4), dtype=np.uint64)
    full, rest = divmod(bits, 64)
    sc[:, full + (rest > 0):] = 0
    if rest:
        sc[:, full] &= np.uint64((1 << rest) - 1)
    return sc


def glv_shape(ctx) -> None:
    """Would an endomorphism split pay on the GPU? The MSM plan over the shape a split gives
    (G1 GLV: twice the points at 128 bits; G2 GLS: four times at 65), timed beside the
    full-width MSM of the unsplit size on the same points, with no split built: the split's own
    work (decomposing the scalars, mapping the points) is not in these rows, so their ratio is
    what a split could gain at most. Each row is checked against a CPU MSM of the folded scalars."""
    rt, sz, rep = ctx.rt, ctx.sz, ctx.rep
    for group, log_n, dim, bits, widths in sz.glv_shape:
        n = 1 << log_n
        m = dim * n  # the split's rows
        host_pts, base = tiled_points(group, m)
        pts = BLS_CUDA.upload_points(host_pts)  # the first n rows are tiled_points(group, n)'s
        del host_pts
        full = random_scalars(n, 31)
        dfull = rt.asarray(full.view(np.uint32))
        t = time_calls(rt, lambda: cuda.run_msm(rt, group, pts.words, dfull, n), max(1, sz.reps - 2))
        ok = bool((cuda.run_msm(rt, group, pts.words, dfull, n) == _cpu_msm(group, base, fold_scalars(full, len(base)))).all())
        rep.row("glv", f"{group.upper()} MSM 2^{log_n}, 255-bit scalars (c={cuda.msm_window_bits(n)})", verified=ok,
                note=t.note(), **t.fields())
        base_ms = t.median
        del dfull
        sc = narrow_scalars(m, bits, 32)
        dsc = rt.asarray(sc.view(np.uint32))
        want = _cpu_msm(group, base, fold_scalars(sc, len(base)))
        for c in widths:
            t = time_calls(rt, lambda: cuda.run_msm(rt, group, pts.words, dsc, m, c, scalar_bits=bits),
                           max(1, sz.reps - 2))
            ok = bool((cuda.run_msm(rt, group, pts.words, dsc, m, c, scalar_bits=bits) == want).all())
            rep.row("glv", f"  {group.upper()} MSM {dim}x2^{log_n} points, {bits}-bit scalars, c={c}", verified=ok,
                    note=f"{t.note()}; full-width / this: {base_ms / t.median:.2f}x (no split work included)",
                    **t.fields())
        del pts, dsc


# ---------------------------------------------------------------- build facts
def build(ctx) -> None:
    attrs = ctx.rt.kernel_attributes()
    if not attrs:
        ctx.rep.note("build: kernel registers come from a device build (RawKernel.attributes): none on the host")
        return
    for name, a in attrs.items():
        ctx.rep.row("build", f"kernel {name}", regs=a.get("num_regs"), local_bytes=a.get("local_size_bytes"),
                    note=f"{a.get('num_regs')} registers, {a.get('local_size_bytes')} B local memory, "
                         f"{a.get('shared_size_bytes')} B static shared")


def chain_ab(ctx) -> None:
    """The same G1 MSM with field.cuh's per-instruction chains (-DCUZK_CHAIN_ONLY) instead of the
    whole PTX blocks: which build is faster on this GPU."""
    other = ctx.background.chain_runtime()
    if other is None:
        ctx.rep.note("chain A/B: no CUZK_CHAIN_ONLY module (host build, or its compile failed)")
        return
    log_n = ctx.sz.phase_log["g1"]
    n = 1 << log_n
    host_pts, base = tiled_points("g1", n)
    sc = random_scalars(n, 21)
    for label, rt in (("PTX blocks", ctx.rt), ("per-instruction chains", other)):
        words = rt.asarray(host_pts.view(np.uint32))
        dsc = rt.asarray(sc.view(np.uint32))
        t = time_calls(rt, lambda: cuda.run_msm(rt, "g1", words, dsc, n), max(1, ctx.sz.reps - 2))
        ok = bool((cuda.run_msm(rt, "g1", words, dsc, n) == _cpu_msm("g1", base, fold_scalars(sc, len(base)))).all())
        ctx.rep.row("optional", f"G1 MSM 2^{log_n}, {label}", verified=ok, note=t.note(), **t.fields())


#: (name, function, GPU budget s, host budget s, optional flag or None)
SECTIONS = [
    ("smoke", smoke, 25, 15, None),
    ("timed NTT", timed_ntt, 20, 10, None),
    ("timed MSM", timed_msm, 70, 20, None),
    ("phases", phases, 15, 5, None),
    ("sweep", sweep, 30, 10, None),
    ("build", build, 2, 1, None),
    ("proofs", proofs, 90, 40, None),
    ("chain A/B", chain_ab, 15, 2, None),  # registers grew with the PTX blocks: is it faster?
    ("engine", engine_section, 15, 5, None),  # cuzk.Engine on the GPU: two circuits, priorities
    ("engine workers", workers_section, 15, 10, None),  # 1 vs 2 prove workers: throughput
    ("PoRep", porep_section, 45, 10, None),  # bit-aware MSMs at 2^22, a 2 KiB partition (prepared in the background)
    ("GLV shape", glv_shape, 25, 5, None),  # would an endomorphism split pay: 2n/4n points at 128/65 bits
    ("CPU proof", cpu_proof, 45, 10, "cpu_proof"),
    ("MSM_B2 on the CPU", g2_on_cpu, 25, 10, "g2_cpu"),
    ("two workers", two_workers, 20, 5, "two_workers"),
    ("BN254 proof", bn254_section, 120, 25, "bn254"),  # NVRTC + BN254 Numba kernels, cold
]
