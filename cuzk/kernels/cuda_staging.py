"""Host-to-device staging of per-proof arrays through a ring of pinned chunks.

A DMA from pageable memory is staged synchronously by the driver, so per-proof arrays are first
copied into page-locked (pinned) memory. Pinning is slow (~1 ms per 10 MB) and a Filecoin-sized
proof stages 4 GiB each of a, b and c (2^27 x 32 B): instead of pinning buffers as large as the
arrays (dropped and re-pinned whenever they outgrow a cap), :class:`PinnedRing` keeps a few
fixed chunks (64 MiB) pinned for the runtime's lifetime, and :func:`stage_through_ring` copies an
array chunk by chunk: the host fills chunk i + 1 while chunk i is on the wire, and a chunk is
refilled only once the copy that read it has completed.

    >>> ring = PinnedRing(bytearray, chunk=1 << 20, count=2)
    >>> mem, buf = ring.acquire(); buf.size
    1048576
"""

from __future__ import annotations

import threading

import numpy as np

from cuzk.errors import DeviceOutOfMemoryError
from cuzk.kernels.cpu_threads import run_phases

__all__ = ["PinnedRing", "stage_through_ring", "CHUNK_BYTES", "RING_CHUNKS"]

CHUNK_BYTES = 64 << 20  # one DMA per chunk: large enough to run at full PCIe speed
RING_CHUNKS = 4  # chunks in flight at most: 256 MiB pinned per runtime, whatever the proof size


class PinnedRing:
    """Fixed-size pinned chunks handed out in turn.

    ``acquire()`` returns ``(mem, view)``: ``view`` a uint8 numpy array over a free chunk (pinning
    a new one while fewer than ``count`` exist, else waiting for the oldest chunk's copy).
    ``release(mem, event)`` makes it reusable once ``event`` (the copy reading it) is done;
    ``event`` None means at once. ``alloc(nbytes)`` returns an object owning pinned memory.
    """

    def __init__(self, alloc, chunk: int = CHUNK_BYTES, count: int = RING_CHUNKS):
        self._alloc, self.chunk, self.count = alloc, chunk, count
        self._idle: list = []  # mem
        self._busy: list = []  # (event, mem), oldest first
        self._lock = threading.Lock()
        self.pinned = 0  # chunks allocated so far
        self.allocated = 0  # bytes pinned

    def acquire(self):
        with self._lock:
            for i, (ev, mem) in enumerate(self._busy):  # copies complete in order on one stream, not across
                if ev is None or ev.done:
                    del self._busy[i]
                    self._idle.append(mem)
                    break
            if self._idle:
                return self._view(self._idle.pop())
            if self.pinned < self.count:
                mem = self._pin()
                if mem is not None:
                    return self._view(mem)
            if not self._busy:  # every chunk is held by other threads between acquire and release
                raise DeviceOutOfMemoryError(f"no pinned staging chunk free ({self.pinned} of {self.count} pinned)")
            ev, mem = self._busy.pop(0)
        ev.synchronize()  # outside the lock: other threads keep staging meanwhile
        return self._view(mem)

    def _view(self, mem):
        return mem, np.frombuffer(mem, dtype=np.uint8, count=self.chunk)

    def _pin(self):
        try:
            mem = self._alloc(self.chunk)
        except Exception as e:  # CuPy reports a failed cudaHostAlloc as a CUDARuntimeError
            if not (isinstance(e, MemoryError) or "MemoryAllocation" in str(e)):
                raise
            if self.pinned == 0:
                raise DeviceOutOfMemoryError(f"cannot pin {self.chunk:,} bytes of host memory for staging: {e}") from e
            self.count = self.pinned  # make do with the chunks there are
            return None
        self.pinned += 1
        self.allocated += self.chunk
        return mem

    def release(self, mem, event) -> None:
        with self._lock:
            self._busy.append((event, mem))


def stage_through_ring(ring: PinnedRing, src: np.ndarray, dst_ptr, copy_stream, threads: int = 1):
    """Copy the bytes of contiguous host array ``src`` to device memory ``dst_ptr`` (a CuPy
    MemoryPointer) on ``copy_stream``, one ring chunk at a time; returns the event of the last
    copy (the stream runs them in order, so it completes after all of them), None when ``src``
    is empty. ``threads`` share the host copy into each chunk (pieces of at least
    ``_MIN_FILL_BYTES``): one thread's memcpy is well below a server's memory bandwidth, and on
    the GPU path this copy is host time that the device waits for."""
    flat = src.reshape(-1).view(np.uint8)
    event = None
    for off in range(0, flat.size, ring.chunk):
        m = min(ring.chunk, flat.size - off)
        mem, buf = ring.acquire()
        try:
            _fill(buf, flat, off, m, threads)  # overlaps the DMA of the previous chunk
            (dst_ptr + off).copy_from_host_async(buf.ctypes.data, m, stream=copy_stream)
            event = copy_stream.record()
        finally:
            ring.release(mem, event)
    return event


# Bytes per thread below which a chunk's host copy stays on one thread (starting one costs ~0.1 ms).
_MIN_FILL_BYTES = 4 << 20


def _fill(buf: np.ndarray, flat: np.ndarray, off: int, m: int, threads: int) -> None:
    """buf[:m] = flat[off:off + m] on up to ``threads`` threads (numpy's copy releases the GIL)."""
    parts = min(threads, m // _MIN_FILL_BYTES)
    if parts <= 1:
        buf[:m] = flat[off : off + m]
        return
    cut = [k * m // parts for k in range(parts + 1)]
    run_phases(parts, [[(np.copyto, (buf[cut[k]:cut[k + 1]], flat[off + cut[k]:off + cut[k + 1]]))
                        for k in range(parts)]])
