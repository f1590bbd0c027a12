"""Full Groth16 prove of ``porep_like`` at ~2^14 and ~2^16 constraints, with the breakdown.

Per size: trace time, development setup time, synthesis, then ``--runs`` proofs through
``create_proof`` inside a :class:`cuzk.timeline.Timeline` stage context, so the prover's own
sub-spans (H, MSM_A, MSM_B1, MSM_B2, MSM_L, MSM_H) give the breakdown; plus verification and the ``.params`` round trip (write,
read checked / unchecked; the key read back must prove the same bytes). Cores
used = process CPU seconds / wall seconds over the whole prove (2.0 = both cores busy).

Baselines in the same process: the same prove with ``threads=1`` (every kernel on one core)
against all threads (the two-core speed-up), and the pure-Python reference prover against the
fast one on a tiny circuit (same keys, same r, s, byte-identical proofs).

    python3 benchmarks/prove_bench.py                    # sizes 14,16
    python3 benchmarks/prove_bench.py --sizes 14 --runs 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

from cuzk import Circuit
from cuzk import reference as ref
from cuzk.circuits import porep_like
from cuzk.field import FR, Fr
from cuzk.groth16 import ProvingKey, ToxicWaste, create_proof, prepare_verifying_key, setup, setup_with_waste, verify
from cuzk.synth import Synthesizer
from cuzk.timeline import Timeline, stage_context

__all__ = ["main"]

LEAVES = 1024  # depth-10 binary tree, ~2,900 constraints per challenge
CHALLENGES = {14: 5, 16: 22}  # 15,063 and 65,366 constraints: domains 2^14 and 2^16
SUB_SPANS = ("H", "MSM_A", "MSM_B1", "MSM_B2", "MSM_L", "MSM_H")


def _timed(fn):
    """(result, wall s, process CPU s) of one call."""
    c, t = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t, time.process_time() - c


def _prove_once(pk, w, threads, job):
    tl = Timeline()
    with stage_context(tl, job_id=job):
        proof, wall, cpu = _timed(lambda: create_proof(pk, w, 12345 + job, 67890 + job, threads=threads))
    parts = {s.stage: s.seconds for s in tl.spans() if s.stage in SUB_SPANS}
    return proof, wall, cpu, parts


def bench_size(log_n: int, runs: int) -> dict:
    k = CHALLENGES.get(log_n)
    if k is None:
        raise SystemExit(f"no porep_like size for 2^{log_n}; known: {sorted(CHALLENGES)}")
    circuit = porep_like(leaves=LEAVES, challenges=k)
    synth, t_trace, _ = _timed(lambda: Synthesizer(circuit))
    r1cs = synth.r1cs
    (pk, vk), t_setup, c_setup = _timed(lambda: setup(r1cs, np.random.default_rng(log_n)))
    w, t_synth, _ = _timed(lambda: synth.synthesize(**circuit.sample_inputs(seed=1)))

    _prove_once(pk, w, None, -1)  # warm-up: first calls load the Numba caches
    rows = [_prove_once(pk, w, None, j) for j in range(runs)]
    proof = rows[0][0]
    pvk = prepare_verifying_key(vk)
    ok, t_verify, _ = _timed(lambda: verify(pvk, w.public_inputs, proof))
    bad = list(w.public_inputs)
    bad[0] = (bad[0] + 1) % FR.modulus
    assert ok and not verify(pvk, bad, proof), "benchmark proof failed its soundness check"

    io_times = params_io(pk, r1cs, w, proof)
    one = [_prove_once(pk, w, 1, 100 + j) for j in range(runs)]
    med = lambda xs: statistics.median(xs)  # noqa: E731
    return {
        "log_n": log_n, "challenges": k, "constraints": r1cs.n_constraints, "vars": r1cs.n_vars,
        "domain": pk.domain_size, "a": pk.a.shape[0], "b": pk.b_g1.shape[0],
        "trace": t_trace, "setup": t_setup, "setup_cores": c_setup / t_setup, "synth": t_synth,
        "prove": med([r[1] for r in rows]), "prove_cores": med([r[2] / r[1] for r in rows]),
        "prove_cpu": med([r[2] for r in rows]),
        "parts": {s: med([r[3][s] for r in rows]) for s in SUB_SPANS},
        "prove_1t": med([r[1] for r in one]), "prove_1t_cores": med([r[2] / r[1] for r in one]),
        "parts_1t": {s: med([r[3][s] for r in one]) for s in SUB_SPANS},
        "verify": t_verify, **io_times,
    }


def params_io(pk, r1cs, w, proof) -> dict:
    """Write the .params file, read it back checked and unchecked; the read key must prove the same."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "bench.params")
        _, t_write, _ = _timed(lambda: pk.write(path))
        size = os.path.getsize(path)
        back, t_read, c_read = _timed(lambda: ProvingKey.read(path, r1cs=r1cs))
        _, t_read_unchecked, _ = _timed(lambda: ProvingKey.read(path, checked=False, r1cs=r1cs))
    assert create_proof(back, w, 12345, 67890) == proof, "key read back from .params proves differently"
    return {"params_mib": size / 2**20, "write": t_write, "read": t_read, "read_cores": c_read / t_read,
            "read_unchecked": t_read_unchecked}


