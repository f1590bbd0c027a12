"""Field-arithmetic micro-benchmarks: ns per operation on one thread, against Python ints.

Each row of ``CASES`` is ``(name, make)``: ``make(rng)`` returns ``run(iters)``, which performs
``iters`` operations (a chain of dependent operations inside one @njit loop, so latency is
measured and nothing is optimised away). Rows for other layers (curve, pairing) are added by
appending to ``CASES``; ``BASELINES`` pairs a row with a Python baseline row for the ratio.

    python3 benchmarks/field_bench.py            # all rows + compile/cache-load times
    python3 benchmarks/field_bench.py --quick    # fewer iterations
    python3 benchmarks/field_bench.py --only fr.  # rows whose name contains "fr."
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from numba import njit

from cuzk.field import intrinsics
from cuzk.field import Fq, Fr
from cuzk.curves.bls12_381 import fq, fq2, fr

__all__ = ["CASES", "BASELINES", "measure", "main"]


# Dependent chains: each result feeds the next operation, so latency is measured and nothing is
# optimised away. The op is a jitted function passed in (Numba specialises per op, caches, and
# inlines it as if written here: fq.mul measures the same either way).
@njit(cache=True, nogil=True)
def _binary_chain(op, load, store, a, n):
    x, y = load(a, 0), load(a, 1)
    for _ in range(n):
        x = op(x, y)
    store(a, 0, x)


@njit(cache=True, nogil=True)
def _unary_chain(op, load, store, a, n):
    x = load(a, 0)
    for _ in range(n):
        x = op(x)
    store(a, 0, x)


@njit(cache=True, nogil=True)
def _fr_sqr_by_mul_i128(x):  # fr.sqr without BMI2/ADX before the dedicated square (A/B baseline)
    return fr._mul_i128(x, x)


@njit(cache=True, nogil=True)
def _fq_sqr_by_mul_i128(x):  # fq.sqr before the dedicated square (A/B baseline)
    return fq._mul_i128(x, x)


@njit(cache=True, nogil=True)
def _fr_inv_fermat(x):  # fr.inv before safegcd (A/B baseline)
    return fr.pow_(x, fr.P_MINUS_2)


@njit(cache=True, nogil=True)
def _fq_inv_fermat(x):  # fq.inv before safegcd (A/B baseline)
    return fq.pow_(x, fq.P_MINUS_2)


@njit(cache=True, nogil=True)
def _fq_sqr_x4(x):  # four call sites: LLVM calls the square instead of inlining it (as in pow_)
    return fq.sqr(fq.sqr(fq.sqr(fq.sqr(x))))


@njit(cache=True, nogil=True)
def _fq_sqr_by_mul_x4(x):
    x = fq._mul_i128(x, x)
    x = fq._mul_i128(x, x)
    x = fq._mul_i128(x, x)
    return fq._mul_i128(x, x)


def _kernel(op, mod, field=None, *, unary=False, per_call=1):
    """A row: a chain of ``op`` over elements of ``mod`` (fr/fq/fq2); ``per_call`` ops per step."""
    chain = _unary_chain if unary else _binary_chain

    def make(rng):
        a = field.random(2, rng) if field is not None else Fq.random(4, rng).reshape(2, 2, 6)  # fq2
        return lambda iters: chain(op, mod.load, mod.store, a, max(1, iters // per_call))

    return make


def _python_mul(p):
    def make(rng):
        x, y = (int(rng.integers(1, 2**62)) ** 7 % p for _ in range(2))

        def run(iters):
            z = x
            for _ in range(iters):
                z = z * y % p

        return run

    return make


def _array_op(field, op):
    def make(rng):
        a, b = field.random(1024, rng), field.random(1024, rng)

        def run(iters):
            for _ in range(max(1, iters // 1024)):
                op(a, b)

        return run

    return make


# (name, make, iterations at full size); append rows here.
CASES = [
    ("fr.mul (dependent chain)", _kernel(fr.mul, fr, Fr), 2_000_000),
    ("fr.mul i128 fallback (dependent chain)", _kernel(fr._mul_i128, fr, Fr), 2_000_000),
    ("fr.sqr (dependent chain)", _kernel(fr.sqr, fr, Fr, unary=True), 2_000_000),
    ("fr.sqr i128 fallback (dependent chain)", _kernel(fr._sqr_i128, fr, Fr, unary=True), 2_000_000),
    ("fr.sqr as i128 mul(a, a), before (dependent chain)", _kernel(_fr_sqr_by_mul_i128, fr, Fr, unary=True), 2_000_000),
    ("fq.mul (dependent chain)", _kernel(fq.mul, fq, Fq), 1_000_000),
    ("fq.sqr (dependent chain)", _kernel(fq.sqr, fq, Fq, unary=True), 1_000_000),
    ("fq.sqr as i128 mul(a, a), before (dependent chain)", _kernel(_fq_sqr_by_mul_i128, fq, Fq, unary=True), 1_000_000),
    ("fq.sqr called, 4 sites (dependent chain)", _kernel(_fq_sqr_x4, fq, Fq, unary=True, per_call=4), 1_000_000),
    ("fq.sqr as mul(a, a) called, 4 sites (dependent chain)", _kernel(_fq_sqr_by_mul_x4, fq, Fq, unary=True, per_call=4), 1_000_000),
    ("fq2.mul (dependent chain)", _kernel(fq2.mul, fq2), 500_000),
    ("fq2.sqr (dependent chain)", _kernel(fq2.sqr, fq2, unary=True), 500_000),
    ("fr.add (dependent chain)", _kernel(fr.add, fr, Fr), 5_000_000),
    ("fq.add (dependent chain)", _kernel(fq.add, fq, Fq), 5_000_000),
    ("fr.inv (safegcd)", _kernel(fr.inv, fr, Fr, unary=True), 5_000),
    ("fr.inv by Fermat, before", _kernel(_fr_inv_fermat, fr, Fr, unary=True), 2_000),
    ("fq.inv (safegcd)", _kernel(fq.inv, fq, Fq, unary=True), 3_000),
    ("fq.inv by Fermat, before", _kernel(_fq_inv_fermat, fq, Fq, unary=True), 1_000),
    ("Fr.mul array (1024/call, per element)", _array_op(Fr, Fr.mul), 1_024_000),
    ("Fq.mul array (1024/call, per element)", _array_op(Fq, Fq.mul), 1_024_000),
    ("Fr.batch_inverse (1024/call, per element)", _array_op(Fr, lambda a, b: Fr.batch_inverse(a)), 204_800),
    ("python int a*b % r", _python_mul(Fr.modulus), 200_000),
    ("python int a*b % p", _python_mul(Fq.modulus), 200_000),
]

if intrinsics.HAVE_ADX:  # the asm kernels exist only on BMI2+ADX CPUs
    CASES[8:8] = [
        ("fq.mul asm _mul_adx (dependent chain)", _kernel(fq._mul_adx, fq, Fq), 1_000_000),
        ("fq.sqr asm _sqr_adx (dependent chain)", _kernel(fq._sqr_adx, fq, Fq, unary=True), 1_000_000),
    ]

# (row, baseline row): printed as baseline / row.
BASELINES = [
    ("fr.mul (dependent chain)", "fr.mul i128 fallback (dependent chain)"),
    ("fr.sqr (dependent chain)", "fr.sqr i128 fallback (dependent chain)"),
    ("fr.sqr i128 fallback (dependent chain)", "fr.sqr as i128 mul(a, a), before (dependent chain)"),
    ("fq.sqr (dependent chain)", "fq.sqr as i128 mul(a, a), before (dependent chain)"),
    ("fq.sqr called, 4 sites (dependent chain)", "fq.sqr as mul(a, a) called, 4 sites (dependent chain)"),
    ("fq.mul asm _mul_adx (dependent chain)", "fq.mul (dependent chain)"),
    ("fq.sqr asm _sqr_adx (dependent chain)", "fq.sqr (dependent chain)"),
    ("fr.inv (safegcd)", "fr.inv by Fermat, before"),
    ("fq.inv (safegcd)", "fq.inv by Fermat, before"),
    ("fr.mul (dependent chain)", "python int a*b % r"),
    ("fq.mul (dependent chain)", "python int a*b % p"),
]


def measure(cases, repeats: int = 5, scale: int = 1) -> dict[str, tuple[float, float]]:
    """name -> (median, min) ns per operation (thread CPU time) for ``[(name, run, iters)]``.

    Every run is warmed up first (compile/cache load), then the repeats go round-robin over
    all cases, so a burst of load from other processes hits every row alike. The min is the
    better estimate on a shared machine, the median the honest one.
    """
    prepared = [(name, run, max(1, iters // scale)) for name, run, iters in cases]
    for _, run, iters in prepared:
        run(max(1, iters // 100))
    times = {name: [] for name, _, _ in prepared}
    for _ in range(repeats):
        for name, run, iters in prepared:
            t0 = time.thread_time_ns()
            run(iters)
            times[name].append((time.thread_time_ns() - t0) / iters)
    return {k: (statistics.median(v), min(v)) for k, v in times.items()}


_FIRST_CALL = """
import time
t0 = time.perf_counter()
import numpy as np
from cuzk.field import Fq, Fr
import benchmarks.field_bench as fb
t1 = time.perf_counter()
a, b = Fr.random(4, np.random.default_rng(0)), Fq.random(4, np.random.default_rng(0))
Fr.mul(a, a); Fq.mul(b, b); Fr.batch_inverse(a); Fq.sqrt(b)
from cuzk.curves.bls12_381 import fq, fq2, fr
fb._binary_chain(fr.mul, fr.load, fr.store, a, 1); fb._binary_chain(fq.mul, fq.load, fq.store, b, 1)
fb._binary_chain(fq2.mul, fq2.load, fq2.store, b.reshape(2, 2, 6), 1)
t2 = time.perf_counter()
from cuzk._runtime import source_stamp
print(f"{source_stamp()} {t1 - t0:.3f} {t2 - t1:.3f}")
"""


def first_call_times(attempts: int = 3) -> tuple[tuple[float, float], tuple[float, float]]:
    """(import s, first calls s) in a fresh process with an empty cache, then with it warm.

    The cache directory is keyed by a hash of all cuzk sources, so an edit between the two
    runs would make the second one compile again; such a pair is detected and retried.
    """
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for _ in range(attempts):
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, CUZK_NUMBA_CACHE_DIR=d, PYTHONPATH=root)
            res = []
            for _ in range(2):
                out = subprocess.run(
                    [sys.executable, "-c", _FIRST_CALL], env=env, cwd=root, capture_output=True, text=True, check=True
                )
                stamp, imp, first = out.stdout.split()[-3:]
                res.append((stamp, float(imp), float(first)))
        if res[0][0] == res[1][0]:
            return res[0][1:], res[1][1:]
    raise RuntimeError("cuzk sources kept changing during the measurement; rerun when the tree is quiet")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="cuzk field micro-benchmarks")
    ap.add_argument("--quick", action="store_true", help="10x fewer iterations")
    ap.add_argument("--no-compile", action="store_true", help="skip the compile/cache-load subprocess runs")
    ap.add_argument("--only", default="", help="run only the rows whose name contains this")
    ap.add_argument("--repeats", type=int, default=5, help="round-robin repeats per row")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(2024)
    scale = 10 if args.quick else 1
    cases = [(name, make(rng), iters) for name, make, iters in CASES if args.only in name]
    results = measure(cases, repeats=args.repeats, scale=scale)
    print(f"{'case':45s} {'median ns':>10s} {'min ns':>10s}")
    for name, (med, best) in results.items():
        print(f"{name:45s} {med:10.1f} {best:10.1f}")
    for row, base in BASELINES:
        if row not in results or base not in results:
            continue
        print(f"ratio {base!r} / {row!r} (medians): {results[base][0] / results[row][0]:.2f}x")
    if not args.no_compile:
        (ci, cf), (wi, wf) = first_call_times()
        print(f"fresh process, empty cache: import {ci:.2f} s, first calls (compile) {cf:.2f} s")
        print(f"fresh process, warm cache:  import {wi:.2f} s, first calls (cache load) {wf:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
