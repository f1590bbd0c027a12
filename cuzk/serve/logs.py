"""``cuzk serve``'s log: ``[logging] level`` and ``format`` ("text" or "json"), and the line each
job ends with.

Every job that ends logs one line on the ``cuzk.serve`` logger: INFO when it completed or was
cancelled, WARNING when it failed (with the error), carrying the job id, proof kind, circuit,
priority and the Engine's timings, stamped with the time the job ended. The lines are written
by a thread of their own a moment later (:class:`JobLines`, at most ``period_s``), not on the
thread that ends the job: that thread has just woken the RPC waiting for the answer, and
formatting and writing a line there (~0.1 ms) stood between the proof and its reply. A graceful
stop writes the lines still pending. In ``format = "json"`` each line on stderr is one JSON object
(``ts``, ``level``, ``logger``, ``message`` and, on a job's line, ``job`` with those fields), for a
log pipeline to index without parsing text. The addresses ``cuzk serve`` prints at start stay
plain text on stdout.

    >>> import io, logging
    >>> h = logging.StreamHandler(io.StringIO()); h.setFormatter(JsonFormatter())
    >>> rec = logging.makeLogRecord({"name": "cuzk.serve", "levelname": "INFO", "msg": "hi", "created": 0.0})
    >>> json.loads(h.format(rec))["message"]
    'hi'
"""

from __future__ import annotations

import collections
import datetime
import json
import logging
import sys
import threading
import time

__all__ = ["JsonFormatter", "configure", "job_line", "JobLines"]

_LEVELS = {"trace": logging.DEBUG, "debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING,
           "warning": logging.WARNING, "error": logging.ERROR}
_TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    """One JSON object per record: ts (UTC, ISO 8601), level, logger, message, the ``job`` fields
    of a job's line, and the traceback text of a logged exception."""

    def format(self, record: logging.LogRecord) -> str:
        out = {"ts": datetime.datetime.fromtimestamp(record.created, datetime.timezone.utc).isoformat(),
               "level": record.levelname, "logger": record.name, "message": record.getMessage()}
        job = getattr(record, "job", None)
        if job is not None:
            out["job"] = job
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


_installed: list[logging.Handler] = []  # the handler configure() put on the root logger


def configure(level: str, fmt: str, stream=None) -> logging.Handler:
    """Send log records at ``level`` and above to ``stream`` (stderr) in ``fmt``, replacing the
    handler an earlier call installed; returns the handler."""
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(_TEXT))
    root = logging.getLogger()
    while _installed:
        root.removeHandler(_installed.pop())
    root.addHandler(handler)
    _installed.append(handler)
    root.setLevel(_LEVELS[level])
    return handler


def _level(outcome: str) -> int:
    return logging.WARNING if outcome == "failed" else logging.INFO


def job_line(logger: logging.Logger, job, outcome: str, error: BaseException | None,
             ended: float | None = None) -> None:
    """Log the end of ``job`` (see the module doc), stamped ``ended`` (a ``time.time()``; None:
    now); a cheap no-op when the level is off."""
    level = _level(outcome)
    if not logger.isEnabledFor(level):
        return
    fields = {"id": job.id, "outcome": outcome, "kind": job.kind, "circuit": job.circuit, "priority": job.priority}
    t = getattr(job.engine_future, "timings", None) if job.engine_future is not None else None
    took = ""
    if t is not None:
        fields["timings_s"] = {k: round(v, 6) for k, v in t.as_dict().items() if v is not None}
        prove = t.device_s if t.device_s is not None else t.prove_s
        took = (f", {t.total_s:.3f} s (queue {t.queue_wait_s:.3f}, key load {t.key_load_s:.3f}, "
                f"synthesis {t.synth_s:.3f}, prove {prove:.3f})")
    why = ""
    if error is not None:
        fields["error"] = f"{type(error).__name__}: {error}"[:4000]
        why = f": {fields['error']}"
    record = logger.makeRecord(logger.name, level, __file__, 0, "job %s %s: %s (%s), priority %s%s%s",
                               (job.id, outcome, job.kind, job.circuit, job.priority, took, why), None,
                               func="job_line", extra={"job": fields})
    if ended is not None:
        record.created, record.msecs = ended, (ended - int(ended)) * 1000
    logger.handle(record)


class JobLines:
    """Job lines written off the thread that ends the jobs (see the module doc): :meth:`post`
    keeps the job, a thread writes what was posted every ``period_s``, :meth:`close` writes the
    rest and stops it.

    >>> import io, types
    >>> log = logging.getLogger("cuzk.serve.doctest"); log.propagate = False; log.setLevel(logging.INFO)
    >>> buf = io.StringIO(); log.addHandler(logging.StreamHandler(buf))
    >>> lines = JobLines(log)
    >>> job = types.SimpleNamespace(id="j1", kind="circuit:cube", circuit="cube", priority="normal", engine_future=None)
    >>> lines.post(job, "completed", None)
    >>> lines.close(); buf.getvalue()
    'job j1 completed: circuit:cube (cube), priority normal\\n'
    """

    def __init__(self, logger: logging.Logger, period_s: float = 0.2):
        self.logger, self.period_s = logger, period_s
        self._pending: collections.deque = collections.deque()  # appends and pops are atomic
        self._closed = threading.Event()
        self._lock = threading.Lock()  # the thread's start and stop
        self._thread: threading.Thread | None = None  # started by the first line posted

    def post(self, job, outcome: str, error: BaseException | None) -> None:
        """Log ``job``'s end soon, stamped now (written at once after :meth:`close`)."""
        if not self.logger.isEnabledFor(_level(outcome)):
            return
        self._pending.append((job, outcome, error, time.time()))
        if self._thread is None:
            with self._lock:
                if self._thread is None and not self._closed.is_set():
                    self._thread = threading.Thread(target=self._run, name="cuzk-serve-joblines", daemon=True)
                    self._thread.start()
        if self._closed.is_set():
            self.flush()

    def flush(self) -> None:
        """Write every line posted so far."""
        while True:
            try:
                job, outcome, error, ended = self._pending.popleft()
            except IndexError:
                return
            try:
                job_line(self.logger, job, outcome, error, ended)
            except Exception:  # noqa: BLE001 - a line that fails to format costs that line only
                self.logger.exception("cuzk serve: writing job %s's line", getattr(job, "id", "?"))

    def _run(self) -> None:
        while not self._closed.wait(self.period_s):
            self.flush()

    def close(self) -> None:
        """Stop the thread and write the lines still pending; idempotent."""
        with self._lock:
            self._closed.set()
            thread = self._thread
        if thread is not None:
            thread.join()
        self.flush()
