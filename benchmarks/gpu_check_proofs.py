"""The proof sections of benchmarks/gpu_check.py: GpuProver proofs of the chain circuit, verified,
with their sub-spans and, at the largest size, where the H span's host time goes; then the
optional ones on the same keys (the CPU backend's proof, MSM_B2 on the CPU beside the GPU, two
threads on one prover). Each takes ``(ctx)`` as the other sections do (benchmarks/gpu_check_sections.py).
"""

from __future__ import annotations

import concurrent.futures
import statistics
import time

import numpy as np

from cuzk.curves import get as _get_curve
from cuzk.field import FR, Fr
from cuzk.kernels import cuda

__all__ = ["SUB_SPANS", "proofs", "cpu_proof", "g2_on_cpu", "two_workers"]

BLS_CUDA = cuda.kernels_for(_get_curve("bls12_381").cuda)  # BLS12-381's CUDA kernels
cpu = _get_curve("bls12_381").kernels  # BLS12-381's CPU kernels
SUB_SPANS = ("H", "MSM_A", "MSM_B1", "MSM_B2", "MSM_L", "MSM_H")


# ---------------------------------------------------------------- (5) proofs
def _proof_rows(ctx, log, prover, w, public, pvk, label=None):
    import cuzk.groth16 as g16
    from cuzk.timeline import Timeline, stage_context

    def timed(job):
        tl = Timeline()
        with stage_context(tl, job_id=job):
            t0 = time.perf_counter()
            proof = prover.prove(w, r=5, s=6)
            wall = time.perf_counter() - t0
        subs = {s.stage: (s.seconds, s.device_s) for s in tl.spans() if s.stage in SUB_SPANS}
        return proof, wall, subs

    first, t_first, _ = timed(-1)
    runs = [timed(j) for j in range(1 if ctx.sz.toy else 3)]
    ok = g16.verify(pvk, public, first) and all(p == first for p, _, _ in runs)
    bad = list(public)
    bad[0] = (bad[0] + 1) % FR.modulus
    ok = ok and not g16.verify(pvk, bad, first)
    med = statistics.median(r[1] for r in runs)
    label = label or f"2^{log}"
    ctx.rep.row("proof", f"prove {label} GpuProver", ms=med * 1e3, verified=ok,
                note=f"first {t_first * 1e3:.1f} ms; verifies, rejects a wrong input, deterministic")
    for s in SUB_SPANS:
        vals = [r[2][s] for r in runs if s in r[2]]
        if vals:
            dev = statistics.median((v[1] or float("nan")) for v in vals) * 1e3
            ctx.rep.row("proof", f"  {label} {s}", ms=statistics.median(v[0] for v in vals) * 1e3, device_ms=dev)
    return first, ok


def _diagnose(ctx, pk, w, bases):
    """Name the part of a proof that differs: H and each of the five MSMs against the CPU backend."""
    from gpu_check_sections import _cpu_msm
    from cuzk.groth16.prove import query_scalars
    from cuzk.groth16.r1cs_to_qap import compute_h, witness_evaluations

    a, b, c = witness_evaluations(w, pk.n_inputs, pk.domain_size)
    h_cpu = cpu.to_canonical(compute_h(a, b, c, cpu, convention=pk.convention))
    h_gpu = BLS_CUDA.to_canonical(compute_h(*BLS_CUDA.stage(a, b, c), BLS_CUDA, convention=pk.convention))
    h_gpu = ctx.rt.asnumpy(h_gpu.array).view(np.uint64).reshape(-1, 4)
    ctx.rep.row("proof", "  diagnosis: H", verified=bool((h_cpu == h_gpu).all()))
    a_sc, b_sc, l_sc = query_scalars(pk, Fr.from_mont(w.z))
    for name, pts, dpts, sc, g in (("MSM_A", pk.a, bases.a, a_sc, "g1"), ("MSM_B1", pk.b_g1, bases.b_g1, b_sc, "g1"),
                                   ("MSM_B2", pk.b_g2, bases.b_g2, b_sc, "g2"), ("MSM_L", pk.l, bases.l, l_sc, "g1"),
                                   ("MSM_H", pk.h, bases.h, h_cpu, "g1")):
        same = (getattr(BLS_CUDA, f"msm_{g}")(dpts, sc) == _cpu_msm(g, pts, sc)).all()
        ctx.rep.row("proof", f"  diagnosis: {name}", verified=bool(same))


