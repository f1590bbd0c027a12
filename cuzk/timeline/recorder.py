"""The in-memory event recorder: a lock-free ring buffer, snapshots as tuples, no math.

Analysis and rendering live in :mod:`cuzk.timeline.analysis` and :mod:`cuzk.timeline.render`;
the methods here only forward to them so a host can write ``pipe.timeline.summary()``.

    >>> tl = Timeline()
    >>> tl.record(EventKind.JOB_SUBMIT, job_id=1)
    >>> [e.kind.value for e in tl.events()]
    ['JOB_SUBMIT']
"""

from __future__ import annotations

import collections
import itertools
import logging
import threading
import time
from typing import Any, Callable, Hashable, Iterable

from cuzk.errors import InputError
from cuzk.timeline.events import Event, EventKind

__all__ = ["Timeline", "DEFAULT_CAPACITY"]

#: Events kept by default. A pipeline writes ~10 events per proof (plus 12 for prover sub-spans),
#: so this holds the last few thousand proofs in a few tens of MB.
DEFAULT_CAPACITY = 200_000

_log = logging.getLogger("cuzk.timeline")


_KINDS = EventKind._value2member_map_


def _event(entry: tuple) -> Event:
    t_ns, kind, job_id, partition, worker, detail, thread_cpu, process_cpu, _seq, circuit = entry
    detail = dict(detail) if detail else {}
    if thread_cpu is not None:
        detail["thread_cpu_ns"], detail["process_cpu_ns"] = thread_cpu, process_cpu
    node = detail.pop("node", None)  # record(..., node=id): the Event field (see record_at)
    return Event(t_ns, _KINDS[kind], job_id, partition, worker, detail, circuit, node)


def _with_node(e: Event) -> dict | None:
    detail = dict(e.detail)
    if e.node is not None:
        detail["node"] = e.node
    return detail or None


class _HeldListeners:
    """The context manager of :meth:`Timeline.deferred_listeners` (a class: it runs several
    times per job, and a generator-based one cost 3x as much)."""

    __slots__ = ("_tl", "_outer")

    def __init__(self, tl: "Timeline"):
        self._tl = tl

    def __enter__(self) -> None:
        held = self._tl._held
        self._outer = getattr(held, "events", None) is not None
        if not self._outer:
            held.events = []

    def __exit__(self, *exc) -> bool:
        if not self._outer:
            tl = self._tl
            events, tl._held.events = tl._held.events, None
            for event in events:
                tl._notify(event)
        return False


