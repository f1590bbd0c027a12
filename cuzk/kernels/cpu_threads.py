"""Run nogil Numba kernels on several Python threads: the CPU backend's only parallelism.

Why not ``parallel=True``/``prange``: each parallel kernel compiles separately (measured here:
~45 s for the NTT's under load, against 0 for reusing the single-threaded kernels), the split is
static (a window handed to a thread that shares its core with another process makes the whole
call wait: NUMBA_NOTES pitfall 4), and Numba's pool is process-wide. Here a call starts
``threads − 1`` helper threads that, together with the caller, pull tasks from a shared counter
(dynamic scheduling) phase by phase, with a barrier between phases. Kernels release the GIL, so
the threads run truly in parallel; the helpers end with the call, so no thread outlives it.

    >>> out = []
    >>> run_phases(2, [[(out.append, (1,)), (out.append, (2,))], [(out.append, (3,))]])
    >>> sorted(out[:2]), out[2]
    ([1, 2], 3)
"""

from __future__ import annotations

import numbers
import os
import threading

from cuzk.errors import InputError

__all__ = ["resolve_threads", "available_cores", "run_phases"]


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def resolve_threads(threads) -> int:
    """The number of threads to use: ``None`` means every available core.

    Values above the core count are allowed (a caller may know better, e.g. under a cgroup quota
    that affinity does not show). Raises :class:`InputError` unless ``threads`` is a positive
    integer or None.

    >>> resolve_threads(3)
    3
    """
    if threads is None:
        return available_cores()
    if isinstance(threads, bool) or not isinstance(threads, numbers.Integral) or threads < 1:
        raise InputError(f"threads must be a positive integer or None, got {threads!r}")
    return int(threads)


def run_phases(threads: int, phases) -> None:
    """Run ``phases`` (a list of lists of ``(fn, args)`` tasks) in order; the tasks of one phase run
    concurrently on up to ``threads`` threads (the caller included). The first exception raised
    by any task is re-raised here after every thread has stopped.
    """
    phases = [list(p) for p in phases if p]
    width = min(threads, max((len(p) for p in phases), default=1))
    if width <= 1:
        for phase in phases:
            for fn, args in phase:
                fn(*args)
        return
    barrier = threading.Barrier(width)
    lock = threading.Lock()
    cursor = [0] * len(phases)
    errors: list[BaseException] = []

    def work():
        try:
            for k, phase in enumerate(phases):
                while not errors:
                    with lock:
                        i = cursor[k]
                        cursor[k] = i + 1
                    if i >= len(phase):
                        break
                    fn, args = phase[i]
                    fn(*args)
                barrier.wait()
        except threading.BrokenBarrierError:
            pass  # another thread failed; its error is reported
        except BaseException as e:  # handed to the caller below, never swallowed
            with lock:
                errors.append(e)
            barrier.abort()

    helpers = [threading.Thread(target=work, name=f"cuzk-kernel-{i}", daemon=True) for i in range(width - 1)]
    for t in helpers:
        t.start()
    work()
    for t in helpers:
        t.join()
    if errors:
        raise errors[0]
