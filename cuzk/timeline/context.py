"""Stage context: lets code deep inside a prover record sub-spans without knowing about pipelines.

The pipeline wraps each stage call in :func:`stage_context`, which puts the job id and the
timeline in a :class:`contextvars.ContextVar`; :class:`span` looks them up and records
``SPAN_START``/``SPAN_END`` around a block. Outside a pipeline the variable is unset and
``span`` does nothing, so a prover can always write::

    >>> from cuzk.timeline import span
    >>> with span("MSM_A"):          # no pipeline here: a no-op
    ...     pass

Threads started inside a stage do not inherit the context; run their work through
``contextvars.copy_context().run`` if they should report spans too.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from typing import Hashable, Iterator, NamedTuple

from cuzk.timeline.events import EventKind

__all__ = ["StageContext", "stage_context", "current_stage", "span", "cpu_clocks"]


class StageContext(NamedTuple):
    """What :func:`span` needs: where to record and for which job."""

    timeline: object
    job_id: Hashable
    partition: int | None
    worker: str | None
    device_ms: list | None = None  #: where spans add the ``device_ms`` they note (the job's GPU time)
    circuit: str | None = None  #: the job's circuit, carried onto the sub-span events


_CURRENT: contextvars.ContextVar[StageContext | None] = contextvars.ContextVar("cuzk_stage", default=None)


def cpu_clocks() -> dict:
    """Current thread and process CPU clocks in ns, the detail carried by SYNTH/GPU span events.

    >>> sorted(cpu_clocks())
    ['process_cpu_ns', 'thread_cpu_ns']
    """
    return {"thread_cpu_ns": time.thread_time_ns(), "process_cpu_ns": time.process_time_ns()}


@contextlib.contextmanager
def stage_context(timeline, job_id: Hashable, partition: int | None = None,
                  worker: str | None = None, device_ms: list | None = None,
                  circuit: str | None = None) -> Iterator[StageContext]:
    """Make ``span()`` record onto ``timeline`` for ``job_id`` inside the block.

    >>> from cuzk.timeline import Timeline
    >>> tl = Timeline()
    >>> with stage_context(tl, job_id=4):
    ...     with span("H"):
    ...         pass
    >>> [(e.kind.value, e.detail["name"]) for e in tl.events()]
    [('SPAN_START', 'H'), ('SPAN_END', 'H')]
    """
    ctx = StageContext(timeline, job_id, partition, worker or threading.current_thread().name, device_ms, circuit)
    token = _CURRENT.set(ctx)
    try:
        yield ctx
    finally:
        _CURRENT.reset(token)


def current_stage() -> StageContext | None:
    """The stage context set by the pipeline, or ``None`` outside one."""
    return _CURRENT.get()


class span:
    """Record a named sub-span (``H``, ``MSM_A``, ...) of the current job; no-op outside a pipeline.

    Usable as a context manager or decorator. If the block raises, the end event carries
    ``error=<exception type name>`` and the exception propagates unchanged.

    >>> @span("MSM_L")
    ... def msm_l():
    ...     return 1
    >>> msm_l()
    1
    """

    __slots__ = ("name", "_ctx", "_extra")

    def __init__(self, name: str):
        self.name = str(name)
        self._ctx: StageContext | None = None
        self._extra: dict = {}

    @property
    def active(self) -> bool:
        """Whether this span records (entered inside a pipeline stage); detail worth measuring
        only for the timeline can be skipped when it is not."""
        return self._ctx is not None

    def note(self, **detail) -> None:
        """Add ``detail`` to the end event (e.g. ``device_ms``, the GPU time CUDA events measured
        inside the span); call it before the block ends.

        >>> from cuzk.timeline import Timeline
        >>> tl = Timeline()
        >>> with stage_context(tl, job_id=1):
        ...     with span("MSM_A") as sp:
        ...         sp.note(device_ms=2.5)
        >>> tl.spans()[0].device_s
        0.0025
        """
        self._extra.update(detail)

    def __enter__(self) -> "span":
        ctx = _CURRENT.get()
        self._ctx = ctx
        if ctx is not None:
            ctx.timeline.record(EventKind.SPAN_START, ctx.job_id, ctx.partition, ctx.worker, name=self.name,
                                circuit=ctx.circuit)
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        ctx, self._ctx = self._ctx, None
        extra, self._extra = self._extra, {}
        if ctx is not None:
            if ctx.device_ms is not None and "device_ms" in extra:
                ctx.device_ms.append(extra["device_ms"])
            if exc_type is None:
                ctx.timeline.record(EventKind.SPAN_END, ctx.job_id, ctx.partition, ctx.worker, **extra, name=self.name,
                                    circuit=ctx.circuit)
            else:
                ctx.timeline.record(EventKind.SPAN_END, ctx.job_id, ctx.partition, ctx.worker,
                                    **extra, name=self.name, error=exc_type.__name__, circuit=ctx.circuit)
        return False

    def __call__(self, fn):
        name = self.name

        def wrapped(*args, **kwargs):
            # A fresh span per call: one instance shared across threads would mix contexts.
            with span(name):
                return fn(*args, **kwargs)

        wrapped.__name__ = getattr(fn, "__name__", "wrapped")
        wrapped.__doc__ = getattr(fn, "__doc__", None)
        wrapped.__wrapped__ = fn
        return wrapped
