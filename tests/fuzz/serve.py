"""Fuzzing ``cuzk serve``: mutated Curio requests and garbage bytes against a live daemon.

Every answer must be a gRPC status with a message or a normal reply; afterwards the daemon still
proves, and (in a long run) its threads, file descriptors and memory have not grown. Requests
start from valid ones (a 2 KiB WindowPoSt partition and WinningPoSt with cuzk-made vanilla
proofs, a PoRep C1 envelope shape, a 2 KiB SnapDeals update of a cuzk-sealed sector, the
extension's JSON inputs) and have one or more fields
replaced, truncated, bit-flipped or made huge. The daemon under test has no Filecoin parameter
files, so a request that is still valid after mutation is answered FAILED_PRECONDITION after
all its checks ran, instead of starting a proof.

Long run (from the repository root; a child daemon, its RSS/threads/fds read from /proc)::

    .venv/bin/python -m tests.fuzz.serve --requests 100000 --threads 8 --seed 1
"""

from __future__ import annotations

import argparse
import base64
import functools
import json
import os
import random
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

__all__ = ["Mutator", "raw_garbage_call", "METHODS"]

#: every unary RPC's full path (raw-bytes calls go to each; the health Watch stream has its own test)
METHODS = [f"/cuzk.v1.ProvingEngine/{m}" for m in ("SubmitProof", "AwaitProof", "Prove", "CancelProof", "GetStatus",
                                                   "GetMetrics", "PreloadSRS", "EvictSRS")] + \
          [f"/cuzk.v1.CircuitProver/{m}" for m in ("ProveCircuit", "ListCircuits")] + ["/grpc.health.v1.Health/Check"]
_EDGE_INTS = [0, 1, 2, 3, 4, 5, 9, 10, 14, 15, 19, 20, 255, 2048, 4096, 8 << 20, 32 << 30, (1 << 32) - 1, 1 << 32,
              (1 << 63) - 1, (1 << 64) - 1]
_U32 = {"partition_index"}
_ENUMS = {"proof_kind", "priority"}  # int32 on the wire: a client cannot even send a larger value
_INT_FIELDS = ["proof_kind", "sector_size", "registered_proof", "priority", "sector_number", "miner_id",
               "partition_index", "deadline_unix_ms"]
_BYTES_FIELDS = ["vanilla_proof", "randomness", "comm_r_old", "comm_r_new", "comm_d_new"]


@functools.cache
def _seed_requests() -> tuple:
    """Valid starting points: (kind, fields); made once per process (sealing the SnapDeals sector
    takes seconds), and never changed: a Mutator copies what it mutates."""
    from cuzk.circuits.filecoin.porep import fr32_pad, seal
    from cuzk.circuits.filecoin.update import partition_proofs, update
    from cuzk.field import FR
    from tests.serve_support import sectors, snap_request, window_request, winning_request

    rng = random.Random(5)
    secs = sectors(2, seed=9)
    out = [("window", window_request(secs, rng.randrange(FR.modulus))),
           ("winning", winning_request(secs[0], rng.randrange(FR.modulus)))]
    c1 = json.dumps({"registered_proof": "StackedDrg2KiBV1_1", "vanilla_proofs": {"StackedDrg2KiBV1": [[]]},
                     "comm_r": [0] * 32, "comm_d": [0] * 32, "replica_id": [0] * 32, "seed": [0] * 32,
                     "ticket": [0] * 32}).encode()
    env = json.dumps({"SectorNum": 7, "Phase1Out": base64.b64encode(c1).decode(), "SectorSize": 2048}).encode()
    out.append(("porep", dict(proof_kind=1, sector_size=2048, registered_proof=5, vanilla_proof=env, sector_number=7,
                              miner_id=1000)))
    sealed = seal(fr32_pad(rng.randbytes(2032)), registered_proof=5, prover_id=bytes(32), sector_id=7,
                  ticket=bytes([1] * 32))
    updated = update(sealed, fr32_pad(rng.randbytes(2032)))
    out.append(("snap", snap_request(updated, partition_proofs(updated))))
    return tuple(out)


