"""Save and load timelines as JSON lines, so ``cuzk waterfall FILE`` can render a saved run.

Line 1 is a header ``{"format": "cuzk-timeline", "version": 2, ...}``; every further line is one
event ``{"t_ns", "kind", "job", "partition", "worker", "detail"}`` plus ``"circuit"`` when the
event has one, and ``"node"`` for a cluster's merged events (version 2; version-1 files, which
have neither, still load). Job ids that are not
JSON scalars are written with ``str()``.

    >>> import io, tempfile, os
    >>> from cuzk.timeline.events import Event, EventKind
    >>> path = os.path.join(tempfile.mkdtemp(), "run.jsonl")
    >>> save([Event(7, EventKind.JOB_SUBMIT, 1)], path)
    >>> load(path)[0].t_ns
    7
"""

from __future__ import annotations

import json
import math
import os
from typing import Iterable

from cuzk.atomic_file import atomic_write
from cuzk.bounded_json import loads_bounded
from cuzk.errors import TimelineFormatError
from cuzk.timeline.events import Event, EventKind

__all__ = ["save", "load", "FORMAT", "VERSION", "MAX_LINE_BYTES", "DETAIL_TYPES"]

FORMAT = "cuzk-timeline"
VERSION = 2
_READABLE = (1, 2)  # version 1: before events carried their circuit


def _scalar(x):
    return x if x is None or isinstance(x, (bool, int, float, str)) else str(x)


def save(events: Iterable[Event], path) -> None:
    """Write ``events`` to ``path`` (written to a temp file, then renamed into place)."""
    with atomic_write(path, "w") as f:
        f.write(json.dumps({"format": FORMAT, "version": VERSION}) + "\n")
        for e in events:
            d = {"t_ns": e.t_ns, "kind": e.kind.value, "job": _scalar(e.job_id), "partition": e.partition,
                 "worker": e.worker, "detail": {k: _scalar(v) for k, v in e.detail.items()}}
            if e.circuit is not None:
                d["circuit"] = str(e.circuit)
            if e.node is not None:
                d["node"] = str(e.node)
            f.write(json.dumps(d) + "\n")


# Longest line accepted: an event is ~200 bytes (an error name, a sub-span name, CPU clocks);
# a longer line is not one we wrote, and reading it whole would let a file without newlines
# decide how much memory load uses.
MAX_LINE_BYTES = 1 << 20
# Integers analysis turns into floats (t / 1e9, cpu deltas): beyond 64 bits that overflows
_INT_LIMIT = 1 << 63

#: detail keys that analysis, summary and the renderers compute with -> (accepted types, what
#: they must be). Other detail keys are only displayed (str()/JSON), so any JSON value will do.
DETAIL_TYPES = {
    "thread_cpu_ns": ((int,), "an integer (ns)"),  # span CPU time: end - start
    "process_cpu_ns": ((int,), "an integer (ns)"),  # cores busy: last - first
    "device_ms": ((int, float), "a finite number or null"),  # float(ms) / 1e3
    "name": ((str,), "a string"),  # a sub-span's stage name
    "error": ((str,), "a string or null"),  # failed stage / job: its exception type name
    "reason": ((str,), "a string"),  # why the concurrency changed
    "value": ((int, float, str), "a number, string or null"),  # the new concurrency
}
_NULL_OK = {"device_ms", "error", "value"}


def _check_int(v, what: str, null: bool = False) -> None:
    if v is None and null:
        return
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{what} must be an integer{' or null' if null else ''}, got {type(v).__name__}")
    if not -_INT_LIMIT < v < _INT_LIMIT:
        raise ValueError(f"{what} = {v} is outside the signed 64-bit range")


def _check_detail(detail: dict) -> None:
    for key, (types, want) in DETAIL_TYPES.items():
        if key not in detail:
            continue
        v = detail[key]
        if v is None and key in _NULL_OK:
            continue
        if isinstance(v, bool) or not isinstance(v, types):
            raise TypeError(f"detail {key!r} must be {want}, got {type(v).__name__}")
        if int in types and isinstance(v, int):
            _check_int(v, f"detail {key!r}")
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"detail {key!r} must be finite, got {v}")


def _event(line: str) -> Event:
    d = loads_bounded(line, "event", TimelineFormatError)
    if not isinstance(d, dict):
        raise TypeError("an event must be a JSON object")
    t_ns, kind = d["t_ns"], EventKind(d["kind"])
    job, part, worker, detail = d.get("job"), d.get("partition"), d.get("worker"), d.get("detail", {})
    _check_int(t_ns, "t_ns")
    _check_int(part, "partition", null=True)
    if isinstance(job, int) and not isinstance(job, bool):
        _check_int(job, "job")
    elif not (job is None or isinstance(job, (bool, float, str))):  # a list or object is unhashable
        raise TypeError(f"job must be a JSON scalar, got {type(job).__name__}")
    if isinstance(job, float) and not math.isfinite(job):
        raise ValueError(f"job must be finite, got {job}")
    if worker is not None and not isinstance(worker, str):
        raise TypeError("worker must be a string or null")
    if not isinstance(detail, dict):
        raise TypeError("detail must be an object")
    _check_detail(detail)
    circuit = d.get("circuit")
    if circuit is not None and not isinstance(circuit, str):
        raise TypeError("circuit must be a string or null")
    node = d.get("node")
    if node is not None and not isinstance(node, str):
        raise TypeError("node must be a string or null")
    return Event(t_ns, kind, job, part, worker, detail, circuit, node)


def load(path) -> list[Event]:
    """Read a file written by :func:`save`, one line at a time.

    Every field analysis computes with is type-checked here (``t_ns``, ``partition``, the job id,
    and the detail keys in :data:`DETAIL_TYPES`), so ``summary()``/``waterfall()`` of a loaded
    timeline cannot fail on a wrongly typed value.

    Raises:
        cuzk.errors.TimelineFormatError: the file is missing, not a cuzk timeline, of another
            version, or has a malformed line (the line number is named): bad JSON, nesting
            deeper than 64, a line over :data:`MAX_LINE_BYTES`, a wrongly typed field.
    """
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            header = f.readline(MAX_LINE_BYTES + 1)
            if not header:
                raise TimelineFormatError(f"{path!r} is empty, not a cuzk timeline")
            try:
                header = loads_bounded(header, "header", TimelineFormatError,
                                       max_bytes=MAX_LINE_BYTES) if len(header) <= MAX_LINE_BYTES else None
            except TimelineFormatError:
                header = None
            if not isinstance(header, dict) or header.get("format") != FORMAT:
                raise TimelineFormatError(f"{path!r} line 1: not a cuzk timeline header")
            if header.get("version") not in _READABLE:
                raise TimelineFormatError(f"{path!r}: unsupported timeline version {header.get('version')!r:.40}")
            n = 1
            while line := f.readline(MAX_LINE_BYTES + 1):
                n += 1
                if len(line) > MAX_LINE_BYTES:
                    raise TimelineFormatError(f"{path!r} line {n}: longer than {MAX_LINE_BYTES} characters")
                if not line.strip():
                    continue
                try:
                    out.append(_event(line))
                except (KeyError, ValueError, TypeError, TimelineFormatError) as e:
                    raise TimelineFormatError(f"{path!r} line {n}: bad event ({e})") from e
    except (OSError, UnicodeDecodeError) as e:
        raise TimelineFormatError(f"cannot read timeline file {path!r}: {e}") from e
    return out
