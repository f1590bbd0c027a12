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

import threading

from cuzk.curve.validate import available_cores, resolve_threads, run_workers  # noqa: F401  (re-exported)

__all__ = ["resolve_threads", "available_cores", "run_phases"]


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

    run_workers(work, width, "cuzk-kernel", errors)
