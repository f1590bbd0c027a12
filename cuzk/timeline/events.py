"""Timeline event kinds and the frozen event record.

An event is ``(t_ns, kind, job_id, partition, worker, detail, circuit, node)``: ``t_ns`` is nanoseconds since
the timeline's epoch, ``detail`` a small dict (CPU clocks on span ends, sub-span names, the
concurrency chosen by the controller, the error of a failed job).

    >>> Event(1_000, EventKind.SYNTH_START, job_id=1).kind.value
    'SYNTH_START'
"""

from __future__ import annotations

import enum
from typing import Any, Hashable, Mapping

import attrs

__all__ = ["EventKind", "Event", "STAGE_BOUNDS", "SUB_SPAN_NAMES", "TERMINAL_KINDS"]


class EventKind(str, enum.Enum):
    """What happened. ``str`` valued so saved timelines and log lines stay readable."""

    JOB_SUBMIT = "JOB_SUBMIT"  # a job (or one partition of it) entered the queue
    SYNTH_START = "SYNTH_START"
    SYNTH_END = "SYNTH_END"
    CHAN_SEND = "CHAN_SEND"  # synthesized job handed to the channel (the put may block)
    GPU_PICKUP = "GPU_PICKUP"  # a prove worker took it out of the channel
    GPU_START = "GPU_START"
    GPU_END = "GPU_END"
    JOB_DONE = "JOB_DONE"
    JOB_FAILED = "JOB_FAILED"
    JOB_CANCELLED = "JOB_CANCELLED"  # cancelled while queued, or skipped because a sibling partition failed
    SPAN_START = "SPAN_START"  # a prover sub-span (detail["name"]: H, MSM_A, ...)
    SPAN_END = "SPAN_END"
    CONCURRENCY = "CONCURRENCY"  # the pipeline changed its synthesis concurrency (detail: value, reason)
    KEY_LOAD_START = "KEY_LOAD_START"  # an Engine started loading a circuit's key (detail: circuit, tier)
    KEY_LOAD_END = "KEY_LOAD_END"  # ... and has it (detail: circuit, tier, seconds; error on failure)
    KEY_EVICT = "KEY_EVICT"  # an Engine dropped a circuit's key from memory (detail: circuit, bytes, reason)


#: Stage name -> (start kind, end kind) of the spans the pipeline records itself.
STAGE_BOUNDS: Mapping[str, tuple[EventKind, EventKind]] = {
    "SYNTH": (EventKind.SYNTH_START, EventKind.SYNTH_END),
    "GPU": (EventKind.GPU_START, EventKind.GPU_END),
}

#: The sub-span names the Groth16 prover reports (any other name is recorded just the same).
SUB_SPAN_NAMES = ("H", "MSM_A", "MSM_B1", "MSM_B2", "MSM_L", "MSM_H")

#: Kinds that end a job (or one partition of it); exactly one per submitted unit.
TERMINAL_KINDS = frozenset({EventKind.JOB_DONE, EventKind.JOB_FAILED, EventKind.JOB_CANCELLED})


def _freeze_detail(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return {} if value is None else dict(value)


@attrs.frozen(slots=True)
class Event:
    """One thing that happened, at ``t_ns`` nanoseconds after the timeline's epoch.

    >>> e = Event(2_500_000, EventKind.GPU_END, job_id=7, worker="cuzk-gpu-0")
    >>> e.t_seconds, e.job_id
    (0.0025, 7)
    """

    t_ns: int  #: nanoseconds since the timeline epoch
    kind: EventKind  #: what happened
    job_id: Hashable = None  #: the job it concerns (None for pipeline-wide events)
    partition: int | None = None  #: partition index within a partitioned job
    worker: str | None = None  #: name of the thread that recorded it
    detail: Mapping[str, Any] = attrs.field(factory=dict, converter=_freeze_detail)  #: extra fields
    circuit: str | None = None  #: the circuit of the job (an Engine's registered name; None in a Pipeline)
    #: the cluster node that recorded it (a RayEngine's merged timeline, docs/cluster.md; None locally)
    node: str | None = None

    @property
    def t_seconds(self) -> float:
        """``t_ns`` in seconds."""
        return self.t_ns / 1e9

    @property
    def unit(self) -> tuple:
        """``(job_id, partition)``: the schedulable unit this event belongs to."""
        return (self.job_id, self.partition)
