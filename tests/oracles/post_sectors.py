"""PoSt statements made by rust-fil-proofs itself, for the PoSt oracle tests: 2 KiB (and 8 MiB)
sectors sealed by the oracle's ``seal`` and their WindowPoSt / WinningPoSt vanilla proofs from its
``post-vanilla`` (tests/oracles/rust-fil-proofs/README.md), plus the oracle's R1CS dump and
filecoin-proofs' verifier of the same statements.

Three 2 KiB sectors (ids 7, 9, 12) give three statements: WindowPoSt V1_2 (registered proof 10,
API 1.2) over sectors 7 and 9, one partition; WindowPoSt V1 (id 5, API 1.0: challenge indices
count the sectors across partitions) over all three, two partitions, the second a short one that
repeats its sector; WinningPoSt (id 0) of sector 9. :data:`STATEMENTS_8M` are WindowPoSt V1_2
(id 11; its one partition short, repeating the sector) and WinningPoSt (id 1) of one 8 MiB
sector (~20 s to seal on two cores): a tree of 2^18 leaves, so six levels of path per challenge
where 2 KiB has two.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from rust_oracle import OracleResult, run_oracle

__all__ = ["PROVER_ID", "RANDOMNESS", "STATEMENTS", "STATEMENTS_8M", "ALL_STATEMENTS", "Statement", "Sealed",
           "OraclePost", "make_oracle_post"]

PROVER_ID = bytes(range(32))
#: a canonical Fr element (little-endian, below r): filecoin-proofs refuses any other randomness
RANDOMNESS = bytes([0x11] * 31 + [0x05])
_TICKET, _SEED = bytes([0x5A] * 31 + [0x01]), bytes([0xC3] * 32)


@dataclass(frozen=True)
class Statement:
    """One PoSt the oracle proves vanilla: its kind, registered proof and sectors."""

    name: str
    kind: str  #: "window" or "winning"
    registered_proof: int  #: filecoin-ffi's RegisteredPoStProof number
    sector_ids: tuple
    partitions: int
    sector_size: int = 2048


STATEMENTS = {
    "window-v1_2": Statement("window-v1_2", "window", 10, (7, 9), 1),
    "window-v1": Statement("window-v1", "window", 5, (7, 9, 12), 2),
    "winning": Statement("winning", "winning", 0, (9,), 1),
}
STATEMENTS_8M = {
    "window-8m": Statement("window-8m", "window", 11, (7,), 1, 8 << 20),
    "winning-8m": Statement("winning-8m", "winning", 1, (7,), 1, 8 << 20),
}
ALL_STATEMENTS = {**STATEMENTS, **STATEMENTS_8M}
#: the registered seal proof the oracle seals each size with (StackedDrg2KiBV1_1, StackedDrg8MiBV1_1)
SEAL_PROOF = {2048: 5, 8 << 20: 6}


@dataclass(frozen=True)
class Sealed:
    """A sector the oracle sealed: its directory and ``seal.json``."""

    dir: Path
    summary: dict

    @property
    def comm_r(self) -> bytes:
        return bytes.fromhex(self.summary["comm_r"])

    @property
    def replica(self) -> bytes:
        return (self.dir / "sealed.bin").read_bytes()

    @property
    def comm_c_and_r_last(self) -> tuple[bytes, bytes]:
        """rust-fil-proofs' ``p_aux``: bincode ``PersistentAux { comm_c, comm_r_last }``."""
        p_aux = (self.dir / "cache" / "p_aux").read_bytes()
        return p_aux[:32], p_aux[32:64]