def _h_host_rows(ctx, log, pk, w) -> None:
    """Where the H span's host time goes: each host step of create_proof before the first kernel,
    timed alone (median of 3; staging waits for its copies, so it counts the DMA too), beside
    the former ways: a, b, c padded on the host and staged on one thread, the query scalars
    converted and gathered on the host and staged."""
    from cuzk.groth16 import witness_prep
    from cuzk.groth16.r1cs_to_qap import witness_evaluations, witness_parts

    def med(fn):
        ts = []
        for _ in range(3):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts) * 1e3

    rt = ctx.rt
    m = pk.domain_size
    z = witness_prep.canonical(Fr, w.z)
    sc = witness_prep.query_scalars(pk, z)
    rows = witness_prep.query_rows(pk.resolved_density(), pk.n_inputs)

    def stage(arrays, **kw):
        staged = BLS_CUDA.stage(*arrays, **kw)
        for d in staged:
            rt.wait(d)
        rt.synchronize()

    def scalars_on_device():
        for d in BLS_CUDA.query_scalars(BLS_CUDA.stage(w.z)[0], rows, pk.n_inputs):
            rt.wait(d)
        rt.synchronize()

    steps = {
        "check a·b = c": lambda: witness_prep.unsatisfied_row(Fr, w.a, w.b, w.c),
        "stage a, b, c as parts, zero rows on the device (copies included)":
            lambda: stage(witness_parts(w, pk.n_inputs, m), rows=m),
        "former way: pad a, b, c on the host, stage on one thread":
            lambda: stage(witness_evaluations(w, pk.n_inputs, m), threads=1),
        "stage z, query scalars made on the device (copy and kernels included)": scalars_on_device,
        "former way: z out of Montgomery form on the host": lambda: witness_prep.canonical(Fr, w.z),
        "former way: query scalars gathered on the host": lambda: witness_prep.query_scalars(pk, z),
        "former way: stage the query scalars": lambda: stage(sc),
    }
    for label, fn in steps.items():
        ctx.rep.row("proof", f"  2^{log} H host: {label}", ms=med(fn))


def proofs(ctx) -> None:
    import cuzk
    from cuzk.groth16 import prepare_verifying_key

    for log in ctx.sz.prove_logs:
        pk, w, public = ctx.background.proof(log)
        t0 = time.perf_counter()
        prover = cuzk.GpuProver(pk, device="cuda", verify=False)
        ctx.rep.row("proof", f"GpuProver 2^{log}: key upload + warm-up", ms=(time.perf_counter() - t0) * 1e3)
        pvk = prepare_verifying_key(pk.vk)
        first, ok = _proof_rows(ctx, log, prover, w, public, pvk)
        if not ok:
            _diagnose(ctx, pk, w, prover._bases)
        if log == ctx.sz.prove_logs[-1]:
            _h_host_rows(ctx, log, pk, w)
        ctx.proofs[log] = (pk, w, public, first, prover)


# ---------------------------------------------------------------- optional, on the proofs' keys
def _proved(ctx, log: int):
    """The proofs section's (pk, w, public, GPU proof, prover) for 2^log; made here when that
    section did not run (``--only cpu`` after a run whose proofs passed)."""
    if log not in ctx.proofs:
        import cuzk

        pk, w, public = ctx.background.proof(log)
        prover = cuzk.GpuProver(pk, device="cuda", verify=False)
        ctx.proofs[log] = (pk, w, public, prover.prove(w, r=5, s=6), prover)
    return ctx.proofs[log]


def cpu_proof(ctx) -> None:
    from cuzk.groth16 import create_proof

    log = ctx.sz.prove_logs[-1]
    pk, w, _, first, _ = _proved(ctx, log)
    t0 = time.perf_counter()
    proof = create_proof(pk, w, 5, 6, backend="cpu")
    ctx.rep.row("optional", f"prove 2^{log} CPU backend", ms=(time.perf_counter() - t0) * 1e3, verified=proof == first,
                note="byte-equal to the GPU proof")


def g2_on_cpu(ctx) -> None:
    import cuzk

    log = ctx.sz.prove_logs[-1]
    pk, w, _, first, _ = _proved(ctx, log)
    split = cuzk.GpuProver(pk, device="cuda", verify=False, g2_msm="cpu")
    split.prove(w, r=5, s=6)
    t0 = time.perf_counter()
    proof = split.prove(w, r=5, s=6)
    ctx.rep.row("optional", f"prove 2^{log}, MSM_B2 on the CPU beside the GPU", ms=(time.perf_counter() - t0) * 1e3,
                verified=proof == first)


def two_workers(ctx) -> None:
    log = ctx.sz.prove_logs[-1]
    _, w, _, first, prover = _proved(ctx, log)
    jobs = 2 if ctx.sz.toy else 4
    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        out = list(pool.map(lambda _: prover.prove(w, r=5, s=6), range(jobs)))
    per = (time.perf_counter() - t0) / jobs
    ctx.rep.row("optional", f"prove 2^{log}, 2 threads (per proof)", ms=per * 1e3, verified=all(p == first for p in out))
