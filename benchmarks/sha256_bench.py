"""SHA-256 gadget compile speed: a label-sized hash (1,248 allocated bytes, 20 blocks) traced
by hand (cuzk.circuit.gadgets.sha256) and stamped (cuzk.circuit.gadgets.sha256_stamp), then
``--labels`` such hashes sharing one stamper, as a StackedCircuit would. Prints rows, trace and
compile seconds and rows per second of the whole trace + compile, and checks that both ways give
the same R1CS digest.

    python3 benchmarks/sha256_bench.py                  # 1 hash each way, then 4 stamped labels
    python3 benchmarks/sha256_bench.py --labels 16 --skip-hand
"""

from __future__ import annotations

import argparse
import os
import time

from cuzk.circuit import Circuit
from cuzk.circuit.gadgets.bit import Boolean
from cuzk.circuit.gadgets.sha256 import sha256
from cuzk.circuit.gadgets.sha256_stamp import Sha256Stamper
from cuzk.synth.program import compile_circuit

__all__ = ["main"]

LABEL_BYTES = 1248  # replica id, layer and node, 37 parents of 32 bytes: 20 blocks once padded


class Labels(Circuit):
    """``k`` hashes of the same ``LABEL_BYTES`` allocated bytes (their 9,984 boolean rows are
    traced once, so the figures are the hashes': a StackedCircuit's parents' bits come from
    ``to_bits_le`` calls of their own)."""

    def __init__(self, k: int, stamped: bool):
        self.k, self.stamped = k, stamped

    def input_shapes(self):
        return {"bits": (8 * LABEL_BYTES,)}

    def define(self, cs, bits):
        st = Sha256Stamper(cs) if self.stamped else None
        b = [Boolean.alloc(cs, v) for v in bits]
        for j in range(self.k):
            with cs.namespace(f"label {j}"):
                st.sha256(b) if st else sha256(cs, b)


def run(k: int, stamped: bool):
    marks = {}

    def progress(stage, done, total):
        marks.setdefault(stage, time.perf_counter())

    t0 = time.perf_counter()
    r1cs, _ = compile_circuit(Labels(k, stamped), None, progress=progress)
    t1 = time.perf_counter()
    place = marks.get("place", t1)
    n = r1cs.n_constraints
    print(f"{'stamped' if stamped else 'by hand':8s} labels={k:3d} rows={n:>10,d}  trace {place - t0:7.2f} s  "
          f"place {t1 - place:6.2f} s  total {t1 - t0:7.2f} s  {n / (t1 - t0):>12,.0f} rows/s", flush=True)
    return r1cs.digest


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labels", type=int, default=4)
    ap.add_argument("--skip-hand", action="store_true")
    a = ap.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    if not a.skip_hand:
        d0 = run(1, False)
        d1 = run(1, True)
        print("same R1CS digest:", d0 == d1)
    run(a.labels, True)


if __name__ == "__main__":
    main()
