"""``concurrency="auto"``: a small feedback controller for the number of concurrent syntheses.

Every ``evaluate_every`` proved jobs (at least 2, at least the current concurrency) the prove
workers hand it one :class:`Observation` of the period since the last one, and it decides:

1. **Step back on contention.** Right after a raise from ``c-1`` to ``c`` it compares synthesis
   throughput (``c / mean synthesis seconds``) with what ``c-1`` achieved. If it grew by less
   than ``min_gain`` (10 %), the extra synthesis only slowed the others down (cores, memory
   bandwidth): go back to ``c-1`` and never try above it again.
2. **Step back when memory is short.** If the next job waits only for the memory budget and
   ``c > 1``, lower by one: more concurrent syntheses cannot fit.
3. **Raise while the prove stage starves.** If the prove workers idled more than ``idle_threshold``
   (5 %) of the period waiting for a synthesized job, work is still queued, and the process used
   less than ``cpu_threshold`` (90 %) of the cores, raise by one (up to ``max_concurrency``).

Otherwise it holds. Every change is recorded on the timeline as a ``CONCURRENCY`` event with
the reason, so ``summary().concurrency_changes`` explains what the controller did.

    >>> c = AutoController(max_concurrency=4, cpu_count=4)
    >>> c.decide(Observation(concurrency=1, jobs=2, period_s=1.0, gpu_idle_s=0.5, synth_mean_s=0.4,
    ...                      cores_busy=1.0, queued=3, memory_blocked=False))
    (2, 'prove stage idle 50% of 1.00s, CPU 1.0/4 cores')
"""

from __future__ import annotations

import attrs

from cuzk.errors import InputError

__all__ = ["Observation", "AutoController"]


@attrs.frozen
class Observation:
    """What happened since the controller's last decision."""

    concurrency: int  #: limit in force during the period
    jobs: int  #: jobs proved in the period
    period_s: float  #: wall seconds of the period
    gpu_idle_s: float  #: time prove workers waited on an empty channel
    synth_mean_s: float  #: mean synthesis wall seconds of jobs synthesized in the period
    cores_busy: float  #: process CPU seconds per wall second
    queued: int  #: units still waiting in the queue
    memory_blocked: bool  #: the head of the queue waits only for the memory budget


@attrs.define
class AutoController:
    """Decides the synthesis concurrency from :class:`Observation` s (pure; no threads, no clock)."""

    max_concurrency: int
    cpu_count: int
    min_concurrency: int = 1
    idle_threshold: float = 0.05
    cpu_threshold: float = 0.9
    min_gain: float = 1.10
    ceiling: int | None = None  #: lowest level found to be contended; never raised to again
    _throughput: dict = attrs.field(factory=dict)  #: level -> synthesized jobs per second
    _just_raised: bool = False

    def __attrs_post_init__(self):
        if not 1 <= self.min_concurrency <= self.max_concurrency:
            raise InputError(f"need 1 <= min_concurrency <= max_concurrency, got "
                             f"{self.min_concurrency}, {self.max_concurrency}")

    def evaluate_every(self, concurrency: int) -> int:
        """Jobs per observation at this level: enough for each slot to finish one job."""
        return max(2, concurrency)

    def decide(self, obs: Observation) -> tuple[int, str] | None:
        """New ``(concurrency, reason)``, or None to hold."""
        c = obs.concurrency
        if obs.synth_mean_s > 0:
            self._throughput[c] = c / obs.synth_mean_s
        just_raised, self._just_raised = self._just_raised, False
        if just_raised and c - 1 in self._throughput and c in self._throughput:
            gain = self._throughput[c] / self._throughput[c - 1]
            if gain < self.min_gain:
                self.ceiling = c - 1
                return c - 1, f"contention: synthesis throughput x{gain:.2f} at {c} vs {c - 1}"
        if obs.memory_blocked and c > self.min_concurrency:
            return c - 1, "memory budget full"
        idle = obs.gpu_idle_s / obs.period_s if obs.period_s > 0 else 0.0
        limit = min(self.max_concurrency, self.ceiling or self.max_concurrency)
        if (idle > self.idle_threshold and obs.queued > 0 and not obs.memory_blocked and c < limit
                and obs.cores_busy < self.cpu_threshold * self.cpu_count):
            self._just_raised = True
            return c + 1, (f"prove stage idle {idle:.0%} of {obs.period_s:.2f}s, "
                           f"CPU {obs.cores_busy:.1f}/{self.cpu_count} cores")
        return None
