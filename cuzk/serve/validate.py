"""Checks of every request field before anything reaches the Engine, and the one exception that
carries a refusal to the RPC layer: :class:`RequestError` with a gRPC status name and a message
naming the field (``request_id: ...``). No grpc import, so the checks are tested without a server.

    >>> check_job_id("")
    Traceback (most recent call last):
    ...
    cuzk.serve.validate.RequestError: INVALID_ARGUMENT: job_id: is empty
"""

from __future__ import annotations

import time

from cuzk.errors import CuzkError

__all__ = ["RequestError", "invalid", "status_text", "STATUS_BYTES", "check_request_id", "check_job_id",
           "check_timeout_ms", "check_deadline_ms", "check_priority", "check_proof_kind", "check_circuit_id", "MAX_ID_CHARS", "MAX_TIMEOUT_MS"]

MAX_ID_CHARS = 256  #: request/job ids: Curio's are ~60 characters ("wdpost-<miner>-<partition>-[<8 bytes>]")
MAX_TIMEOUT_MS = 30 * 86400 * 1000  #: 30 days: longer is a client bug, not a wait
_PROOF_KINDS = {1: "POREP_SEAL_COMMIT", 2: "SNAP_DEALS_UPDATE", 3: "WINDOW_POST_PARTITION", 4: "WINNING_POST"}
_PRIORITIES = {0: None, 1: "low", 2: "normal", 3: "high", 4: "critical"}


#: a status message's bound, percent-encoded (grpc-message): clients refuse metadata over 16 KiB
STATUS_BYTES = 8000


def status_text(message: str, limit: int = STATUS_BYTES) -> str:
    """``message`` cut to whole characters so that its percent-encoded form, as grpc sends a
    status message (each byte outside printable ASCII, and ``%``, becomes three), stays within
    ``limit`` bytes. A longer one passes the client's 16 KiB metadata limit, and the client sees
    RESOURCE_EXHAUSTED ("metadata size exceeds hard limit") instead of the status.

    >>> len(status_text("x" * 9000)), len(status_text("é" * 9000))
    (8000, 1333)
    """
    if len(message) * 12 <= limit:  # even 4-byte characters, each byte encoded as three, fit
        return message
    size = 0
    for i, ch in enumerate(message):
        size += sum(1 if 0x20 <= b <= 0x7E and b != 0x25 else 3 for b in ch.encode("utf-8", "replace"))
        if size > limit:
            return message[:i]
    return message


class RequestError(CuzkError):
    """A refused request: ``code`` is a gRPC status name (``"INVALID_ARGUMENT"``, ``"NOT_FOUND"``, ...)."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def invalid(field: str, problem: str) -> RequestError:
    """INVALID_ARGUMENT with ``field: problem``."""
    return RequestError("INVALID_ARGUMENT", f"{field}: {problem}")


def _text_id(value, field: str, *, empty_ok: bool) -> str:
    if not isinstance(value, str):
        raise invalid(field, f"must be a string, got {type(value).__name__}")
    if not value:
        if empty_ok:
            return value
        raise invalid(field, "is empty")
    if len(value) > MAX_ID_CHARS:
        raise invalid(field, f"has {len(value)} characters, at most {MAX_ID_CHARS}")
    if not value.isprintable():
        raise invalid(field, "holds control or unprintable characters")
    return value


def check_request_id(value) -> str:
    """A request id: empty (a fresh job) or 1..256 printable characters."""
    return _text_id(value, "request_id", empty_ok=True)


def check_job_id(value) -> str:
    return _text_id(value, "job_id", empty_ok=False)


def check_circuit_id(value, field: str = "circuit_id") -> str:
    return _text_id(value, field, empty_ok=False)


def check_timeout_ms(value, field: str = "timeout_ms") -> float | None:
    """Seconds to wait, None for "until the job ends" (0)."""
    if not 0 <= value <= MAX_TIMEOUT_MS:
        raise invalid(field, f"must be 0 (wait until done) .. {MAX_TIMEOUT_MS} ms, got {value}")
    return value / 1000 if value else None


def check_deadline_ms(value, field: str = "deadline_unix_ms") -> float | None:
    """A ``time.time()`` deadline, None for 0. One more than a year ahead is refused (a unit mistake)."""
    if value == 0:
        return None
    if value > (time.time() + 366 * 86400) * 1000:
        raise invalid(field, f"{value} is more than a year ahead: Unix time in milliseconds is expected")
    return value / 1000


def check_priority(value, field: str = "priority") -> str | None:
    """The Engine priority name, None for PRIORITY_UNSPECIFIED (the kind's or circuit's default)."""
    if value not in _PRIORITIES:
        raise invalid(field, f"{value} is not a Priority (0-4)")
    return _PRIORITIES[value]


def check_proof_kind(value) -> str:
    if value == 0:
        raise invalid("proof_kind", "is PROOF_KIND_UNSPECIFIED")
    if value not in _PROOF_KINDS:
        raise invalid("proof_kind", f"{value} is not a ProofKind (1-4)")
    return _PROOF_KINDS[value]
