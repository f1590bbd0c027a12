"""gpu_check's Engine section: ``cuzk.Engine(device="cuda")`` on the GPU with two circuits.

A backlog of NORMAL proofs of the smallest prepared proof circuit (2^18 on a GPU; its witness
replayed, so the section costs proving only), then one CRITICAL proof of a second circuit (Cube,
its own key and synthesizer, with a deadline) submitted behind it. Checks: every proof verifies
against its circuit's verifying key and a wrong public input is rejected, the CRITICAL job ends
before the backlog does, each prove worker proved with the key resident on its device, and
every job's timings are set. Rows: per circuit the median prove, device, key-load, queue-wait
and total seconds, the backlog's seconds per proof, the CRITICAL job's latency, and the engine's
throughput against the lone ``GpuProver`` of the proofs section (same key, same witness). Then the
largest prepared circuit's backlog through an Engine of one prove worker and one of two (the
witness replayed: synthesis-light), and the ratio of their throughputs.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

__all__ = ["engine_section", "workers_section"]


class _Replay:
    """A synthesizer that hands out one prepared witness (the section times proving, not synthesis)."""

    def __init__(self, w):
        self.w = w

    def synthesize(self, **inputs):
        return self.w


def _ms(values) -> float:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) * 1e3 if vals else float("nan")


def engine_section(ctx) -> None:
    import cuzk
    from cuzk.circuits import Cube
    from cuzk.groth16 import setup, verify

    log = ctx.sz.prove_logs[0]
    pk, w, public = ctx.proofs[log][:3] if log in ctx.proofs else ctx.background.proof(log)
    cube = cuzk.Synthesizer(Cube())
    cube_pk, cube_vk = setup(cube.r1cs, rng=np.random.default_rng(11))
    cube.synthesize(x=3, out=35)  # Numba's first call out of the way: the CRITICAL job is ready at once
    backlog = 6 if ctx.sz.toy else 8
    rep = ctx.rep
    t0 = time.perf_counter()
    with cuzk.Engine(device="cuda", device_budget=None if ctx.sz.toy else "auto") as engine:
        rep.row("engine", f"Engine(device='cuda'): {engine.workers_per_device} prove workers on device 0",
                ms=(time.perf_counter() - t0) * 1e3)
        engine.register(f"porep-2^{log}", _Replay(w), pk)
        engine.register("cube", cube, cube_pk, priority="critical")
        t0 = time.perf_counter()
        engine.preload(f"porep-2^{log}")
        engine.preload("cube")
        rep.row("engine", f"preload both keys (2^{log} upload + warm-up)", ms=(time.perf_counter() - t0) * 1e3)
        t0 = time.perf_counter()
        normal = [engine.submit(f"porep-2^{log}", {"seq": i}) for i in range(backlog)]
        critical = engine.submit("cube", {"x": 3, "out": 35}, deadline=time.time() + 120, request_id="wpost-1")
        proofs = [f.result(timeout=300) for f in normal]
        wall = time.perf_counter() - t0
        crit_proof = critical.result(timeout=300)
        ends = {e.job_id: e.t_ns for e in engine.timeline.events() if e.kind.name == "JOB_DONE"}
        status = engine.status()
    bad = list(public)
    bad[0] += 1
    ok = all(verify(pk.vk, public, p) for p in proofs) and verify(cube_vk, [35], crit_proof) \
        and not verify(pk.vk, bad, proofs[0]) and not verify(cube_vk, [36], crit_proof)
    crit_first = ends["wpost-1"] < max(ends[f.job_id] for f in normal)
    devices = {k: v["devices"] for k, v in status["keys"].items()}
    rep.row("engine", f"{backlog} NORMAL 2^{log} + 1 CRITICAL cube: all verify", ms=wall * 1e3, verified=ok,
            note=f"keys on devices {devices}")
    rep.row("engine", "CRITICAL ends before the NORMAL backlog", verified=crit_first,
            ms=critical.timings.total_s * 1e3, note="its total latency")
    for name, futures in ((f"porep-2^{log}", normal), ("cube", [critical])):
        t = [f.timings for f in futures]
        rep.row("engine", f"  {name}: prove (median)", ms=_ms(x.prove_s for x in t),
                device_ms=_ms(x.device_s for x in t), note=f"device {_ms(x.device_s for x in t):.3f} ms")
        rep.row("engine", f"  {name}: queue wait / key load / total (median)", ms=_ms(x.total_s for x in t),
                note=f"queue {_ms(x.queue_wait_s for x in t):.3f} ms, key load {_ms(x.key_load_s for x in t):.3f} ms")
    per = wall / backlog
    row = next((r for r in rep.rows if r["label"] == f"prove 2^{log} GpuProver"), None)
    ratio = (f"lone GpuProver {row['ms']:.1f} ms/proof: Engine throughput {row['ms'] / (per * 1e3):.2f}x of it"
             if row else "")
    rep.row("engine", f"  2^{log} through the Engine, per proof ({status['workers'][0]['kind']} workers: "
            f"{sum(1 for x in status['workers'] if x['kind'] == 'prove')})", ms=per * 1e3, note=ratio)


def _throughput(ctx, log: int, workers: int, jobs: int) -> tuple[float, bool]:
    """(seconds per proof, all verified) for ``jobs`` replayed 2^log proofs through an Engine of
    ``workers`` prove workers on device 0, its key preloaded."""
    import cuzk
    from cuzk.groth16 import prepare_verifying_key, verify

    pk, w, public = ctx.proofs[log][:3] if log in ctx.proofs else ctx.background.proof(log)
    with cuzk.Engine(device="cuda", workers_per_device=workers,
                     device_budget=None if ctx.sz.toy else "auto") as engine:
        engine.register("replay", _Replay(w), pk)
        engine.preload("replay")
        engine.submit("replay", {}).result(timeout=300)  # each worker's first proof out of the timing
        t0 = time.perf_counter()
        futures = [engine.submit("replay", {"seq": i}) for i in range(jobs)]
        proofs = [f.result(timeout=300) for f in futures]
        per = (time.perf_counter() - t0) / jobs
    pvk = prepare_verifying_key(pk.vk)
    return per, all(verify(pvk, public, p) for p in proofs)


def workers_section(ctx) -> None:
    log = ctx.sz.prove_logs[-1]
    jobs = 4 if ctx.sz.toy else 12
    one, ok1 = _throughput(ctx, log, 1, jobs)
    two, ok2 = _throughput(ctx, log, 2, jobs)
    ctx.rep.row("engine", f"2^{log} through an Engine of 1 prove worker, per proof", ms=one * 1e3, verified=ok1)
    ctx.rep.row("engine", f"2^{log} through an Engine of 2 prove workers, per proof", ms=two * 1e3, verified=ok2,
                note=f"throughput {one / two:.2f}x one worker's")
