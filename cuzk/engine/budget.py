"""The engine's memory budget: what "auto" means, and what a budget may be.

``"auto"`` is the memory available now (``MemAvailable`` from /proc/meminfo, else total physical
memory) minus a safety margin of 10% of it and at least 1 GiB: room for the interpreter, Numba's
code, the prover's temporaries (NTT buffers, MSM buckets) and the rest of the host. One budget
covers host-tier keys, the registered circuits' PCEs and the synthesized witnesses in flight.

    >>> resolve_budget(2**30)
    1073741824
"""

from __future__ import annotations

import os

from cuzk.errors import InputError

__all__ = ["resolve_budget", "available_memory", "SAFETY_FRACTION", "SAFETY_MIN"]

SAFETY_FRACTION = 0.10
SAFETY_MIN = 1 << 30
_ABSURD_FACTOR = 64  # a budget 64x the machine's memory is a typo, not a plan


def _meminfo(field: str) -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def physical_memory() -> int:
    total = _meminfo("MemTotal")
    if total is None:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return total


def available_memory() -> int:
    avail = _meminfo("MemAvailable")
    return avail if avail is not None else physical_memory()


def resolve_budget(budget) -> int | None:
    """Bytes of the budget: an int as given, ``"auto"`` as above, None for no budget.

    Raises:
        cuzk.errors.InputError: not an int, "auto" or None; <= 0; or over 64x physical memory.
    """
    if budget is None:
        return None
    if budget == "auto":
        avail = available_memory()
        return max(1, avail - max(SAFETY_MIN, int(avail * SAFETY_FRACTION)))
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise InputError(f"memory_budget must be bytes (an int), 'auto' or None, got {budget!r}")
    if budget <= 0:
        raise InputError(f"memory_budget must be > 0 bytes, got {budget}")
    if budget > _ABSURD_FACTOR * physical_memory():
        raise InputError(f"memory_budget of {budget} bytes is over {_ABSURD_FACTOR}x this machine's memory "
                         f"({physical_memory()} bytes)")
    return budget
