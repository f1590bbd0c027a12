"""gpu_check's PoRep section: bit-aware MSMs on a PoRep-like vector and a 2 KiB partition proof.

1. The bit-aware MSM (ones summed on the device, zeros skipped, the rest through Pippenger;
   ``cuzk.kernels.cuda_bits``) against the general MSM over the same resident points and
   scalars, G1 and G2 at 2^22 on a GPU: a synthetic vector with 95 % of its entries 0 or 1, as
   a PoRep witness has (benchmarks/bit_msm_bench.py's ``synthetic_scalars``). Both results are
   checked against one CPU MSM of the folded scalars (points tiled from 4096 bases).
2. A real sealing proof: a 2 KiB sector (StackedDrg2KiBV1_1) sealed by the native sealer, its C1
   vanilla proofs, the StackedCircuit's partition 0 synthesized and set up, all in a background
   process started with the run (:func:`prepare_partition`); then proved on the device with the
   general and the bit-aware MSMs (``GpuProver(bit_msm=...)``), each proof timed (median) with its
   sub-spans (H and the five MSMs, wall and device time): the same proof bytes for fixed (r, s)
   both ways, verified, deterministic, a wrong public input rejected.

On the host build (CI's rehearsal) part 1 runs at toy sizes and part 2 is noted as skipped: a
2.7M-constraint partition is minutes of host-build kernels.
"""

from __future__ import annotations

import random
import time

import numpy as np

from bit_msm_bench import synthetic_scalars  # noqa: E402 - benchmarks/ is on sys.path (gpu_check.py)
from cuzk.field import Fr
from cuzk.field import FR
from cuzk.kernels import cuda
from cuzk.curves import get as _get_curve
BLS_CUDA = cuda.kernels_for(_get_curve("bls12_381").cuda)  # BLS12-381's CUDA kernels

__all__ = ["porep_section", "prepare_partition", "PARTITION", "SEED"]

PARTITION = "porep_2k_p0"  # the saved partition's name under gpu_check's --work
PROOF_ID = 5  # StackedDrg2KiBV1_1: one partition of 2 challenges, 2 layers
SEED = bytes(range(100, 132))


def prepare_partition(work: str, save_proof) -> None:
    """Seal a 2 KiB sector, build its C1, synthesize and set up partition 0 of its StackedCircuit,
    and save key + witness with ``save_proof`` (gpu_check.save_proof); prints each step's time."""
    import cuzk
    from cuzk.circuits.filecoin.porep import fr32_pad, seal
    from cuzk.circuits.filecoin.porep.c1 import circuit_inputs, commit_phase1
    from cuzk.circuits.filecoin.porep.circuit import StackedCircuit
    from cuzk.groth16 import setup

    steps = {}
    t = time.perf_counter()
    data = fr32_pad(random.Random(7).randbytes(2032))
    sealed = seal(data, registered_proof=PROOF_ID, prover_id=bytes(range(32)), sector_id=42, ticket=bytes([9] * 32))
    c1 = commit_phase1(sealed, SEED)
    steps["seal + C1"] = time.perf_counter() - t
    t = time.perf_counter()
    synth = cuzk.Synthesizer(StackedCircuit(2048, api_version="1.1"))
    steps["trace"] = time.perf_counter() - t
    t = time.perf_counter()
    pk, _ = setup(synth.r1cs, rng=np.random.default_rng(3))
    steps["setup"] = time.perf_counter() - t
    t = time.perf_counter()
    w = synth.synthesize(**circuit_inputs(c1, 0))
    steps["synthesize"] = time.perf_counter() - t
    for k, v in steps.items():
        print(f"2 KiB PoRep partition: {k} {v:.1f} s", flush=True)
    save_proof(PARTITION, work, pk, w, synth.r1cs.n_constraints, steps=steps)


def _bits_msm(ctx, group: str, log_n: int) -> None:
    from gpu_check_sections import _cpu_msm, fold_scalars, tiled_points, time_calls

    rt, rep = ctx.rt, ctx.rep
    n = 1 << log_n
    host_pts, base = tiled_points(group, n)
    pts = BLS_CUDA.upload_points(host_pts)
    del host_pts
    sc = synthetic_scalars(n, 0.95, FR.modulus, np.random.default_rng(22))
    dsc = rt.asarray(sc.view(np.uint32))
    bits = getattr(BLS_CUDA, f"msm_bits_{group}")
    reps = max(1, ctx.sz.reps - 2)
    t_gen = time_calls(rt, lambda: cuda.run_msm(rt, group, pts.words, dsc, n), reps)
    t_bits = time_calls(rt, lambda: bits(pts, sc), reps)  # the host split of the scalars included
    want = _cpu_msm(group, base, fold_scalars(sc, len(base)))
    ok_gen = bool((cuda.run_msm(rt, group, pts.words, dsc, n) == want).all())
    ok_bits = bool((bits(pts, sc) == want).all())
    label = f"{group.upper()} MSM 2^{log_n}, 95 % bits"
    rep.row("porep", f"{label}, general", verified=ok_gen, note=t_gen.note(), **t_gen.fields())
    rep.row("porep", f"{label}, bit-aware", verified=ok_bits,
            note=f"{t_gen.median / t_bits.median:.2f}x the general MSM; {t_bits.note()}", **t_bits.fields())


def _partition(ctx) -> None:
    import cuzk
    from cuzk.groth16 import prepare_verifying_key
    from cuzk.kernels.bit_split import split_bits
    from gpu_check_proofs import _proof_rows

    rep = ctx.rep
    pk, w, public = ctx.background.proof(PARTITION, timeout=240, task="porep")
    split = split_bits(np.ascontiguousarray(Fr.from_mont(w.z)))  # z is Montgomery; the split wants integers
    rep.row("porep", f"2 KiB PoRep partition: {pk.n_constraints:,} constraints, domain 2^{pk.domain_size.bit_length() - 1}",
            note=f"witness {split.bit_fraction:.3f} bits (zeros {len(split.zeros) / len(w.z):.3f})")
    pvk = prepare_verifying_key(pk.vk)
    proofs = {}
    for mode in (False, True):
        t0 = time.perf_counter()
        prover = cuzk.GpuProver(pk, device="cuda", verify=False, bit_msm=mode)
        rep.row("porep", f"2 KiB partition, bit_msm={mode}: key upload + warm-up", ms=(time.perf_counter() - t0) * 1e3)
        proofs[mode], _ = _proof_rows(ctx, None, prover, w, public, pvk, label=f"2 KiB PoRep partition, bit_msm={mode}")
        del prover
    rep.row("porep", "2 KiB partition: bit-aware proof == general proof (r, s fixed)", verified=proofs[False] == proofs[True])


def porep_section(ctx) -> None:
    toy = ctx.sz.toy
    for group, log_n in ((("g1", 8), ("g2", 6)) if toy else (("g1", 22), ("g2", 22))):
        _bits_msm(ctx, group, log_n)
    if "porep" not in ctx.background.procs:
        ctx.rep.note("2 KiB PoRep partition: not proved here (host build or fake CuPy: minutes of host kernels; "
                     "a GPU run proves it)")
        return
    _partition(ctx)
