"""Idempotent submits: a request id the engine still knows returns the same future.

An id is known while its job is queued or running and for ``retention_s`` seconds after it
resolved (default 600 s; ``Engine(request_retention_s=...)``), so a client that retries after a
lost connection gets the proof that was already made instead of a second proof. The same id
with another circuit or other inputs is an error, never a silent reuse.

    >>> table = RequestTable(retention_s=60)
    >>> table.lookup("r1", "cube", {"x": 3}) is None
    True
"""

from __future__ import annotations

import hashlib
import threading
import time
from typing import Any, Hashable

import numpy as np

from cuzk.errors import InputError

__all__ = ["RequestTable", "inputs_digest", "DEFAULT_RETENTION_S"]

DEFAULT_RETENTION_S = 600.0


def _feed(h, value: Any) -> None:
    """Hash a canonical encoding of ``value`` (mappings by sorted key; arrays by dtype, shape, bytes)."""
    if isinstance(value, dict) or hasattr(value, "items") and callable(value.items):
        h.update(b"{")
        for k in sorted(value, key=repr):
            _feed(h, k)
            _feed(h, value[k])
        h.update(b"}")
    elif isinstance(value, np.ndarray):
        h.update(f"nd{value.dtype.str}{value.shape}".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, (list, tuple)):
        h.update(b"[" if isinstance(value, list) else b"(")
        for v in value:
            _feed(h, v)
        h.update(b"]")
    else:
        h.update(f"{type(value).__name__}:{value!r};".encode())


def inputs_digest(name: str, inputs: Any) -> str:
    """A digest of a circuit name and its inputs (one mapping, or a list for partitions)."""
    h = hashlib.blake2b(digest_size=20)
    _feed(h, name)
    _feed(h, inputs)
    return h.hexdigest()


class RequestTable:
    """Request id -> (digest, future, resolved at); thread-safe; forgets resolved ids after
    ``retention_s``."""

    def __init__(self, retention_s: float = DEFAULT_RETENTION_S):
        self.retention_s = retention_s
        self._lock = threading.Lock()
        self._items: dict[Hashable, list] = {}  # id -> [digest, future, resolved_monotonic | None]

    def _purge(self, now: float) -> None:
        # ">=": a resolved id is known while less than retention_s old; with 0 it is forgotten at
        # once, even when the clock has not moved since it resolved (a coarse monotonic clock)
        old = [k for k, (_, _, t) in self._items.items() if t is not None and now - t >= self.retention_s]
        for k in old:
            del self._items[k]

    def lookup(self, request_id: Hashable, name: str, inputs: Any):
        """The known future for ``request_id``, or None.

        Raises:
            cuzk.errors.InputError: the id is known for another circuit or other inputs.
        """
        digest = inputs_digest(name, inputs)
        with self._lock:
            self._purge(time.monotonic())
            item = self._items.get(request_id)
        if item is None:
            return None
        if item[0] != digest:
            raise InputError(f"request id {request_id!r} was already used for another circuit or other inputs")
        return item[1]

    def add(self, request_id: Hashable, name: str, inputs: Any, future) -> None:
        with self._lock:
            self._items[request_id] = [inputs_digest(name, inputs), future, None]

        def resolved(_f, request_id=request_id):
            with self._lock:
                item = self._items.get(request_id)
                if item is not None and item[1] is future:
                    item[2] = time.monotonic()

        future.add_done_callback(resolved)

    def __len__(self) -> int:
        return len(self._items)
