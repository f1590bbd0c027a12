"""Route the pipeline's and concurrent.futures' log records into the tally instead of stderr.

A fault run makes thousands of expected error logs (callbacks and listeners that raise); each
is classified: caused by an injected fault (a note), or not (a violation: a double resolution
attempt, an internal pipeline error with a real exception, a harness bug in a callback).
"""

from __future__ import annotations

import contextlib
import logging
from typing import Iterator

from reliability.kinds import is_injected

__all__ = ["captured_logs"]

_LOGGERS = ("cuzk", "concurrent.futures")


class _Classifier(logging.Handler):
    def __init__(self, tally):
        super().__init__(logging.DEBUG)
        self.tally = tally

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = record.getMessage()
        except Exception:  # an argument whose repr raises (a hostile exception): logging's own fallback
            msg = str(record.msg)
        exc = record.exc_info[1] if record.exc_info else None
        injected = exc is not None and is_injected(exc)
        t, name = self.tally, record.name
        if name == "concurrent.futures":
            if injected:
                t.note("done-callback Exception logged by concurrent.futures")
            else:
                t.violation("harness-error", f"a done-callback raised a real exception: {msg[:200]} {exc!r:.200}")
        elif name == "cuzk.timeline" and "listener" in msg:
            if injected:
                t.note("listener exception logged by the timeline")
            else:
                t.violation("harness-error", f"a listener raised a real exception: {msg[:200]} {exc!r:.200}")
        elif name == "cuzk.pipeline" and "already resolved" in msg:
            # a cancel that won over the scheduler failing an expired job (a known Engine defect)
            # finds the future CANCELLED; any other double resolution finds it FINISHED
            lost_to_cancel = str(exc).startswith("CANCELLED") and "expired-cancelled" in t.kinds
            t.violation("expired-cancelled" if lost_to_cancel else "double-resolved", f"pipeline log: {msg[:200]}")
        elif name == "cuzk.pipeline" and "internal error" in msg:
            if injected:
                t.note("worker caught a done-callback's BaseException (logged as internal error)")
            else:
                t.violation("harness-error", f"pipeline internal error: {msg[:200]} {type(exc).__name__}")
        elif name == "cuzk.pipeline" and "after job" in msg and "finished" in msg:
            t.note("error after the job finished (logged)")
        elif name == "cuzk.pipeline" and "could not annotate" in msg:
            t.note("exception could not take a note (add_note failed)")
        elif record.levelno >= logging.WARNING:
            t.violation("harness-error", f"unexpected log from {name}: {msg[:200]}")


@contextlib.contextmanager
def captured_logs(tally) -> Iterator[None]:
    """Send records of the ``cuzk`` and ``concurrent.futures`` loggers to ``tally`` (not to
    stderr) inside the block; logger settings are restored after."""
    handler = _Classifier(tally)
    saved = []
    for name in _LOGGERS:
        log = logging.getLogger(name)
        saved.append((log, log.level, log.propagate))
        log.addHandler(handler)
        log.propagate = False
    pipeline_log = logging.getLogger("cuzk.pipeline")
    saved.append((pipeline_log, pipeline_log.level, pipeline_log.propagate))
    pipeline_log.setLevel(logging.DEBUG)  # "could not annotate" is a debug record
    try:
        yield
    finally:
        for log, level, propagate in reversed(saved):
            log.setLevel(level)
            log.propagate = propagate
        for name in _LOGGERS:
            logging.getLogger(name).removeHandler(handler)
