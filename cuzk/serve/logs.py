"""``cuzk serve``'s log: ``[logging] level`` and ``format`` ("text" or "json"), and the line each
job ends with.

Every job that ends logs one line on the ``cuzk.serve`` logger: INFO when it completed or was
cancelled, WARNING when it failed (with the error), carrying the job id, proof kind, circuit,
priority and the Engine's timings. In ``format = "json"`` each line on stderr is one JSON object
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

import datetime
import json
import logging
import sys

__all__ = ["JsonFormatter", "configure", "job_line"]

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


def job_line(logger: logging.Logger, job, outcome: str, error: BaseException | None) -> None:
    """Log the end of ``job`` (see the module doc); a cheap no-op when the level is off."""
    level = logging.WARNING if outcome == "failed" else logging.INFO
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
    logger.log(level, "job %s %s: %s (%s), priority %s%s%s", job.id, outcome, job.kind, job.circuit, job.priority,
               took, why, extra={"job": fields})
