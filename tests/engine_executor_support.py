"""Synthesizers for tests/test_engine_executors.py, in a module of their own so worker processes
can import them by name (spawned workers unpickle classes by module and qualified name)."""

from __future__ import annotations

import os
import signal
import time

import numpy as np

from cuzk.synth import Synthesized

__all__ = ["GilSynth", "Unpicklable", "UnpicklableError", "broken_factory", "gil_factory"]


class UnpicklableError(Exception):
    """Cannot be rebuilt from its args (two required arguments, one given to __init__ by pickle)."""

    def __init__(self, a, b):
        super().__init__(f"{a}/{b}")


class GilSynth:
    """A pure-Python witness loop (holds the GIL for its whole run) with failure modes.

    ``synthesize(x, mode)``: "ok"; "raise" (ValueError); "unpicklable" (UnpicklableError);
    "exit" (os._exit(7)); "segv" (SIGSEGV to itself); "unsendable" (a result whose public
    inputs cannot be pickled); "sleep" (writes its pid to ``pidfile``,
    then sleeps until killed); "exit_system" (SystemExit, which must fail only the job); "warm"
    (public inputs: the Numba specialisations of the synthesis modules its process had loaded
    before this job, cuzk/engine/synth_warmup.py, and whether its ``warm_up()`` hook ran there).
    """

    warmed = False

    def __init__(self, n: int = 20000):
        self.n = n

    def warm_up(self) -> None:
        self.warmed = True

    def estimate_bytes(self) -> int:
        return 1234

    def synthesize(self, x: int, mode: str = "ok", pidfile: str | None = None):
        if mode == "raise":
            raise ValueError(f"bad x {x}")
        if mode == "unpicklable":
            raise UnpicklableError("a", "b")
        if mode == "exit":
            os._exit(7)
        if mode == "segv":
            os.kill(os.getpid(), signal.SIGSEGV)
        if mode == "exit_system":
            raise SystemExit(3)
        if mode == "warm":
            from cuzk.engine.synth_warmup import PREFIXES, _dispatchers

            loaded = sum(len(d.signatures) for d in _dispatchers(PREFIXES))
            z = np.zeros((2, 4), dtype=np.uint64)
            return Synthesized(z=z, a=z, b=z, c=z, public_inputs=[loaded, int(self.warmed)], digest="warm")
        if mode == "unsendable":  # arrays go to shared memory, then pickling the rest fails
            z = np.zeros((2, 4), dtype=np.uint64)
            return Synthesized(z=z, a=z, b=z, c=z, public_inputs=[lambda: 0], digest="gil")
        if mode == "sleep":
            with open(pidfile, "w") as f:
                f.write(str(os.getpid()))
            time.sleep(120)
        if pidfile is not None:  # "ok" with a pidfile: say the job started
            with open(pidfile, "w") as f:
                f.write(str(os.getpid()))
        acc = x
        for i in range(self.n):
            acc = (acc * 31 + i) % 1000003
        z = np.array([[1, 0, 0, 0], [x, acc, 0, 0]], dtype=np.uint64)
        return Synthesized(z=z, a=z[:1] + 1, b=z[:1] + 2, c=z[:1] + 3, public_inputs=[x, acc], digest="gil")


class Unpicklable(GilSynth):
    """Holds a lock: cannot be pickled (like circom's calculator holding a WASM instance)."""

    def __init__(self):
        import threading

        super().__init__()
        self.lock = threading.Lock()


def gil_factory(n: int = 20000) -> GilSynth:
    return GilSynth(n)


def broken_factory():
    raise ImportError("wasmtime is not installed (simulated)")
