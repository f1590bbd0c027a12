"""gpu_check's optional BN254 section (``--bn254``): a BN254 key through ``GpuProver(device="cuda")``.

The BN254 kernels are their own module (``-DCUZK_CURVE_BN254``, compiled by NVRTC on first use,
cuzk/kernels/cuda_runtime.py), so one row times that compile with the key's upload. The circuit
is a squaring chain (y <- y² + 7, n times: n + 1 constraints; porep_like's Poseidon is
BLS12-381's), 65,000 steps (a 2^16 domain) on a GPU and 1,000 on the host build, traced, set up
and synthesized on the CPU in the section. Checks: the GPU proof is byte-equal to the CPU
backend's for the same (r, s), it verifies, and a wrong public input does not.
"""

from __future__ import annotations

import time

from cuzk.circuit import Circuit

__all__ = ["bn254_section", "SquaringChain"]


class SquaringChain(Circuit):
    """Private x, public out = f^n(x) with f(y) = y² + 7 over the constraint system's field."""

    def __init__(self, n: int):
        self.n = n

    def define(self, cs, x, out):
        y = cs.private(x)
        for _ in range(self.n):
            y = y * y + 7
        cs.assert_equal(y, cs.public(out), name="chain")

    def sample_inputs(self, seed: int, modulus: int) -> dict:
        y = seed % modulus
        for _ in range(self.n):
            y = (y * y + 7) % modulus
        return {"x": seed % modulus, "out": y}


def bn254_section(ctx) -> None:
    import cuzk
    from cuzk import curves
    from cuzk.groth16 import create_proof, setup, verify

    n = 1_000 if ctx.sz.toy else 65_000
    r = curves.get("bn254").spec.fr.modulus
    circuit = SquaringChain(n)
    t0 = time.perf_counter()
    synth = cuzk.Synthesizer(circuit, curve="bn254")
    pk, vk = setup(synth.r1cs)
    inputs = circuit.sample_inputs(3, r)
    w = synth.synthesize(**inputs)
    ctx.rep.row("optional", f"BN254 chain of {n:,}: trace + setup + synthesis (CPU)", ms=(time.perf_counter() - t0) * 1e3)
    t0 = time.perf_counter()
    prover = cuzk.GpuProver(pk, device="cuda", verify=False)
    ctx.rep.row("optional", f"BN254 chain of {n:,}: kernel module + key upload + warm-up",
                ms=(time.perf_counter() - t0) * 1e3)
    prover.prove(w, r=5, s=6)  # first call: launch plans and their caches
    t0 = time.perf_counter()
    proof = prover.prove(w, r=5, s=6)
    ms = (time.perf_counter() - t0) * 1e3
    same = proof == create_proof(pk, w, 5, 6, backend="cpu")
    public = [inputs["out"]]
    ok = verify(vk, public, proof) and not verify(vk, [(public[0] + 1) % r], proof)
    ctx.rep.row("optional", f"prove BN254 chain of {n:,} GpuProver", ms=ms, verified=same and ok,
                note="byte-equal to the CPU backend's proof, verifies, a wrong public input does not")
