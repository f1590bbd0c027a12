"""Save and load timelines as JSON lines, so ``cuzk waterfall FILE`` can render a saved run.

Line 1 is a header ``{"format": "cuzk-timeline", "version": 1, ...}``; every further line is one
event ``{"t_ns", "kind", "job", "partition", "worker", "detail"}``. Job ids that are not JSON
scalars are written with ``str()``.

    >>> import io, tempfile, os
    >>> from cuzk.timeline.events import Event, EventKind
    >>> path = os.path.join(tempfile.mkdtemp(), "run.jsonl")
    >>> save([Event(7, EventKind.JOB_SUBMIT, 1)], path)
    >>> load(path)[0].t_ns
    7
"""

from __future__ import annotations

import json
import os
from typing import Iterable

from cuzk.errors import TimelineFormatError
from cuzk.timeline.events import Event, EventKind

__all__ = ["save", "load", "FORMAT", "VERSION"]

FORMAT = "cuzk-timeline"
VERSION = 1


def _scalar(x):
    return x if x is None or isinstance(x, (bool, int, float, str)) else str(x)


def save(events: Iterable[Event], path) -> None:
    """Write ``events`` to ``path`` (written to a temp file, then renamed into place)."""
    tmp = f"{os.fspath(path)}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(json.dumps({"format": FORMAT, "version": VERSION}) + "\n")
        for e in events:
            f.write(json.dumps({"t_ns": e.t_ns, "kind": e.kind.value, "job": _scalar(e.job_id),
                                "partition": e.partition, "worker": e.worker,
                                "detail": {k: _scalar(v) for k, v in e.detail.items()}}) + "\n")
    os.replace(tmp, path)


def load(path) -> list[Event]:
    """Read a file written by :func:`save`.

    Raises:
        cuzk.errors.TimelineFormatError: the file is missing, not a cuzk timeline, of another
            version, or has a malformed line (the line number is named).
    """
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise TimelineFormatError(f"cannot read timeline file {path!r}: {e}") from e
    if not lines:
        raise TimelineFormatError(f"{path!r} is empty, not a cuzk timeline")
    try:
        header = json.loads(lines[0])
    except (json.JSONDecodeError, RecursionError):  # RecursionError: absurdly nested brackets
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise TimelineFormatError(f"{path!r} line 1: not a cuzk timeline header")
    if header.get("version") != VERSION:
        raise TimelineFormatError(f"{path!r}: unsupported timeline version {header.get('version')!r}")
    out = []
    for n, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            t_ns, kind = d["t_ns"], EventKind(d["kind"])
            part, worker, detail = d.get("partition"), d.get("worker"), d.get("detail", {})
            if not isinstance(t_ns, int) or isinstance(t_ns, bool):
                raise TypeError("t_ns must be an integer")
            if part is not None and (not isinstance(part, int) or isinstance(part, bool)):
                raise TypeError("partition must be an integer or null")
            if worker is not None and not isinstance(worker, str):
                raise TypeError("worker must be a string or null")
            if not isinstance(detail, dict):
                raise TypeError("detail must be an object")
            out.append(Event(t_ns, kind, d.get("job"), part, worker, detail))
        except (json.JSONDecodeError, KeyError, ValueError, TypeError, AttributeError, RecursionError) as e:
            raise TimelineFormatError(f"{path!r} line {n}: bad event ({e})") from e
    return out
