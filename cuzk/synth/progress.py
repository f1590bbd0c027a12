"""Compile progress: a callback ``progress(stage, done, total)`` or, on a terminal, a bar.

Stages, in order: ``"trace"`` (``done`` = constraints recorded so far, ``total`` None: the
circuit's size is known only when ``define`` returns), ``"place"`` (constraints placed into the
matrices and the witness program, of ``total``) and ``"finish"`` (steps of the final numbering,
sorting and coefficient conversion, of ``total``). The callback hears each stage's start and end
and, in between, at most every ``interval`` seconds; during placement it may be called from the
compile's worker threads, one call at a time.

``Synthesizer(circuit, progress=...)`` and ``compile_circuit`` take: ``None`` (the default: a bar
on stderr when stderr is a terminal, shown once the compile has run ``bar_after`` seconds),
``False`` (silent), or a callable.

    >>> seen = []
    >>> p = Progress.of(lambda *a: seen.append(a))
    >>> p.stage("place", 10); p.update(10); seen
    [('place', 0, 10), ('place', 10, 10)]
"""

from __future__ import annotations

import sys
import time

from cuzk.errors import InputError

__all__ = ["Progress"]


class Progress:
    """Throttled stage reports to a callback (see the module docstring)."""

    def __init__(self, callback, *, interval: float = 0.2, clock=time.monotonic):
        self._cb, self._interval, self._clock = callback, interval, clock
        self._stage, self._total, self._last = None, None, -1e30

    @classmethod
    def of(cls, progress, *, stream=None, bar_after: float = 2.0) -> "Progress":
        """The reporter for a ``progress`` argument (None, False, or a callable)."""
        if progress is False:
            return cls(None)
        if progress is None:
            stream = sys.stderr if stream is None else stream
            isatty = getattr(stream, "isatty", None)
            return cls(_Bar(stream, bar_after) if isatty is not None and isatty() else None)
        if not callable(progress):
            raise InputError(f"progress must be None, False or a callable(stage, done, total), got {type(progress).__name__}")
        return cls(progress)

    def stage(self, name: str, total: int | None) -> None:
        """Begin a stage (reported at once)."""
        self._stage, self._total = name, total
        self._emit(0, force=True)

    def update(self, done: int) -> None:
        """Progress inside the current stage; the end (``done == total``) is always reported."""
        self._emit(done, force=self._total is not None and done >= self._total)

    def traced(self, n_constraints: int) -> None:
        """Called by the tracing constraint system as rows are recorded."""
        if self._stage != "trace":
            self._stage, self._total = "trace", None
        self._emit(n_constraints, force=False)

    def close(self) -> None:
        if isinstance(self._cb, _Bar):
            self._cb.close()

    def _emit(self, done: int, force: bool) -> None:
        if self._cb is None:
            return
        now = self._clock()
        if force or now - self._last >= self._interval:
            self._last = now
            self._cb(self._stage, done, self._total)


class _Bar:
    """A one-line bar on a terminal, silent until the compile has run ``after`` seconds."""

    def __init__(self, stream, after: float):
        self._s, self._after, self._t0, self._shown = stream, after, time.monotonic(), False

    def __call__(self, stage, done, total):
        el = time.monotonic() - self._t0
        if el < self._after:
            return
        self._shown = True
        if total:
            f = min(1.0, done / total)
            bar = "#" * int(30 * f) + "." * (30 - int(30 * f))
            line = f"cuzk compile {stage:6s} [{bar}] {100 * f:5.1f}% {done:,}/{total:,} {el:6.1f} s"
        else:
            line = f"cuzk compile {stage:6s} {done:,} constraints {el:6.1f} s"
        self._s.write("\r" + line[:120].ljust(100))
        self._s.flush()

    def close(self):
        if self._shown:
            self._s.write("\n")
            self._s.flush()
