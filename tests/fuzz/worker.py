"""A persistent fuzz worker: one process reads many inputs, one at a time, from its parent.

Run as ``python -m tests.fuzz.worker SEED_DIR TARGETS AS_LIMIT_MIB SCRATCH_DIR`` (the runner does
this; it also removes SCRATCH_DIR, where inputs for file readers are written, after the worker ends).
After import it warms every target on its seeds (so Numba cache loads and lazily built tables
count in the baseline, not against the first input), caps its address space at the warm size
plus ``AS_LIMIT_MIB`` (``RLIMIT_AS``: an attempt to reserve gigabytes, even untouched, then
fails as MemoryError, which is a failure outcome, instead of taking the machine down), and
reports ``{"ready": ..., "rss": baseline}``.

Protocol (binary pipes, no pickle): the parent writes ``<u16 name length, u32 payload length>``
then the target name and payload; the worker answers one JSON line per input::

    {"o": outcome, "e": exception type, "m": message, "tb": traceback (failures only),
     "r0": RSS before (bytes), "h": peak RSS during the input (bytes)}

with outcome ``rejected`` (a cuzk error: fine), ``accepted`` (the oracle found nothing wrong),
``exception`` (any other exception, in the reader or while using its result) or ``oracle``
(accepted, but the oracle found it wrong). The peak is exact per input: the worker resets the
kernel's high-water mark (``/proc/self/clear_refs``) before each input.
"""

from __future__ import annotations

import json
import os
import resource
import struct
import sys
import traceback

__all__ = ["main", "FRAME", "status_bytes", "run_one"]

FRAME = struct.Struct("<HI")


def status_bytes(key: str, pid: str = "self") -> int:
    """A ``/proc/<pid>/status`` size field (VmRSS, VmHWM, VmSize) in bytes; 0 if unavailable."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS
    except OSError:
        pass  # then VmHWM is the lifetime peak: an overestimate, still a bound


def run_one(target, ctx, payload: bytes, path: str) -> dict:
    """Read one input with ``target`` and judge it; the reply dict minus the memory fields."""
    from cuzk.errors import CuzkError

    if target.from_file:
        with open(path, "wb") as f:
            f.write(payload)
        arg = path
    else:
        arg = payload
    ctx.last_input = payload
    try:
        obj = target.read(arg)
    except CuzkError as e:
        return {"o": "rejected", "e": type(e).__name__, "m": str(e)[:300]}
    except (Exception, RecursionError, MemoryError) as e:
        return {"o": "exception", "e": type(e).__name__, "m": str(e)[:300], "tb": traceback.format_exc()}
    try:
        bad = target.oracle(obj, ctx) if target.oracle else None
    except CuzkError as e:
        return {"o": "accepted", "e": type(e).__name__, "m": f"(while using it) {str(e)[:300]}"}
    except (Exception, RecursionError, MemoryError) as e:
        return {"o": "exception", "e": type(e).__name__, "m": f"while using the accepted result: {str(e)[:300]}",
                "tb": traceback.format_exc()}
    if bad:
        return {"o": "oracle", "e": "", "m": bad}
    return {"o": "accepted", "e": "", "m": ""}


def _read_exact(f, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        chunk = f.read(n - len(out))
        if not chunk:
            raise EOFError
        out += chunk
    return bytes(out)


def main(argv=None) -> int:
    seed_dir, names, as_limit_mib, scratch = (argv or sys.argv[1:])[:4]
    proto_in, proto_out = sys.stdin.buffer, os.fdopen(os.dup(1), "wb", buffering=0)
    sys.stdout = sys.stderr  # a stray print must not corrupt the protocol
    os.dup2(2, 1)
    from . import seeds as S
    from .targets import TARGETS, Context

    ctx = Context(seed_dir)
    targets = {n: TARGETS[n] for n in names.split(",")}
    path = os.path.join(scratch, "input")
    ctx.warm()
    for t in targets.values():  # warm up: every reader and oracle once on every seed
        for p in S.seed_files(seed_dir, t.kind):
            with open(p, "rb") as f:
                res = run_one(t, ctx, f.read(), path)
            if res["o"] != "accepted":
                raise RuntimeError(f"seed {p} is not accepted by {t.name}: {res}")
    extra = int(as_limit_mib) << 20
    if extra > 0:
        vms = status_bytes("VmSize")
        resource.setrlimit(resource.RLIMIT_AS, (vms + extra, resource.RLIM_INFINITY))
    proto_out.write(json.dumps({"ready": True, "rss": status_bytes("VmRSS")}).encode() + b"\n")
    while True:
        try:
            nlen, plen = FRAME.unpack(_read_exact(proto_in, FRAME.size))
            name = _read_exact(proto_in, nlen).decode()
            payload = _read_exact(proto_in, plen)
        except EOFError:
            return 0
        _reset_peak()
        r0 = status_bytes("VmRSS")
        res = run_one(targets[name], ctx, payload, path)
        res["r0"], res["h"] = r0, status_bytes("VmHWM")
        proto_out.write(json.dumps(res).encode() + b"\n")


if __name__ == "__main__":
    sys.exit(main())