def report(r: dict) -> str:
    lines = [
        f"== porep_like(leaves={LEAVES}, challenges={r['challenges']}): {r['constraints']:,} constraints, "
        f"{r['vars']:,} vars, domain 2^{r['domain'].bit_length() - 1}, |A|={r['a']:,} |B|={r['b']:,}",
        f"trace {r['trace']:.2f} s | setup {r['setup']:.1f} s ({r['setup_cores']:.2f} cores) | "
        f"synthesize {r['synth'] * 1e3:.0f} ms | verify {r['verify'] * 1e3:.0f} ms",
        f".params {r['params_mib']:.1f} MiB: write {r['write']:.2f} s | read checked {r['read']:.2f} s "
        f"({r['read_cores']:.2f} cores) | read unchecked {r['read_unchecked']:.2f} s",
        f"{'step':8} {'2 threads':>10} {'1 thread':>10} {'ratio':>6}",
    ]
    for s in SUB_SPANS:
        a, b = r["parts"][s], r["parts_1t"][s]
        lines.append(f"{s:8} {a:9.3f}s {b:9.3f}s {b / a:6.2f}")
    lines.append(f"{'prove':8} {r['prove']:9.3f}s {r['prove_1t']:9.3f}s {r['prove_1t'] / r['prove']:6.2f}"
                 f"   cores used: {r['prove_cores']:.2f} (2 threads) / {r['prove_1t_cores']:.2f} (1 thread)")
    lines.append(f"prove process CPU (2 threads): {r['prove_cpu']:.2f} s")
    return "\n".join(lines)


class _Cube(Circuit):
    def define(self, cs, x, out):
        x, out = cs.private(x), cs.public(out)
        cs.assert_equal(x * x * x + x + 5, out)


def reference_baseline(runs: int) -> str:
    """Reference (py_ecc) vs fast prove of the tiny Cube circuit, process CPU seconds."""
    synth = Synthesizer(_Cube())
    waste = dict(tau=5, alpha=2, beta=3, gamma=7, delta=11)
    pk = setup_with_waste(synth.r1cs, ToxicWaste(**waste))
    rpk, _ = ref.generate_parameters(ref.from_r1cs(synth.r1cs), ref.ToxicWaste(**waste))
    w = synth.synthesize(x=3, out=35)
    z = Fr.to_ints(w.z)
    create_proof(pk, w, 1, 2)  # warm-up
    fast = [_timed(lambda: create_proof(pk, w, 1, 2)) for _ in range(runs)]
    slow = [_timed(lambda: ref.create_proof(rpk, z, 1, 2)) for _ in range(runs)]
    assert fast[0][0].to_bytes() == ref.proof_to_bytes(slow[0][0])
    f, sl = statistics.median(x[2] for x in fast), statistics.median(x[2] for x in slow)
    return (f"== baseline, Cube circuit ({synth.r1cs.n_constraints} constraints), process CPU per proof: "
            f"reference {sl * 1e3:.0f} ms, fast {f * 1e3:.1f} ms -> {sl / f:.0f}x (identical proof bytes)")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="14,16", help="comma-separated log2 sizes (14, 16)")
    ap.add_argument("--runs", type=int, default=3, help="proofs per size and thread count (median)")
    args = ap.parse_args(argv)
    print(f"cpus={os.cpu_count()} load={os.getloadavg()[0]:.1f}")
    print(reference_baseline(max(args.runs, 3)), flush=True)
    for log_n in (int(x) for x in args.sizes.split(",")):
        print(report(bench_size(log_n, args.runs)), flush=True)
    print(f"load at end={os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
