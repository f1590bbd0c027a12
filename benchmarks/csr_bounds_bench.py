"""What the CSR kernels' bounds checks cost, against a whole prove, in one process.

    python benchmarks/csr_bounds_bench.py [--challenges 1] [--runs 30]

The synthesis mat-vecs (``csr_matvec``, generated from ``scripts/cuzk_codegen/synth.py``) bound
every index by the arrays it indexes, so a key-cache file edited in place under a live mapping
gives a wrong product (and a proof that fails verification) instead of a read outside memory.
This measures that guard: a ``porep_like(leaves=2^10, challenges=c)`` circuit (c = 1: 3,227
constraints, domain 2^12) gets a snarkjs-convention development key with its R1CS attached; then,
median of ``--runs`` each:

* the three mat-vecs of ``SnarkjsProvingKey.witness`` (A·z, B·z, C·z) with the kernels as
  shipped, and with an unchecked copy of the same loop compiled here (the kernels before the
  guard: no clamp of the row bounds, no column check);
* a whole prove as ``cuzk groth16 prove`` does it: ``witness`` + ``GpuProver(device="cpu").prove``
  (verification included).

It prints both and the ratio (checked − unchecked) / prove, which must stay under 1 %.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from numba import njit


def _unchecked(kern):
    """The mat-vec loop without the bounds guard, over ``kern``'s field (same constants)."""
    fr, L, m = kern.fr, kern.L, (kern._M0, kern._M1, kern._M2, kern._M3)  # noqa: N806
    m0, m1, m2, m3 = m

    @njit(nogil=True)
    def matvec(indptr, indices, data, z):
        rows = indptr.shape[0] - 1
        out = np.empty((rows, L), dtype=np.uint64)
        for r in range(rows):
            acc = fr.zero()
            for k in range(indptr[r], indptr[r + 1]):
                v = fr.load(z, np.int64(indices[k]))
                if not (data[k, 0] == m0 and data[k, 1] == m1 and data[k, 2] == m2 and data[k, 3] == m3):
                    v = fr.mul(fr.load(data, k), v)
                acc = fr.add(acc, v)
            fr.store(out, r, acc)
        return out

    return matvec


def _median(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--challenges", type=int, default=1)
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args(argv)

    from cuzk.circuits import porep_like
    from cuzk.formats.snarkjs_setup import setup_snarkjs
    from cuzk.prover import GpuProver
    from cuzk.synth import Synthesizer
    from cuzk.synth.kernels import for_curve

    circuit = porep_like(leaves=2**10, challenges=args.challenges)
    synth = Synthesizer(circuit)
    t = time.perf_counter()
    pk = setup_snarkjs(synth.r1cs, np.random.default_rng(1))
    print(f"{synth.r1cs.n_constraints} constraints, {synth.r1cs.n_vars} variables; setup {time.perf_counter() - t:.1f} s")
    z = np.ascontiguousarray(synth.synthesize(**circuit.sample_inputs(seed=1)).z)
    kern = for_curve(pk.curve)
    mats = [(m.indptr, m.indices, m.data) for m in (pk.matrix_a, pk.matrix_b, pk.r1cs.c)]
    plain = _unchecked(kern)
    for m in mats:  # compile both, and check they agree on a sound matrix
        assert np.array_equal(kern.csr_matvec(*m, z), plain(*m, z))
    prover = GpuProver(pk, device="cpu")
    prover.prove(pk.witness(z))  # warm-up
    checked = _median(lambda: [kern.csr_matvec(*m, z) for m in mats], args.runs)
    unchecked = _median(lambda: [plain(*m, z) for m in mats], args.runs)
    prove = _median(lambda: prover.prove(pk.witness(z)), max(3, args.runs // 5))
    ratio = (checked - unchecked) / prove
    print(f"mat-vecs A, B, C: checked {checked * 1e3:.3f} ms, unchecked {unchecked * 1e3:.3f} ms "
          f"(guard {(checked - unchecked) * 1e6:+.1f} us)")
    print(f"prove (witness + prove + verify): {prove * 1e3:.1f} ms")
    print(f"guard / prove = {100 * ratio:+.4f} %  ({'under' if ratio < 0.01 else 'OVER'} 1 %)")
    return 0 if ratio < 0.01 else 1


if __name__ == "__main__":
    raise SystemExit(main())
