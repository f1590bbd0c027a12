"""Helpers of the ``cuzk serve`` tests: keys written under Filecoin's v28 names, cuzk-made PoSt
vanilla proofs of 2 KiB sectors, a daemon on loopback, and a daemon as a child process."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

import cuzk
from cuzk.circuits import Cube
from cuzk.circuits.filecoin import PostSector, build_tree
from cuzk.circuits.filecoin.post import FallbackPoSt
from cuzk.circuits.filecoin.vanilla import FALLBACK_POST_SECTOR_PROOF, sector_proof, to_bincode
from cuzk.field import FR
from cuzk.serve.filecoin import FilecoinCircuit

ROOT = Path(__file__).resolve().parents[1]


def cube_keys(folder: Path, seed: int = 1):
    """Cube's key written as ``cube.params``; returns (params path, vk)."""
    synth = cuzk.Synthesizer(Cube())
    pk, vk = cuzk.groth16.setup(synth.r1cs, rng=np.random.default_rng(seed))
    path = folder / "cube.params"
    pk.write(path)
    return path, vk


def filecoin_keys(param_cache: Path, circuit_id: str, seed: int = 2):
    """A development key of a Filecoin circuit, written as ``<v28 name>.params`` and ``.vk``; returns the vk."""
    from cuzk.serve.filecoin import filecoin_circuit

    fc = filecoin_circuit(circuit_id)
    synth = cuzk.Synthesizer(fc.circuit())
    pk, vk = cuzk.groth16.setup(synth.r1cs, rng=np.random.default_rng(seed))
    param_cache.mkdir(parents=True, exist_ok=True)
    pk.write(param_cache / fc.params_name)
    (param_cache / fc.vk_name).write_bytes(vk.to_bytes())
    return vk