class Timeline:
    """Thread-safe, bounded record of pipeline events with a shared epoch.

    Args:
        capacity: events kept; older ones are dropped first (ring buffer), counted in ``dropped``.
        clock: nanosecond clock, ``time.perf_counter_ns`` by default; tests inject a fake one.

    Raises:
        cuzk.errors.InputError: ``capacity`` is not a positive integer.

    >>> ticks = iter(range(0, 10_000, 1_000))
    >>> tl = Timeline(clock=lambda: next(ticks))      # epoch = 0
    >>> tl.record(EventKind.SYNTH_START, job_id="a")
    >>> tl.events()[0].t_ns
    1000
    """

    def __init__(self, capacity: int = DEFAULT_CAPACITY, clock: Callable[[], int] | None = None):
        if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 1:
            raise InputError(f"Timeline capacity must be a positive int, got {capacity!r}")
        if clock is not None and not callable(clock):
            raise InputError(f"Timeline clock must be a callable returning nanoseconds, got {clock!r}")
        self._clock = clock if clock is not None else time.perf_counter_ns
        self.epoch_ns: int = self._clock()
        self.capacity = capacity
        self._buf: collections.deque = collections.deque(maxlen=capacity)
        # Recording takes no lock: CPython's deque.append and next() on a counter are atomic, and a
        # lock made two recording threads 5x slower (1.2 µs vs 0.2 µs per append, measured). The
        # sequence number orders events stamped in the same nanosecond and counts drops.
        self._seq = itertools.count()
        self._seq_base = 0  # first sequence number after the last clear()
        self._lock = threading.Lock()  # listeners and clear() only
        # Copy-on-write tuple: record() reads it without taking a second lock.
        self._listeners: tuple[Callable[[Event], Any], ...] = ()
        # Per thread: events whose listener calls wait for the end of a deferred_listeners() block.
        self._held = threading.local()

    # -- recording --------------------------------------------------------------------------
    def now_ns(self) -> int:
        """Nanoseconds since the epoch on this timeline's clock."""
        return self._clock() - self.epoch_ns

    def record(self, kind: EventKind, job_id: Hashable = None, partition: int | None = None,
               worker: str | None = None, **detail: Any) -> None:
        """Append one event stamped with the current time (thread-safe; about 1 µs, see docs/perf/pipeline.md).

        ``circuit=name`` among the keywords sets :attr:`Event.circuit` instead of a detail key.

        >>> tl = Timeline()
        >>> tl.record(EventKind.GPU_START, job_id=3, worker="cuzk-gpu-0")
        >>> tl.events()[-1].worker
        'cuzk-gpu-0'
        """
        self._append(kind, job_id, partition, worker, detail or None, None, None)

    def record_with_cpu(self, kind: EventKind, job_id: Hashable = None, partition: int | None = None,
                        worker: str | None = None, **detail: Any) -> None:
        """Like :meth:`record`, adding the calling thread's and the process's CPU clocks
        (``detail["thread_cpu_ns"]``, ``detail["process_cpu_ns"]``); used at SYNTH/GPU span edges.

        >>> tl = Timeline()
        >>> tl.record_with_cpu(EventKind.SYNTH_START, job_id=1)
        >>> sorted(tl.events()[0].detail)
        ['process_cpu_ns', 'thread_cpu_ns']
        """
        # Kept as two flat ints in the buffer entry: a retained dict per event costs the garbage
        # collector about 0.6 µs per event on a full buffer (benchmarks/pipeline_bench.py).
        self._append(kind, job_id, partition, worker, detail or None, time.thread_time_ns(), time.process_time_ns())

    def _append(self, kind, job_id, partition, worker, detail, thread_cpu_ns, process_cpu_ns, t_ns=None) -> None:
        # kind is stored as its plain str value: a tuple of plain scalars is untracked by the
        # garbage collector after its first pass, an enum member would keep it tracked.
        try:
            value = kind._value_
        except AttributeError:  # a str or None here would fail deep in analysis, or here as AttributeError
            raise InputError(f"event kind must be a cuzk.timeline.EventKind, got {kind!r}") from None
        circuit = None
        if detail is not None and "circuit" in detail:  # record(..., circuit=name): the Event field
            circuit = detail.pop("circuit")
            detail = detail or None
        entry = (self._clock() - self.epoch_ns if t_ns is None else t_ns, value, job_id, partition, worker, detail,
                 thread_cpu_ns, process_cpu_ns, next(self._seq), circuit)
        self._buf.append(entry)
        if self._listeners:
            held = getattr(self._held, "events", None)
            if held is not None:
                held.append(_event(entry))
            else:
                self._notify(_event(entry))

    def record_at(self, t_ns: int, kind: EventKind, job_id: Hashable = None, partition: int | None = None,
                  worker: str | None = None, **detail: Any) -> None:
        """Append one event stamped ``t_ns`` (this timeline's clock) instead of now: events
        recorded elsewhere and merged in later (a cluster's workers, docs/cluster.md).
        ``node=id`` sets :attr:`Event.node`, ``circuit=name`` :attr:`Event.circuit`.

        >>> tl = Timeline()
        >>> tl.record_at(5, EventKind.GPU_START, job_id=1, worker="prover-0", node="n1")
        >>> e = tl.events()[0]; (e.t_ns, e.node)
        (5, 'n1')
        """
        if isinstance(t_ns, bool) or not isinstance(t_ns, int):
            raise InputError(f"record_at needs an int t_ns, got {t_ns!r}")
        self._append(kind, job_id, partition, worker, detail or None, None, None, t_ns)

    def deferred_listeners(self) -> "_HeldListeners":
        """Hold the listener calls of events this thread records until the block exits.

        Events are stored at once (time-stamped as usual); only the listener calls wait. Code
        that records while holding its own lock wraps the locked section in this block, so a
        listener that calls back into it (``pipe.status()`` on ``JOB_DONE``) cannot deadlock.
        Nested blocks deliver when the outermost one exits.

        >>> tl = Timeline(); seen = []
        >>> _ = tl.add_listener(seen.append)
        >>> with tl.deferred_listeners():
        ...     tl.record(EventKind.JOB_DONE, job_id=1)
        ...     print(len(seen))
        0
        >>> len(seen)
        1
        """
        return _HeldListeners(self)

    def _notify(self, event: Event) -> None:
        for fn in self._listeners:
            try:
                fn(event)
            except Exception:  # a broken dashboard must not fail the job that recorded the event
                _log.exception("timeline listener %r raised; event %s kept", fn, event.kind.value)
            except BaseException:  # SystemExit & co. from a hook: a worker thread must live on
                if threading.current_thread() is threading.main_thread():
                    raise  # Ctrl-C while the caller's own thread runs a listener stays Ctrl-C
                _log.exception("timeline listener %r raised; event %s kept", fn, event.kind.value)

    def add_listener(self, fn: Callable[[Event], Any]) -> Callable[[], None]:
        """Call ``fn(event)`` for every future event (from the recording thread).

        Returns a function that removes the listener. Exceptions from ``fn`` are logged to the
        ``cuzk.timeline`` logger and do not reach the pipeline (on a pipeline's own threads not
        even ``BaseException``). A pipeline calls listeners after releasing its locks, so a
        listener may call back into it (``status()``, ``submit()``); it runs on the recording
        thread, so a slow listener slows that worker.

        >>> tl = Timeline(); seen = []
        >>> stop = tl.add_listener(seen.append)
        >>> tl.record(EventKind.JOB_DONE, job_id=1); stop(); tl.record(EventKind.JOB_DONE, job_id=2)
        >>> [e.job_id for e in seen]
        [1]
        """
        if not callable(fn):  # it would only fail (and be logged) at every later event
            raise InputError(f"a timeline listener must be callable, got {fn!r}")
        with self._lock:
            self._listeners = self._listeners + (fn,)

        def remove() -> None:
            self.remove_listener(fn)

        return remove

    def remove_listener(self, fn: Callable[[Event], Any]) -> None:
        """Stop calling ``fn``; unknown listeners are ignored."""
        with self._lock:
            items = list(self._listeners)
            if fn in items:
                items.remove(fn)
            self._listeners = tuple(items)

    def mirror_to_logging(self, logger: logging.Logger | str = "cuzk.timeline",
                          level: int = logging.INFO) -> Callable[[], None]:
        """Log every future event as ``TIMELINE,<ms>,<event>,<job>,<detail>``; returns a stop function.

        >>> stop = Timeline().mirror_to_logging(); stop()
        """
        from cuzk.timeline.render import log_line

        log = logging.getLogger(logger) if isinstance(logger, str) else logger

        def emit(event: Event) -> None:
            if log.isEnabledFor(level):
                log.log(level, "%s", log_line(event))

        return self.add_listener(emit)

    def clear(self) -> None:
        """Forget all events (the epoch and listeners stay)."""
        with self._lock:
            self._seq_base = next(self._seq)
            self._buf.clear()

    # -- snapshots --------------------------------------------------------------------------
    @property
    def dropped(self) -> int:
        """Events discarded because the ring buffer was full (exact when no record is in
        flight; a recording thread racing the read can make it off by a few)."""
        buf = self._buf
        try:
            last = buf[-1]  # O(1): status() calls this on every poll; a copy of 200k events was ~ms
        except IndexError:
            return 0
        return max(0, last[8] + 1 - self._seq_base - len(buf))

    def __len__(self) -> int:
        return len(self._buf)

    def events(self) -> tuple[Event, ...]:
        """A snapshot of the kept events, oldest first."""
        # deque.copy() runs in C without releasing the GIL: an atomic snapshot. Two threads may
        # append in the other order than they read the clock, so order by (time, sequence).
        raw = sorted(self._buf.copy(), key=lambda e: (e[0], e[8]))
        return tuple(_event(entry) for entry in raw)

    @classmethod
    def from_events(cls, events: Iterable[Event], capacity: int | None = None) -> "Timeline":
        """A timeline holding ``events`` (e.g. loaded from a file); new records go after them.

        >>> tl = Timeline.from_events([Event(5, EventKind.JOB_SUBMIT, 1)])
        >>> len(tl)
        1
        """
        events = list(events)
        for e in events:
            if not isinstance(e, Event):
                raise InputError(f"from_events takes cuzk.timeline Event objects, got {type(e).__name__}")
        tl = cls(capacity=capacity or max(DEFAULT_CAPACITY, len(events)))
        last = max((e.t_ns for e in events), default=0)
        tl.epoch_ns -= last  # later records land after the loaded ones
        tl._buf.extend((e.t_ns, e.kind._value_, e.job_id, e.partition, e.worker, _with_node(e), None, None,
                        next(tl._seq), e.circuit) for e in events)
        return tl

    # -- forwards to analysis / render ----------------------------------------------------
    def spans(self):
        """Closed spans (SYNTH, GPU, prover sub-spans); see :func:`cuzk.timeline.analysis.spans`."""
        from cuzk.timeline import analysis

        return analysis.spans(self.events())

    def job(self, job_id: Hashable):
        """Per-partition breakdowns of one job; see :func:`cuzk.timeline.analysis.job_breakdowns`."""
        from cuzk.timeline import analysis

        return tuple(b for b in analysis.job_breakdowns(self.events()) if b.job_id == job_id)

    def jobs(self):
        """Breakdowns of every job/partition seen."""
        from cuzk.timeline import analysis

        return analysis.job_breakdowns(self.events())

    def summary(self, window: tuple[float, float] | None = None):
        """Utilization, stage statistics, idle gaps: :func:`cuzk.timeline.summary.summary`."""
        from cuzk.timeline.summary import summary

        return summary(self.events(), window=window)

    def waterfall(self, width: int = 72, max_rows: int = 40) -> str:
        """ASCII waterfall chart: :func:`cuzk.timeline.render.waterfall`."""
        from cuzk.timeline import render

        return render.waterfall(self.events(), width=width, max_rows=max_rows)

    def plot(self, ax=None, *, title: str | None = None):
        """Matplotlib figure: :func:`cuzk.timeline.render.plot` (needs ``cuzk[plot]``)."""
        from cuzk.timeline import render

        return render.plot(self.events(), ax=ax, title=title)

    def to_chrome_trace(self) -> dict:
        """Chrome trace-event JSON object: :func:`cuzk.timeline.render.to_chrome_trace`."""
        from cuzk.timeline import render

        return render.to_chrome_trace(self.events())

    def save(self, path) -> None:
        """Write the events as JSON lines: :func:`cuzk.timeline.storage.save`."""
        from cuzk.timeline import storage

        storage.save(self.events(), path)

    @classmethod
    def load(cls, path) -> "Timeline":
        """Read a file written by :meth:`save`; raises :class:`cuzk.errors.TimelineFormatError`."""
        from cuzk.timeline import storage

        return cls.from_events(storage.load(path))

    def _repr_html_(self) -> str:
        from cuzk.timeline import render

        return render.to_html(self.events())

    def _repr_pretty_(self, p, cycle: bool) -> None:
        p.text(repr(self) if cycle else f"{self!r}\n{self.summary()}\n{self.waterfall()}")

    def __repr__(self) -> str:
        return f"<Timeline {len(self)} events, capacity {self.capacity}, dropped {self.dropped}>"
