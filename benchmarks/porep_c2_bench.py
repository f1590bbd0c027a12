"""A PoRep C2 partition on the CPU: compile, synthesis rate, PCE size, the proof with its stage
split, the witness MSMs bit-aware against general on the real witness (same process), and the
whole C2 through a cuzk.Engine, verified.

    python benchmarks/porep_c2_bench.py                   # 2 KiB, every core, 3 proofs per mode
    python benchmarks/porep_c2_bench.py --threads 2 --runs 3 --keys /tmp/cuzk-keys
    python benchmarks/porep_c2_bench.py --size 8MiB --runs 1 --keys /tmp/cuzk-keys
    python benchmarks/porep_c2_bench.py --compiles 5 --runs 1 --msm-runs 1 --keys /tmp/cuzk-keys   # + the compile repeated
    python benchmarks/porep_c2_bench.py --threads 2 --bellperson   # + bellperson's CPU prover, same key
    python benchmarks/porep_c2_bench.py --count 32GiB    # only: a production partition traced and counted
    python benchmarks/porep_c2_bench.py --save-witness z.npy   # only: seal, compile, synthesize, save z
    python benchmarks/porep_c2_bench.py --threads 2 --msm-only --msm-runs 7 --keys /tmp/cuzk-keys  # only the witness MSMs
    python benchmarks/porep_c2_bench.py --threads 2 --ones-blocks 4 --keys /tmp/cuzk-keys  # + with the key's block sums

Steps: seal a sector natively (StackedDrg2KiBV1_1 or 8MiBV1_1) and build its C1; trace the partition's
StackedCircuit (``Synthesizer``: stamped compile to a PCE) and report constraints/s of the
compile and of each synthesis (witness + three mat-vecs), and the PCE's bytes per constraint;
set up a development key (or read it from ``--keys``, written there on the first run); prove partition 0
once per mode (the first proofs, Numba cache loads included, printed apart), then with
``bit_msm=False`` and ``bit_msm="auto"`` alternately (medians, each verified, the same bytes for
fixed r, s) with each sub-span's median; then the A, B1, B2 and L MSMs alone over the key's points
and the witness's scalars, the general MSM against the bit-aware one, ``--msm-runs`` alternated
pairs (medians; ratio = the median of general / bit-aware), and the four together (the sums of
their medians; from the proofs too, the sums of the four sub-spans' medians per mode).
``--ones-blocks B`` adds a third mode to both: the bit-aware MSMs with the key's block sums
(``cuzk.groth16.bit_msm.blocks_for``, built once and timed). ``--msm-only`` skips the proofs and
the Engine run.

``--count SIZE`` does none of that: it traces one partition of a production sector size (32 GiB:
18 challenges of 11 layers, ~130M constraints) with ``cs.repeat`` stamping and counts its PCE
without building it (``cuzk.synth.placement.pce_sizes``), and prints the time and peak memory.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import time

import attrs
import numpy as np

import cuzk
from cuzk.circuits.filecoin.porep import c2, commit_phase1, fr32_pad, seal
from cuzk.circuits.filecoin.porep.c1 import circuit_inputs
from cuzk.engine.circuit import pce_bytes
from cuzk.groth16 import create_proof, setup, verify
from cuzk.groth16.bit_msm import blocks_for
from cuzk.groth16.prove import Bases, query_scalars
from cuzk.curves import get as _get_curve
cpu = _get_curve("bls12_381").kernels  # BLS12-381's CPU kernels
from cuzk.kernels.bit_split import split_bits
from cuzk.timeline import Timeline, stage_context

SIZES = {"2KiB": (5, 2048), "8MiB": (6, 8 << 20)}  # StackedDrg<size>V1_1 ids and sector bytes
SUBS = ("H", "MSM_A", "MSM_B1", "MSM_B2", "MSM_L", "MSM_H")
COUNT_SIZES = {"2KiB": 2048, "8MiB": 8 << 20, "512MiB": 512 << 20, "32GiB": 32 << 30, "64GiB": 64 << 30}


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or "unknown CPU"


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def load_or_setup(path, r1cs, kind: str = "porep"):
    from cuzk.groth16 import ProvingKey

    if path:  # one file per circuit: the R1CS digest in its name
        os.makedirs(path, exist_ok=True)
        path = os.path.join(path, f"{kind}-{r1cs.digest[:16]}.params")
    if path and os.path.exists(path):
        return ProvingKey.read(path, checked=False, r1cs=r1cs), "loaded"  # our own file, written below
    dt, (pk, _) = timed(lambda: setup(r1cs, rng=np.random.default_rng(3)))
    if path:
        pk.write(path)
    return pk, f"set up in {dt:.1f} s"


def synthesis_median(synth, inputs):
    """Synthesize three times and print the median rates; returns the witness."""
    n = synth.r1cs.n_constraints
    times = []
    for _ in range(3):
        t0, c0 = time.perf_counter(), time.thread_time()
        w = synth.synthesize(**inputs)
        times.append((time.perf_counter() - t0, time.thread_time() - c0))
    wall, cpu_s = statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)
    print(f"synthesis (witness + A·z, B·z, C·z), median of 3: {wall:.3f} s wall, {cpu_s:.3f} s CPU of this "
          f"thread: {n / wall / 1e6:.2f} M constraints/s wall, {n / cpu_s / 1e6:.2f} M/s per core")
    return w


def prove_once(pk, w, mode, threads, blocks=None):
    """One proof with ``bit_msm=mode`` (``"blocks"``: "auto" with the key's block sums)."""
    tl = Timeline()
    bases = attrs.evolve(Bases.of(pk), blocks=blocks) if mode == "blocks" else None
    bit_msm = "auto" if mode == "blocks" else mode
    with stage_context(tl, job_id=0):
        dt, proof = timed(lambda: create_proof(pk, w, 5, 6, backend="cpu", threads=threads, bit_msm=bit_msm,
                                               bases=bases))
    return dt, proof, {s.stage: s.seconds for s in tl.spans() if s.stage in SUBS}


def _label(mode) -> str:
    return "bit_msm='auto' with block sums" if mode == "blocks" else f"bit_msm={mode!r}"


def prove_modes(pk, w, sealed, c1, size: str, threads, runs: int, blocks=None) -> None:
    """Prove partition 0 with ``bit_msm=False`` and ``"auto"`` (and with the key's block sums,
    given ``blocks``) alternately: medians, stage split, and the four witness MSMs' share of the
    proofs, general against bit-aware."""
    rows = {False: [], "auto": []} | ({"blocks": []} if blocks else {})
    proofs = {}
    # the first proof of each mode loads its kernels from Numba's cache (the bit-aware ones: seconds);
    # a prover that stays up pays that once (cuzk.prover.GpuProver(warm_up=True) overlaps it), so it
    # is timed and printed here, outside the medians
    for mode in rows:
        dt, proofs[mode], _ = prove_once(pk, w, mode, threads, blocks)
        print(f"first proof in this process, {_label(mode)}: {dt:.2f} s (kernel loads included)")
    for _ in range(runs):
        for mode in rows:
            dt, proof, subs = prove_once(pk, w, mode, threads, blocks)
            rows[mode].append((dt, subs))
            assert proof == proofs[mode]
    public = c2.seal_public_inputs(sealed.proof, c1.replica_id, c1.comm_d, c1.comm_r, c1.seed, 0)
    ok = all(verify(pk.vk, public, p) and p == proofs[False] for p in proofs.values())
    for mode, rs in rows.items():
        med = statistics.median(r[0] for r in rs)
        split = ", ".join(f"{s} {statistics.median(r[1].get(s, 0) for r in rs):.2f}" for s in SUBS)
        print(f"prove {size} partition, {_label(mode)}: {med:.2f} s (median of {len(rs)}; {split})")
    base = statistics.median(r[0] for r in rows[False])
    print(f"  bit_msm='auto' / general: {base / statistics.median(r[0] for r in rows['auto']):.2f}x; "
          f"proofs verify and are equal: {ok}")
    witness = ("MSM_A", "MSM_B1", "MSM_B2", "MSM_L")
    per_mode = {mode: sum(statistics.median(r[1].get(s, 0) for r in rs) for s in witness) for mode, rs in rows.items()}
    print(f"  the four witness MSMs in these proofs (MSM_A + B1 + B2 + L, medians): general {per_mode[False]:.3f} s, "
          f"bit-aware {per_mode['auto']:.3f} s, {per_mode[False] / per_mode['auto']:.2f}x"
          + (f"; with block sums {per_mode['blocks']:.3f} s, {per_mode[False] / per_mode['blocks']:.2f}x"
             if blocks else ""))


def witness_msms(pk, w, threads, msm_runs: int, blocks=None) -> None:
    """The A, B1, B2 and L MSMs alone over the key's points and the witness's scalars, general
    against bit-aware (and bit-aware with the key's block sums, given ``blocks``) in alternated
    runs (medians), and the four together."""
    z = cuzk.curves.get(pk.curve).Fr.from_mont(w.z)
    a_sc, b_sc, l_sc = query_scalars(pk, z)
    kinds = ("general", "bit-aware") + (("with block sums",) if blocks else ())
    total = dict.fromkeys(kinds, 0.0)
    for label, q, group, sc in (("A", "a", "g1", a_sc), ("B1", "b_g1", "g1", b_sc), ("B2", "b_g2", "g2", b_sc),
                                ("L", "l", "g1", l_sc)):
        pts = getattr(pk, q)
        bits = getattr(cpu, f"msm_bits_{group}")
        run = {"general": lambda: getattr(cpu, f"msm_{group}")(pts, sc, threads),
               "bit-aware": lambda: bits(pts, sc, threads),
               "with block sums": lambda: bits(pts, sc, threads, blocks=blocks[q])}
        want = run["general"]()  # compile / cache load
        for k in kinds[1:]:
            assert np.array_equal(run[k](), want)
        times = {k: [] for k in kinds}
        for _ in range(msm_runs):  # alternated, so all see the same load
            for k in kinds:
                times[k].append(timed(run[k])[0])
        med = {k: statistics.median(v) for k, v in times.items()}
        ratio = {k: statistics.median(g / t for g, t in zip(times["general"], times[k])) for k in kinds[1:]}
        for k in kinds:
            total[k] += med[k]
        frac = split_bits(sc).bit_fraction
        print(f"MSM_{label:<2} {len(sc):>9,} points, {frac:.3f} bits: general {med['general']:.3f} s, "
              + ", ".join(f"{k} {med[k]:.3f} s ({ratio[k]:.2f}x)" for k in kinds[1:])
              + (f" (medians of {msm_runs})" if msm_runs > 1 else ""))
    print("the four witness MSMs alone (sums of the medians): general {:.3f} s, ".format(total["general"])
          + ", ".join(f"{k} {total[k]:.3f} s, {total['general'] / total[k]:.2f}x" for k in kinds[1:]))


def key_blocks(pk, block: int, threads):
    """The key's block sums for the bit-aware MSMs, built once (time and bytes printed)."""
    dt, blocks = timed(lambda: blocks_for(pk, block, threads))
    nbytes = sum(b.nbytes for b in blocks.values())
    qbytes = sum(getattr(pk, q).nbytes for q in blocks)
    print(f"block sums of {block} rows for {', '.join(blocks)}: {nbytes / 2**20:.0f} MiB "
          f"({nbytes / qbytes:.2f} of those queries' points), built in {dt:.2f} s")
    return blocks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=sorted(SIZES), default="2KiB")
    ap.add_argument("--threads", type=int, default=None, help="prover threads (default: every core)")
    ap.add_argument("--runs", type=int, default=3, help="proofs per mode")
    ap.add_argument("--msm-runs", type=int, default=3, help="general / bit-aware pairs per witness MSM (medians)")
    ap.add_argument("--bellperson", action="store_true", help="also bellperson's prover (the Rust oracle) on the same key")
    ap.add_argument("--compiles", type=int, default=1, help="compile the partition this many times (the first apart)")
    ap.add_argument("--keys", default=None, help="a folder for the key: read if this circuit's is there, else written")
    ap.add_argument("--save-witness", metavar="PATH", default=None,
                    help="save partition 0's witness (Montgomery rows, for bit_msm_bench.py --witness PATH "
                         "--montgomery) and stop before the key and the proofs")
    ap.add_argument("--ones-blocks", metavar="B", type=int, default=None,
                    help="also the bit-aware MSMs with the key's block sums of B rows (2, 4 or 8)")
    ap.add_argument("--msm-only", action="store_true",
                    help="skip the proofs and the Engine run: only the witness MSMs, general against bit-aware")
    ap.add_argument("--count", metavar="SIZE", choices=sorted(COUNT_SIZES), default=None,
                    help="only trace and count one partition of this production sector size")
    args = ap.parse_args()
    print(f"host: {cpu_name()}, {os.cpu_count()} cores; threads {args.threads or 'all'}")
    if args.count:
        count_partition(args.count)
        return

    proof_id, nbytes = SIZES[args.size]
    dt, sealed = timed(lambda: seal(fr32_pad(random.Random(7).randbytes(nbytes // 128 * 127)), registered_proof=proof_id,
                                    prover_id=bytes(range(32)), sector_id=42, ticket=bytes([9] * 32)))
    c1 = commit_phase1(sealed, bytes(range(100, 132)))
    print(f"seal + C1 {dt:.2f} s (first call includes Numba cache loads)")
    dt, synth = timed(lambda: cuzk.Synthesizer(c2.circuit_for(sealed.proof)))
    r1cs = synth.r1cs
    n = r1cs.n_constraints
    nnz = r1cs.a.nnz + r1cs.b.nnz + r1cs.c.nnz
    pce = pce_bytes(synth)
    print(f"compile (trace + PCE) {dt:.2f} s: {n:,} constraints, {n / dt / 1e6:.2f} M constraints/s; "
          f"nnz {nnz:,}; PCE (R1CS + witness program arrays) {pce / 2**20:.1f} MiB = {pce / n:.0f} B/constraint")
    if args.compiles > 1:  # the same compile again in this process (an Engine registering more circuits)
        again = [timed(lambda: cuzk.Synthesizer(c2.circuit_for(sealed.proof)))[0] for _ in range(args.compiles - 1)]
        med = statistics.median(again)
        print(f"compile again, {len(again)} times: median {med:.2f} s = {n / med / 1e6:.2f} M constraints/s "
              f"({', '.join(f'{t:.2f}' for t in again)} s)")
    w = synthesis_median(synth, circuit_inputs(c1, 0))
    if args.save_witness:
        np.save(args.save_witness, w.z)
        print(f"witness: {w.z.shape[0]:,} rows (Montgomery) saved to {args.save_witness}")
        return
    pk, how = load_or_setup(args.keys, r1cs)
    print(f"key: {how}; domain 2^{pk.domain_size.bit_length() - 1}")

    blocks = key_blocks(pk, args.ones_blocks, args.threads) if args.ones_blocks else None
    if not args.msm_only:
        prove_modes(pk, w, sealed, c1, args.size, args.threads, args.runs, blocks)
    witness_msms(pk, w, args.threads, args.msm_runs, blocks)
    if args.msm_only:
        return

    with cuzk.Engine(device="cpu") as engine:
        engine.register("porep", synth, pk)
        dt, out = timed(lambda: c2.commit_phase2(c1, None, engine=engine, name="porep"))
    ok = c2.verify_commit_phase2(c1, pk.vk, out)
    print(f"C2 through cuzk.Engine (synthesis + prove of {len(c1.vanilla_proofs)} partition(s)): {dt:.2f} s, "
          f"{len(out)} bytes, verifies against the statement: {ok}")
    if args.bellperson:
        bellperson_c2(c1, pk, args.threads or os.cpu_count(), dt)


def count_partition(size: str) -> None:
    """Trace partition 0 of a production sector size (a COUNT_SIZES key) with stamping and count
    its PCE, unbuilt."""
    import resource

    from cuzk.circuits.filecoin import StackedCircuit
    from cuzk.synth.placement import pce_sizes
    from cuzk.synth.program import trace

    dt, (cs, _) = timed(lambda: trace(StackedCircuit(COUNT_SIZES[size])))
    dc, sizes = timed(lambda: pce_sizes(cs))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux
    print(f"{size} sector's partition: {sizes['rows']:,} constraints, {cs.n_public + 1} inputs; "
          f"traced in {dt:.1f} s, counted in {dc:.1f} s ({dt + dc:.1f} s); its PCE would take "
          f"{sizes['memory_bytes'] / 2**30:.1f} GiB; peak RSS {peak:.2f} GiB")


def bellperson_c2(c1, pk, threads: int, cuzk_seconds: float) -> None:
    """bellperson's CPU prover (the Rust oracle's ``prove``) on the same C1 with this key written as
    a bellperson .params file: the same R1CS row by row, so bellperson proves with cuzk's key, and
    cuzk's verifier checks bellperson's proof."""
    import subprocess
    import sys
    import tempfile

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "oracles"))
    from rust_oracle import oracle_binary

    with tempfile.TemporaryDirectory() as tmp:
        params, c1_path, proof_path = (os.path.join(tmp, n) for n in ("key.params", "c1.json", "c2.proof"))
        pk.write(params)
        with open(c1_path, "w") as f:
            f.write(c1.to_json())
        env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
        res = subprocess.run([str(oracle_binary()), "--tmp", tmp, "prove", "--c1", c1_path, "--params", params,
                              "--out", proof_path], capture_output=True, text=True, env=env, check=True)
        out = json.loads(res.stdout)
        with open(proof_path, "rb") as f:
            ok = c2.verify_commit_phase2(c1, pk.vk, f.read())
    t = sum(out["prove_seconds"])
    print(f"bellperson 0.27 CPU prover, same C1 and key, RAYON_NUM_THREADS={out['threads']}: synthesis + prove "
          f"{t:.2f} s (params load {out['params_load_seconds']:.1f} s); cuzk's Engine C2 {cuzk_seconds:.2f} s -> "
          f"{t / cuzk_seconds:.2f}x; bellperson's proof verifies under cuzk: {ok}")


if __name__ == "__main__":
    main()
