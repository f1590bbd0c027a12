"""Helpers the Ray tests ship to the cluster's workers (importable there: the test cluster's
processes get this directory on PYTHONPATH)."""

import threading
import time

import cuzk


class SlowProver:
    """A real prover that sleeps first: time to kill its actor or node mid-proof."""

    def __init__(self, pk, delay):
        self.pk, self.delay, self._prover = pk, delay, None

    def prove(self, synthesized):
        time.sleep(self.delay)
        if self._prover is None:
            self._prover = cuzk.GpuProver(self.pk, device="cpu")
        return self._prover.prove(synthesized)


class Sleepy:
    """Stages that only sleep (the benchmark's prove-bound load)."""

    def __init__(self, synth_s=0.0, prove_s=0.0):
        self.synth_s, self.prove_s = synth_s, prove_s

    def synthesize(self, i):
        time.sleep(self.synth_s)
        return i

    def prove(self, w):
        time.sleep(self.prove_s)
        return ("proof", w)


class Unpicklable:
    """A synthesizer Ray cannot serialise (it holds a lock)."""

    def __init__(self):
        self.lock = threading.Lock()

    def synthesize(self, x):
        return x
