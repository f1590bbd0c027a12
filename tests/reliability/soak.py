"""Soak: many real proofs of a small circuit through one long-lived Pipeline, watching memory.

Method. One ``Pipeline(Synthesizer(Cube()), GpuProver(pk, device="cpu"))`` proves ``proofs``
statements ``x³ + x + 5 = out`` (x = 2, 3, ...); the prover verifies every proof before
returning it (its default) and the driver verifies every ``verify_every``-th proof again with
:func:`cuzk.groth16.verify`. At most ``window`` futures are in flight, and the driver keeps no
proof once checked, so nothing the driver holds grows with the run.

Memory is the process's resident set (``VmRSS`` in ``/proc/self/status``), read after a
``gc.collect()``: once after ``warmup`` proofs (Numba kernels loaded, caches and the allocator
warm) and once at the end. The only structure that is meant to grow with the number of proofs
is the Timeline's ring buffer, so the run gives it a small ``capacity`` (5,000 events by
default: about 20 events per proof, so it is full after ~250 proofs, i.e. before the warm-up
reading) and checks it is full at both readings. Its memory is then the same in both
readings, so the growth between them *is* the growth beyond the Timeline's bound. (With the
default capacity of ``cuzk.timeline.DEFAULT_CAPACITY`` events the buffer would still be
filling during a 10,000-proof run and its growth would have to be subtracted.)

Synthesized witnesses are tracked with ``weakref.finalize``: none may be alive after close,
and at most ``concurrency + lookahead + gpu_workers`` at any time (DESIGN §5).

    >>> r = soak(proofs=4, warmup=2, verify_every=2, capacity=100)     # doctest: +SKIP
    >>> r.verify_rate, r.alive_end                                    # doctest: +SKIP
    (1.0, 0)
"""

from __future__ import annotations

import collections
import gc
import threading
import time
import weakref

import attrs

__all__ = ["SoakResult", "soak", "rss_bytes"]


