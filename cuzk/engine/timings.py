"""Per-proof timings an Engine sets on each future before it resolves.

    >>> t = JobTimings(queue_wait_s=0.1, key_load_s=0.0, synth_s=0.5, prove_s=0.3, device_s=None, total_s=0.95)
    >>> t.as_dict()["total_s"]
    0.95
"""

from __future__ import annotations

import attrs

__all__ = ["JobTimings", "timings_of"]


@attrs.frozen
class JobTimings:
    """Where one job's time went, in seconds (a partitioned job sums its partitions' stages)."""

    queue_wait_s: float  #: submit to the first synthesis start (the whole total when it never started)
    key_load_s: float  #: the key load this job triggered or waited on (0 when the key was resident)
    synth_s: float  #: synthesis, summed over partitions
    prove_s: float  #: GPU_START..GPU_END, summed over partitions
    device_s: float | None  #: GPU time from CUDA events (None on the CPU backend)
    total_s: float  #: wall time from submit to resolution

    def as_dict(self) -> dict:
        return attrs.asdict(self)


def timings_of(job, now_ns: int) -> JobTimings:
    """The timings of ``job`` (a :class:`cuzk.pipeline.core.Job`) resolving at ``now_ns``
    (both on the engine timeline's clock)."""
    marks = [u.marks for u in job.units]
    starts = [m["synth_start_ns"] for m in marks if "synth_start_ns" in m]
    devices = [m["device_s"] for m in marks if "device_s" in m]
    total = (now_ns - job.submitted_ns) / 1e9
    return JobTimings(
        queue_wait_s=(min(starts) - job.submitted_ns) / 1e9 if starts else total,
        key_load_s=max((m.get("key_load_s", 0.0) for m in marks), default=0.0),
        synth_s=sum(m.get("synth_s", 0.0) for m in marks),
        prove_s=sum(m.get("prove_s", 0.0) for m in marks),
        device_s=sum(devices) if devices else None,
        total_s=total,
    )
