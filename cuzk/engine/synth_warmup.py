"""Warm a synthesis worker process before its first job: load the Numba machine code its
synthesizer will run from Numba's on-disk cache, so the first job does not pay for it.

A fresh worker process has imported cuzk, but Numba loads a kernel's cached machine code only
at the kernel's first call (~10-30 ms per specialisation). :func:`warm_up` runs in the worker
right after it reported ready, so the parent never waits for it (``Engine.register`` and
``make_executor`` return as before); a job that arrives meanwhile stops it (the worker polls its
pipe between loads), so that job waits for at most one load.

What is loaded: the synthesizer's own ``warm_up()`` when it has one; then, for every Numba
dispatcher (``cache=True``) of the modules a synthesis calls into — ``cuzk.synth.*`` (witness
program, matrix products), ``cuzk.curves.bls12_381.fr_array`` (Fr conversions) and the synthesizer class's
own top-level package — every specialisation in that dispatcher's on-disk cache whose index key
matches the function as it is now. Nothing is compiled: a specialisation missing from the cache
stays for the first job to compile, as before. This uses Numba's cache index (a private API); on
any surprise it loads nothing and says so at DEBUG level, never failing the worker. Measured
(benchmarks/executor_bench.py --first-job, docs/perf/executors.md): cuzk's own synthesizer's
first job in a fresh worker 38.3 ms without, 7.8 ms with (second job 5-7 ms); circom's path
loads most of its kernels while the worker builds the synthesizer, before "ready".

    >>> warm_up(object()) >= 0
    True
"""

from __future__ import annotations

import logging
import sys
import time

__all__ = ["warm_up", "PREFIXES"]

PREFIXES = ("cuzk.synth.", "cuzk.curves.bls12_381.fr_array")
_log = logging.getLogger("cuzk.engine.executors")


def _dispatchers(prefixes):
    from numba.core.dispatcher import Dispatcher

    seen = set()
    for name, mod in list(sys.modules.items()):
        if mod is None or not name.startswith(prefixes):
            continue
        for obj in list(vars(mod).values()):
            if isinstance(obj, Dispatcher) and id(obj) not in seen and getattr(obj, "_cache", None) is not None:
                seen.add(id(obj))
                yield obj


def _load_cached(disp, stop) -> int:
    """Load every specialisation of ``disp`` its on-disk cache holds for the current code."""
    cache = disp._cache
    index = cache._cache_file._load_index()  # {(sig, magic tuple, code hashes): file}; {} when stale
    codegen = disp.targetctx.codegen()
    have = {tuple(s) for s in disp.signatures}
    n = 0
    for key in index:
        if stop():
            break
        sig = key[0]
        if tuple(sig) in have or cache._index_key(sig, codegen) != key:
            continue  # loaded already, or made for other code / another machine: would compile
        disp.compile(sig)  # the cache holds it: a load, not a compile
        n += 1
    return n


def warm_up(synthesizer, stop=lambda: False) -> int:
    """Warm this process for ``synthesizer`` (see the module docstring); returns the number of
    Numba specialisations loaded. ``stop()`` is asked before each load: true (a job is waiting)
    ends the warm-up. Never raises."""
    t0 = time.perf_counter()
    hook = getattr(synthesizer, "warm_up", None)
    if callable(hook):
        try:
            hook()
        except Exception as e:  # a failing hook must not cost the worker: jobs will tell
            _log.debug("synthesizer warm_up() failed: %r", e)
    own = type(synthesizer).__module__.split(".")[0]
    prefixes = PREFIXES + ((own,) if own not in ("builtins", "cuzk", "__main__") else ())
    n = 0
    try:
        for disp in _dispatchers(prefixes):
            if stop():
                break
            n += _load_cached(disp, stop)
    except Exception as e:  # Numba's cache internals changed: nothing to warm, jobs load on demand
        _log.debug("synthesis worker warm-up stopped: %r", e)
    _log.debug("synthesis worker warm-up: %d Numba specialisations in %.3f s", n, time.perf_counter() - t0)
    return n