def rss_bytes() -> int:
    """Resident set size of this process (``VmRSS``), in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS line in /proc/self/status")


@attrs.frozen
class SoakResult:
    """What a soak run measured."""

    proofs: int  #: proofs resolved successfully
    failed: int  #: jobs that failed (the prover's own verification included)
    seconds: float  #: wall time after the warm-up
    verified: int  #: proofs verified again by the driver
    verified_ok: int  #: of those, how many verified
    rss_warm: int  #: bytes after the warm-up
    rss_end: int  #: bytes at the end
    capacity: int  #: the Timeline's ring-buffer bound (events)
    timeline_len: tuple  #: events retained at the warm-up and at the end reading
    dropped: int  #: events the ring buffer dropped (it was full)
    alive_max: int  #: most synthesized witnesses alive at once
    alive_end: int  #: witnesses alive after close
    alive_bound: int  #: concurrency + lookahead + gpu_workers
    trace: tuple  #: (proofs, rss bytes, seconds) every ``report_every`` proofs

    @property
    def growth(self) -> int:
        return self.rss_end - self.rss_warm

    @property
    def verify_rate(self) -> float:
        return self.verified_ok / self.verified if self.verified else float("nan")

    @property
    def proofs_per_s(self) -> float:
        measured = self.proofs - (self.trace[0][0] if self.trace else 0)
        return measured / self.seconds if self.seconds else float("nan")

    def table(self, title: str) -> str:
        mb = 1 / 2**20
        return "\n".join([
            title,
            f"  proofs            {self.proofs} ({self.failed} failed)",
            f"  proofs/s          {self.proofs_per_s:.1f} (after the warm-up, {self.seconds:.1f} s)",
            f"  verification rate {self.verify_rate:.4f} ({self.verified_ok}/{self.verified} re-verified with "
            f"cuzk.groth16.verify; the prover verified all {self.proofs})",
            f"  RSS at warm-up    {self.rss_warm * mb:.1f} MB (after {self.trace[0][0] if self.trace else 0} proofs)",
            f"  RSS at end        {self.rss_end * mb:.1f} MB (after {self.proofs + self.failed} proofs)",
            f"  growth            {self.growth * mb:+.2f} MB beyond the Timeline bound",
            f"  timeline bound    {self.capacity} events (ring buffer full at both readings: "
            f"{self.timeline_len[0]} and {self.timeline_len[1]} retained, {self.dropped} dropped)",
            f"  witnesses alive   max {self.alive_max} (bound {self.alive_bound}), {self.alive_end} after close",
            "  RSS trace         " + ", ".join(f"{n}: {r * mb:.1f} MB" for n, r, _ in self.trace),
        ])


class _Tracking:
    """Wraps a synthesizer; counts the witnesses it returned that are still alive."""

    def __init__(self, synthesizer):
        self.synthesizer = synthesizer
        self._lock = threading.Lock()
        self.alive = self.max_alive = 0

    def synthesize(self, **inputs):
        w = self.synthesizer.synthesize(**inputs)
        with self._lock:
            self.alive += 1
            self.max_alive = max(self.max_alive, self.alive)
        weakref.finalize(w, self._gone)
        return w

    def _gone(self):
        with self._lock:
            self.alive -= 1


def soak(proofs: int, *, warmup: int = 300, verify_every: int = 10, capacity: int = 5000, window: int = 64,
         concurrency: int = 2, lookahead: int = 1, gpu_workers: int = 1, report_every: int = 1000,
         progress=None, result_timeout: float = 120.0) -> SoakResult:
    """Prove ``proofs`` Cube statements through one pipeline; see the module docstring.

    Both RSS readings happen with nothing in flight (the driver drains its window first) and
    the pipeline still open, so they differ only by what the run accumulated.
    """
    if not 0 < warmup < proofs:
        raise ValueError(f"warmup must be in 1..proofs-1, got {warmup} for {proofs} proofs")
    import cuzk
    from cuzk.circuits.cube import Cube

    circuit = Cube()
    synth = cuzk.Synthesizer(circuit)
    pk, vk = cuzk.groth16.setup(synth.r1cs)
    tracked = _Tracking(synth)
    prover = cuzk.GpuProver(pk, device="cpu")
    timeline = cuzk.Timeline(capacity=capacity)
    counts = collections.Counter()
    trace = []
    rss_warm = None
    t_warm = time.perf_counter()
    len_warm = len_end = 0

    def settle(future, k, inputs):
        exc = future.exception(timeout=result_timeout)
        if exc is not None:
            counts["failed"] += 1
            return
        counts["proofs"] += 1
        if k % verify_every == 0:
            counts["verified"] += 1
            counts["verified_ok"] += bool(cuzk.groth16.verify(vk, circuit.public_inputs(inputs), future.result()))

    with cuzk.Pipeline(tracked, prover, concurrency=concurrency, lookahead=lookahead, gpu_workers=gpu_workers,
                       timeline=timeline) as pipe:
        inflight: collections.deque = collections.deque()
        for k in range(proofs):
            inputs = circuit.sample_inputs(seed=k + 2)
            inflight.append((pipe.submit(inputs), k, inputs))
            if len(inflight) >= window or k == warmup - 1 or k == proofs - 1:
                drain = len(inflight) - (window // 2 if len(inflight) >= window else 0)
                for _ in range(drain):
                    settle(*inflight.popleft())
            done = k + 1
            if done == warmup or (rss_warm is not None and (done % report_every == 0 or done == proofs)):
                gc.collect()
                rss = rss_bytes()
                if done == warmup:
                    rss_warm, t_warm, len_warm = rss, time.perf_counter(), len(timeline)
                trace.append((done, rss, time.perf_counter() - t_warm))
                if progress is not None:
                    progress(done, rss)
        len_end = len(timeline)  # the last reading above came after the final drain: nothing in flight
    del pipe
    gc.collect()
    _, rss_end, seconds = trace[-1]
    return SoakResult(
        proofs=counts["proofs"], failed=counts["failed"], seconds=seconds, verified=counts["verified"],
        verified_ok=counts["verified_ok"], rss_warm=rss_warm, rss_end=rss_end,
        capacity=capacity, timeline_len=(len_warm, len_end), dropped=timeline.dropped,
        alive_max=tracked.max_alive, alive_end=tracked.alive, alive_bound=concurrency + lookahead + gpu_workers,
        trace=tuple(trace))