class Mutator:
    """Makes mutated requests from the seed requests, deterministically from ``seed``."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.seeds = _seed_requests()

    def _bytes(self, b: bytes) -> bytes:
        r = self.rng
        op = r.randrange(7)
        if op == 0 or not b:
            return r.randbytes(r.choice([0, 1, 31, 32, 33, 64, 200]))
        if op == 1:
            return b[:r.randrange(len(b))]
        if op == 2:
            x = bytearray(b)
            for _ in range(r.randint(1, 8)):
                x[r.randrange(len(x))] ^= 1 << r.randrange(8)
            return bytes(x)
        if op == 3:
            x = bytearray(b)
            i = r.randrange(len(x))
            x[i:i + 8] = (r.choice([0, 1, 2, 255, 1 << 20, (1 << 64) - 1]) % (1 << 64)).to_bytes(8, "little")
            return bytes(x)  # a length prefix or integer made absurd
        if op == 4:
            return b + r.randbytes(r.randint(1, 64))
        if op == 5:
            return b"\xff" * len(b)
        return bytes(len(b))

    def submit_fields(self) -> dict:
        r = self.rng
        _, base = r.choice(self.seeds)
        f = dict(base)
        f["request_id"] = r.choice(["", f"fuzz-{r.randrange(1 << 30)}", "x" * r.choice([1, 256, 257, 4000]),
                                    "bad\x00id", "\u2603" * 10])
        for _ in range(r.randint(1, 3)):
            what = r.randrange(4)
            if what == 0:
                name = r.choice(_INT_FIELDS)
                v = r.choice(_EDGE_INTS) if r.random() < 0.7 else r.randrange(1 << 64)
                if name in _U32:
                    v %= 1 << 32
                if name in _ENUMS:
                    v %= 1 << 31
                f[name] = v
            elif what == 1:
                name = r.choice(_BYTES_FIELDS)
                f[name] = self._bytes(f.get(name, b""))
            elif what == 2 and f.get("vanilla_proofs"):
                vp = list(f["vanilla_proofs"])
                i = r.randrange(len(vp))
                vp[i] = self._bytes(vp[i])
                if r.random() < 0.2:
                    vp = vp * r.randint(2, 5)
                f["vanilla_proofs"] = vp
            else:
                f["vanilla_proofs"] = [r.randbytes(r.randint(0, 300)) for _ in range(r.randint(0, 4))]
        return f

    def circuit_fields(self) -> dict:
        r = self.rng
        inputs = r.choice(['{"x": 3, "out": 35}', '{"x": "0x03", "out": "35"}', "{", "[]", "null", '{"x": 1e400}',
                           '{"x": [[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]}', '{"x": "' + "9" * 300 + '"}',
                           '{"__class__": 1}', json.dumps({"x": r.randrange(1 << 300), "out": -1}), ""])
        return dict(circuit=r.choice(["cube", "", "nope", "wpost-2k", "c" * 300]), inputs_json=inputs,
                    wtns=r.choice([b"", b"", b"wtns" + r.randbytes(40), r.randbytes(8)]),
                    priority=r.choice([0, 1, 4, 5, 1 << 30, -1]), timeout_ms=r.choice([0, 1, 100, 1 << 60]),
                    deadline_unix_ms=r.choice([0, 1, (1 << 64) - 1]))


def raw_garbage_call(channel, rng: random.Random, timeout: float = 30.0):
    """Garbage bytes to a random method: the answer must be a status (the caller checks)."""
    method = rng.choice(METHODS)
    call = channel.unary_unary(method)  # no serializers: bytes go out as they are
    return call(rng.randbytes(rng.choice([0, 1, 5, 64, 1000])), timeout=timeout)


def one(client, mut: Mutator, channel, counts: Counter, lock) -> None:
    """Send one fuzz request; record its status code. Anything but a status or a reply raises."""
    import grpc

    from cuzk.serve.proto.cuzk.v1 import proving_pb2 as pb

    r = mut.rng.random()
    try:
        if r < 0.55:
            fields = mut.submit_fields()
            if mut.rng.random() < 0.5:
                client.submit(**fields)
            else:
                client.prove(**fields, timeout_ms=mut.rng.choice([0, 1, 50]))
        elif r < 0.75:
            from cuzk.serve.proto.cuzk.v1 import circuits_pb2 as cpb

            client.circuits.ProveCircuit(cpb.ProveCircuitRequest(**mut.circuit_fields()), timeout=60)
        elif r < 0.9:
            raw_garbage_call(channel, mut.rng)
        else:
            op = mut.rng.randrange(4)
            arg = mut.rng.choice(["", "wpost-2k", "snap-32g", "cube", "x" * 300, "bad\x01id", "cuzk-1-0"])
            [client.await_proof, client.cancel, client.preload, client.evict][op](arg) if op else \
                client.await_proof(arg, timeout_ms=mut.rng.choice([0, 1, 1 << 62]))
        code = "OK"
    except grpc.RpcError as e:
        code = e.code().name
        if not e.details():
            raise AssertionError(f"{code} without a message") from None
        if code in ("INTERNAL", "UNKNOWN"):
            if "deserializ" not in e.details().lower():
                raise AssertionError(f"{code}: {e.details()}") from None
            code = "INTERNAL (bytes that do not parse)"
    with lock:
        counts[code] += 1
    _ = pb


def _proc(pid: int) -> dict:
    status = Path(f"/proc/{pid}/status").read_text()
    field = {k.strip(): v.strip() for k, _, v in (ln.partition(":") for ln in status.splitlines())}
    return {"rss_mb": int(field["VmRSS"].split()[0]) / 1024, "threads": int(field["Threads"]),
            "fds": len(os.listdir(f"/proc/{pid}/fd"))}


def main(argv=None) -> int:
    from tests.serve_support import DaemonProcess, config_text, cube_entry, cube_keys

    from cuzk.serve import Client

    ap = argparse.ArgumentParser(prog="python -m tests.fuzz.serve", description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=100_000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="cuzk-serve-fuzz-"))
    params, _ = cube_keys(folder)
    (folder / "cuzk.toml").write_text(config_text(folder, circuits=cube_entry(params),
                                                  extra="max_jobs = 100000\nrequest_retention = 5"))
    d = DaemonProcess(folder / "cuzk.toml")
    counts: Counter = Counter()
    lock = threading.Lock()
    errors: list = []
    try:
        client = Client(d.tcp, timeout=60)
        client.prove_circuit("cube", {"x": 3, "out": 35})  # warm: kernels loaded before the baseline
        base = _proc(d.proc.pid)
        t0 = time.perf_counter()
        per = args.requests // args.threads

        samples = []

        def worker(k):
            mut = Mutator(args.seed * 1000 + k)
            for i in range(per):
                if k == 0 and i % max(1, per // 10) == 0:
                    samples.append(round(_proc(d.proc.pid)["rss_mb"]))
                try:
                    one(client, mut, client._channel, counts, lock)
                except Exception as e:  # noqa: BLE001 - collected and reported
                    errors.append(repr(e))
                    if len(errors) > 20:
                        return

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(args.threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        secs = time.perf_counter() - t0
        time.sleep(6)  # past request_retention: ended jobs are dropped
        after = _proc(d.proc.pid)
        ok = client.prove_circuit("cube", {"x": 2, "out": 15}).result.status == 1
        client.close()
        code = d.terminate()
    finally:
        d.kill()
    total = sum(counts.values())
    print(f"requests {total} in {secs:.1f} s ({total / secs:.0f}/s), {args.threads} client threads, seed {args.seed}")
    for k, v in counts.most_common():
        print(f"  {k:<20} {v}")
    print(f"daemon before: {base}  after: {after}  still proves: {ok}  exit status: {code}")
    print(f"daemon RSS (MB) every tenth of the run: {samples}")
    if errors:
        print("UNEXPECTED:", *errors[:20], sep="\n  ")
    return 0 if not errors and ok and code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
