"""The device tier's accounting: how many bytes of proving keys each CUDA device may hold, and
which circuits' keys are resident where (docs/engine.md, "Devices").

A key made resident on a device (``GpuProver(pk, device="cuda")``) puts its five queries there
(a, b_g1, b_g2, l, h: :func:`key_device_bytes`). Each device has a budget for resident keys,
apart from the engine's host memory budget:

* ``device_budget="auto"``: the device's memory minus a margin of a quarter of it, at least
  2 GiB, for a proof's working memory (NTT buffers, MSM buckets and sort arrays, staging) —
  but never less than half the device;
* an int: bytes per device; None: no accounting (only the device itself says no).

Before a key is made resident the Engine evicts idle keys (no queued or running job) from that
device, least recently used first, until it fits; a key larger than the whole device budget
fails its job with ``MemoryBudgetError`` naming the sizes. If the upload still runs out of device
memory (other processes, proofs' temporaries), every idle key on that device is dropped and the
upload is tried once more; then the job fails with ``DeviceOutOfMemoryError`` naming the key's
size, the device and what is resident there.

    >>> resolve_device_budget("auto", 80 << 30) == 60 << 30
    True
    >>> resolve_device_budget("auto", 2 << 30) == 1 << 30      # a small device: half of it
    True
"""

from __future__ import annotations

import threading

from cuzk.errors import InputError

__all__ = ["DeviceTier", "key_device_bytes", "resolve_device_budget", "device_total_memory"]

_MARGIN_FRACTION = 4  # a quarter of the device for a proof's working memory ...
_MARGIN_MIN = 2 << 30  # ... and at least 2 GiB of it
_QUERIES = ("a", "b_g1", "b_g2", "l", "h")


def key_device_bytes(pk) -> int:
    """Bytes a :class:`~cuzk.groth16.ProvingKey` takes on a device: its five point queries, and
    the A and B queries' row numbers (uint32 each) that the proofs gather their scalars by."""
    return sum(getattr(pk, q).nbytes for q in _QUERIES) + 4 * (len(pk.a) + len(pk.b_g1))


def device_total_memory(device_id: int) -> int:
    """Total memory of CUDA device ``device_id`` in bytes (CuPy's device properties)."""
    import cupy

    return int(cupy.cuda.runtime.getDeviceProperties(device_id)["totalGlobalMem"])


def resolve_device_budget(budget, total: int) -> int | None:
    """Bytes of keys a device of ``total`` bytes may hold (see the module docstring).

    Raises:
        cuzk.errors.InputError: not "auto", None or an int > 0.
    """
    if budget is None:
        return None
    if budget == "auto":
        return max(total - max(total // _MARGIN_FRACTION, _MARGIN_MIN), total // 2)
    if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
        raise InputError(f"device_budget must be bytes per device (an int > 0), 'auto' or None, got {budget!r}")
    return budget


class DeviceTier:
    """Resident key bytes per device and circuit, and each device's budget (thread-safe)."""

    def __init__(self, devices, budget):
        self._lock = threading.Lock()
        if budget is not None and budget != "auto":
            resolve_device_budget(budget, 0)  # InputError for a bad value before asking any device
        # only "auto" needs each device's size (and CuPy; the host build of the kernels has none)
        self.totals = {d: device_total_memory(d) if budget == "auto" else None for d in devices}
        self.budgets = {d: resolve_device_budget(budget, self.totals[d]) for d in devices}
        self._resident: dict = {d: {} for d in devices}

    def used(self, device) -> int:
        with self._lock:
            return sum(self._resident[device].values())

    def fits(self, device, nbytes: int) -> bool:
        budget = self.budgets[device]
        return budget is None or self.used(device) + nbytes <= budget

    def add(self, device, name: str, nbytes: int) -> None:
        with self._lock:
            self._resident[device][name] = nbytes

    def remove(self, device, name: str) -> int:
        with self._lock:
            return self._resident[device].pop(name, 0)

    def resident(self, device) -> dict:
        with self._lock:
            return dict(self._resident[device])

    def status(self) -> dict:
        """``{device: {"total", "budget", "keys", "resident": {circuit: bytes}}}`` (str device ids, for JSON)."""
        with self._lock:
            return {str(d): {"total": self.totals[d], "budget": self.budgets[d], "keys": sum(r.values()),
                             "resident": dict(r)} for d, r in self._resident.items()}
