"""The layout of a staged array: its parts' rows one after another, then zero rows.

A prover pads A·z, B·z and C·z to the evaluation domain (the circuit's rows, then one row per
input in A, then zeros). Built on the host, that padding is three domain-sized allocations,
zero-filled and copied into, before a byte reaches the device. ``stage(..., rows=m)`` of each
backend takes the parts instead: the CPU backend stacks them here, the CUDA runtime copies only
the parts' bytes and zeroes the tail on the device.

    >>> import numpy as np
    >>> stack_rows([np.ones((2, 4), np.uint64), np.full((1, 4), 7, np.uint64)], 5)[:, 0].tolist()
    [1, 1, 7, 0, 0]
"""

from __future__ import annotations

import numpy as np

from cuzk.errors import InputError
from cuzk.kernels.cpu_threads import run_phases

__all__ = ["stacked_shape", "stack_rows"]

# Rows per copy task when several threads stack (tens of MiB: a task's start is noise).
_TASK_ROWS = 1 << 20


def stacked_shape(parts, rows: int | None) -> tuple[tuple, np.dtype]:
    """(shape, dtype) of ``parts`` stacked and padded to ``rows`` rows (None: no padding).

    Raises:
        InputError: no part, parts of different row shapes or dtypes, or more rows than ``rows``.
    """
    if not parts:
        raise InputError("stage needs at least one array (part) per staged array")
    tail, dtype = parts[0].shape[1:], parts[0].dtype
    for k, p in enumerate(parts[1:], 1):
        if p.shape[1:] != tail or p.dtype != dtype:
            raise InputError(f"part {k} has rows of {p.shape[1:]} {p.dtype}, part 0 of {tail} {dtype}")
    total = sum(p.shape[0] for p in parts)
    if rows is None:
        rows = total
    if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < total:
        raise InputError(f"rows must be an int >= the parts' {total} rows, got {rows!r}")
    return (int(rows),) + tail, dtype


def stack_rows(parts, rows: int | None = None, threads: int = 1) -> np.ndarray:
    """A new host array: ``parts`` one after another, then zero rows up to ``rows``; the copies
    run on up to ``threads`` threads (numpy's copy releases the GIL)."""
    shape, dtype = stacked_shape(parts, rows)
    out = np.empty(shape, dtype)
    tasks, at = [], 0
    for p in parts:
        for lo in range(0, p.shape[0], _TASK_ROWS):
            hi = min(p.shape[0], lo + _TASK_ROWS)
            tasks.append((np.copyto, (out[at + lo:at + hi], p[lo:hi])))
        at += p.shape[0]
    for lo in range(at, shape[0], _TASK_ROWS):
        tasks.append((np.ndarray.fill, (out[lo:min(shape[0], lo + _TASK_ROWS)], 0)))
    # a helper thread costs ~50 us to start: a small array is stacked on the caller's alone
    run_phases(threads if shape[0] > _TASK_ROWS else 1, [tasks])
    return out