@dataclass
class OraclePost:
    """The sealed sectors and, per statement, the oracle's ``post-vanilla`` output."""

    root: Path
    sectors: dict  #: sector id -> Sealed
    vanilla: dict  #: statement name -> post-vanilla's JSON
    _dumps: dict

    def vanilla_bytes(self, name: str, ids=None) -> list[bytes]:
        """The statement's bincode FallbackPoStSectorProofs (of ``ids``, default all), in sector order."""
        st = ALL_STATEMENTS[name]
        out = self.root / "vanilla" / name
        return [(out / f"vanilla-{i}.bin").read_bytes() for i in (ids or st.sector_ids)]

    def challenges(self, name: str, sector_id: int) -> list[int]:
        return next(s["challenges"] for s in self.vanilla[name]["sectors"] if s["sector_id"] == sector_id)

    def replicas(self, ids) -> str:
        return ",".join(f"{i}:{self.sectors[i].summary['comm_r']}" for i in ids)

    def dump(self, name: str, partition: int = 0) -> tuple[dict, Path]:
        """``dump-r1cs-post`` of the statement's partition (cached): its summary and R1CS path."""
        key = (name, partition)
        if key not in self._dumps:
            st = ALL_STATEMENTS[name]
            files = ",".join(str(self.root / "vanilla" / name / f"vanilla-{i}.bin") for i in st.sector_ids)
            r1cs = self.root / f"{name}-{partition}.r1cs"
            out = run_oracle(self.root / "tmp", "dump-r1cs-post", "--kind", st.kind, "--registered-proof",
                             str(st.registered_proof), "--vanilla", files, "--randomness", RANDOMNESS.hex(),
                             "--prover-id", PROVER_ID.hex(), "--partition", str(partition), "--out", r1cs)
            self._dumps[key] = (out.value, r1cs)
        return self._dumps[key]

    def verify(self, name: str, vk: bytes, proof: bytes, *, randomness: bytes = RANDOMNESS) -> OracleResult:
        """filecoin-proofs' verify_window_post / verify_winning_post of ``proof`` with ``vk``."""
        st = ALL_STATEMENTS[name]
        tag = f"{name}-{randomness.hex()[:8]}"
        (self.root / f"{tag}.vk").write_bytes(vk)
        (self.root / f"{tag}.proof").write_bytes(proof)
        return run_oracle(self.root / "tmp", "verify-post", "--kind", st.kind, "--registered-proof",
                          str(st.registered_proof), "--vk", self.root / f"{tag}.vk", "--proof",
                          self.root / f"{tag}.proof", "--randomness", randomness.hex(), "--prover-id",
                          PROVER_ID.hex(), "--replicas", self.replicas(st.sector_ids), check=False)


def make_oracle_post(root: Path, size: int = 2048) -> OraclePost:
    """Seal the sectors the statements of sector size ``size`` name with the oracle (seeded data)
    and make each of those statements' vanilla proofs."""
    statements = {n: st for n, st in ALL_STATEMENTS.items() if st.sector_size == size}
    sectors = {}
    for i in sorted({i for st in statements.values() for i in st.sector_ids}):
        data = root / f"data-{i}.bin"
        data.write_bytes(random.Random(1000 + i).randbytes(size // 128 * 127))  # Fr32: 127 bytes in 128
        out = run_oracle(root / "tmp", "seal", "--registered-proof", str(SEAL_PROOF[size]), "--sector-size", str(size),
                         "--prover-id", PROVER_ID.hex(), "--sector-id", str(i), "--ticket", _TICKET.hex(),
                         "--seed", _SEED.hex(), "--data", data, "--out", root / f"sector-{i}")
        sectors[i] = Sealed(root / f"sector-{i}", out.value)
    vanilla = {}
    for st in statements.values():
        dirs = ",".join(str(sectors[i].dir) for i in st.sector_ids)
        out = run_oracle(root / "tmp", "post-vanilla", "--kind", st.kind, "--registered-proof",
                         str(st.registered_proof), "--sectors", dirs, "--randomness", RANDOMNESS.hex(),
                         "--prover-id", PROVER_ID.hex(), "--out", root / "vanilla" / st.name)
        assert out.value["vanilla_verifies"] and out.value["partitions"] == st.partitions, out.value
        assert json.loads((root / "vanilla" / st.name / "post.json").read_text()) == out.value
        vanilla[st.name] = out.value
    return OraclePost(root, sectors, vanilla, {})