def fr_safe_replica(rng: random.Random, nbytes: int = 2048) -> bytes:
    return b"".join(rng.randrange(1 << 254).to_bytes(32, "little") for _ in range(nbytes // 32))


def sectors(n: int, seed: int = 7) -> list[PostSector]:
    rng = random.Random(seed)
    return [PostSector(sector_id=100 + i, comm_c=rng.randrange(FR.modulus), tree=build_tree(fr_safe_replica(rng)))
            for i in range(n)]


def window_request(secs, randomness: int, *, registered_proof: int = 10, partition: int = 0, **extra) -> dict:
    """SubmitProofRequest fields of a 2 KiB WindowPoSt partition, vanilla proofs made by cuzk."""
    fc = FilecoinCircuit("wpost", 2048)
    challenges, count = fc.post_counts
    api = "1.2" if registered_proof >= 10 else "1.0"
    post = FallbackPoSt(2048, challenges, count, api_version=api)
    proofs = [to_bincode(FALLBACK_POST_SECTOR_PROOF,
                         sector_proof(s, post.challenges(randomness, s.sector_id, partition * count + i)))
              for i, s in enumerate(secs)]
    return dict(proof_kind=3, sector_size=2048, registered_proof=registered_proof, vanilla_proofs=proofs,
                randomness=randomness.to_bytes(32, "little"), miner_id=1000, partition_index=partition, **extra)


def window_public(secs, randomness: int, *, registered_proof: int = 10, partition: int = 0) -> list[int]:
    fc = FilecoinCircuit("wpost", 2048)
    challenges, count = fc.post_counts
    post = FallbackPoSt(2048, challenges, count, api_version="1.2" if registered_proof >= 10 else "1.0")
    padded = [None] * (partition * count) + [(s.sector_id, s.comm_r) for s in secs]  # only this partition is read
    return post.public_inputs(randomness, padded, partition=partition)


def winning_request(sector, randomness: int, **extra) -> dict:
    fc = FilecoinCircuit("winning", 2048)
    challenges, count = fc.post_counts
    post = FallbackPoSt(2048, challenges, count, api_version="1.0")
    chal = [post.challenges(randomness, sector.sector_id, j)[0] for j in range(count)]
    proof = to_bincode(FALLBACK_POST_SECTOR_PROOF, sector_proof(sector, chal))
    return dict(proof_kind=4, sector_size=2048, registered_proof=0, vanilla_proofs=[proof],
                randomness=randomness.to_bytes(32, "little"), miner_id=1000, **extra)


def winning_public(sector, randomness: int) -> list[int]:
    fc = FilecoinCircuit("winning", 2048)
    challenges, count = fc.post_counts
    post = FallbackPoSt(2048, challenges, count, api_version="1.0")
    return post.public_inputs(randomness, [(sector.sector_id, sector.comm_r)] * count)


def config_text(folder: Path, *, listen=None, extra: str = "", circuits: str = "", device: str = "cpu",
                key_cache: Path | None = None) -> str:
    listen = listen or ["127.0.0.1:0"]
    items = ", ".join(f'"{a}"' for a in listen)
    keys = f'key_cache = "{key_cache}"\n' if key_cache is not None else ""
    return (f'[daemon]\nlisten = [{items}]\nshutdown_grace = 30\n{extra}\n[gpus]\ndevice = "{device}"\n'
            f'[memory]\ntotal_budget = "unlimited"\n[srs]\nparam_cache = "{folder}"\n{keys}{circuits}')


@contextlib.contextmanager
def serving(folder: Path, *, engine=None, timeout: float = 300, **config):
    """A loopback daemon on ``config_text(folder, **config)`` and a client of it, ``(server, client)``;
    both are closed on exit."""
    from cuzk.serve import Client
    from cuzk.serve.config import parse_config
    from cuzk.serve.server import Server

    srv = Server(parse_config(config_text(folder, **config)), engine=engine)
    client = Client(srv.tcp_address, timeout=timeout)
    try:
        yield srv, client
    finally:
        client.close()
        srv.stop(grace_s=5)


def curio_client_binary() -> Path:
    """The Go Curio-client oracle (tests/oracles/curio-client), built once per machine; a failed
    build fails the calling test with its output (callers skip first where go is missing)."""
    import pytest

    sys.path.insert(0, str(ROOT / "tests" / "oracles"))
    from build_curio_client import build
    from oracle_cache import OracleBuildError

    try:
        return build()
    except OracleBuildError as e:
        pytest.fail(str(e), pytrace=False)


def cube_entry(params: Path, name: str = "cube", priority: str = "normal") -> str:
    return f'[[circuits]]\nname = "{name}"\nparams = "{params}"\ncircuit = "cuzk.circuits:Cube"\npriority = "{priority}"\n'


def serve_threads() -> set:
    return {t.name for t in threading.enumerate() if t.name.startswith(("cuzk-serve", "cuzk-"))}


class DaemonProcess:
    """``python -m cuzk serve --config FILE`` as a child; its printed addresses parsed."""

    def __init__(self, config: Path, *, env=None, timeout: float = 120.0):
        self.proc = subprocess.Popen([sys.executable, "-m", "cuzk", "serve", "--config", str(config)],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                                     env={**os.environ, **(env or {})})
        self.lines: list[str] = []
        self.addresses: list[str] = []
        deadline = time.monotonic() + timeout
        for line in self.proc.stdout:
            self.lines.append(line.rstrip())
            if "gRPC listening on" in line:
                self.addresses = line.split("listening on", 1)[1].split()
                break
            if time.monotonic() > deadline:
                break
        if not self.addresses:
            self.kill()
            raise RuntimeError("cuzk serve did not start:\n" + "\n".join(self.lines))
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip())

    @property
    def tcp(self) -> str:
        return next(a for a in self.addresses if not a.startswith("unix:"))

    def terminate(self, timeout: float = 120.0) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)


def snap_request(updated, proofs, **extra) -> dict:
    """SubmitProofRequest fields of a SnapDeals update as Curio's ProveUpdateCuzk builds them: one
    bincode PartitionProof per partition, the raw 32-byte commitments, RegisteredUpdateProof 0-4."""
    from cuzk.serve.filecoin import REGISTERED_UPDATE_PROOFS

    size = updated.params.sector_size
    registered = next(p.id for p in REGISTERED_UPDATE_PROOFS.values() if p.sector_size == size)
    return dict(proof_kind=2, sector_size=size, registered_proof=registered,
                vanilla_proofs=[p.to_bincode() for p in proofs], sector_number=9, miner_id=1000,
                comm_r_old=updated.comm_r_old, comm_d_new=updated.comm_d_new, comm_r_new=updated.comm_r_new, **extra)
