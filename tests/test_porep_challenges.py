"""PoRep challenges, registered seal proofs and replica ids (cuzk/circuits/filecoin/porep/).

Synthetic challenges are checked on the hard-coded vectors of rust-fil-proofs'
storage-proofs-porep/src/stacked/vanilla/challenges.rs (test_synth_challenges_against_hardcoded);
interactive and non-interactive challenges, which have no published vectors, on their hash
written out with hashlib and on the partition equivalence that file's tests assert.
"""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, strategies as st

from cuzk.circuits.filecoin import porep
from cuzk.circuits.filecoin.porep import (
    REGISTERED_SEAL_PROOFS, interactive_challenges, ni_challenges, porep_id, registered_seal_proof,
    replica_id, synthetic_challenges, synthetic_porep_challenges,
)
from cuzk.circuits.filecoin.porep.challenges import synthetic_indexes
from cuzk.errors import InputError
from cuzk.field import FR

fr = st.integers(0, FR.modulus - 1)
b32 = st.binary(min_size=32, max_size=32)

# challenges.rs: sector_nodes = 2^10, replica_id = 55, comm_r = 101, 21 synthetic challenges,
# 10 PoRep challenges drawn with randomness [1; 32]
SYNTH_EXPECTED = [178, 297, 869, 211, 875, 477, 94, 781, 124, 332, 856, 801, 176, 692, 429, 691, 290, 204, 986, 210, 973]
POREP_EXPECTED = [176, 781, 801, 986, 290, 211, 692, 856, 986, 332]


def test_synthetic_hardcoded():
    assert synthetic_challenges(1 << 10, 55, 101, 21) == SYNTH_EXPECTED
    assert synthetic_porep_challenges(1 << 10, 55, 101, 21, 10, bytes([1] * 32)) == POREP_EXPECTED


def test_synthetic_bytes_and_ints_agree():
    rid, cr = (55).to_bytes(32, "little"), (101).to_bytes(32, "little")
    assert synthetic_challenges(1 << 10, rid, cr, 21) == SYNTH_EXPECTED


def test_synthetic_default_count():
    # min(nodes, 2^18) synthetic challenges, each in [1, nodes)
    assert len(synthetic_challenges(64, 1, 2)) == 64
    big = synthetic_challenges(1 << 30, 55, 101)
    assert len(big) == 1 << 18 and all(1 <= c < 1 << 30 for c in big)
    assert big[:3] != SYNTH_EXPECTED[:3]  # the modulus is nodes - 1, so the values move with it


@given(fr, fr, b32, st.integers(1, 5), st.integers(0, 4))
def test_synthetic_partitions(rid, cr, rand, count, k):
    # challenges.rs' test_synth_challenges_32gib: partition k's challenges are the k-th chunk of
    # one long draw, each the synthetic challenge at its selected index.
    nodes, num_synth = 1 << 12, 300
    whole = synthetic_porep_challenges(nodes, rid, cr, num_synth, count * (k + 1), rand)
    part = synthetic_porep_challenges(nodes, rid, cr, num_synth, count, rand, partition=k)
    assert part == whole[count * k:]
    synth = synthetic_challenges(nodes, rid, cr, num_synth)
    idx = synthetic_indexes(nodes, rid, num_synth, count, rand, partition=k)
    assert all(0 <= i < num_synth for i in idx)
    assert part == [synth[i] for i in idx]


def _expect(digest: bytes, nodes: int) -> int:
    return int.from_bytes(digest, "little") % (nodes - 1) + 1


@given(fr, b32, st.integers(2, 2**32 - 1), st.integers(0, 3))
def test_interactive_hash(rid, seed, nodes, k):
    got = interactive_challenges(nodes, rid, seed, 3, partition=k)
    want = [_expect(hashlib.sha256(rid.to_bytes(32, "little") + seed + (3 * k + i).to_bytes(4, "little")).digest(), nodes)
            for i in range(3)]
    assert got == want and all(1 <= c < nodes for c in got)


@given(fr, fr, st.integers(2, 2**32 - 1), st.integers(0, 3))
def test_ni_hash(rid, cr, nodes, k):
    got = ni_challenges(nodes, rid, cr, 2, partition=k)
    tag = b"filecoin.io|PoRep|1|NonInteractive|1"
    want = [_expect(hashlib.sha256(tag + rid.to_bytes(32, "little") + cr.to_bytes(32, "little")
                                   + (2 * k + i).to_bytes(4, "little")).digest(), nodes) for i in range(2)]
    assert got == want


def test_partition_equivalence():
    # challenges.rs' challenge_partition_equivalence: 5 partitions of 40 = one of 200
    nodes, rid, seed = 1 << 30, 12345, bytes(range(32))
    one = interactive_challenges(nodes, rid, seed, 200)
    assert one == [c for k in range(5) for c in interactive_challenges(nodes, rid, seed, 40, partition=k)]
    assert len(set(one)) == 200  # 200 draws from 2^30 nodes: a repeat would be a bug, not luck
    one = ni_challenges(nodes, rid, 999, 200)
    assert one == [c for k in range(5) for c in ni_challenges(nodes, rid, 999, 40, partition=k)]


def test_challenge_errors():
    seed = bytes(32)
    with pytest.raises(InputError, match="replica_id"):
        interactive_challenges(64, FR.modulus, seed, 1)
    with pytest.raises(InputError, match="seed"):
        interactive_challenges(64, 1, b"x", 1)
    with pytest.raises(InputError, match="comm_r"):
        ni_challenges(64, 1, -1, 1)
    with pytest.raises(InputError, match="nodes"):
        ni_challenges(1, 1, 1, 1)
    with pytest.raises(InputError, match="randomness"):
        synthetic_porep_challenges(64, 1, 1, None, 2, bytes(31))
    with pytest.raises(InputError, match="num_synth"):
        synthetic_challenges(64, 1, 1, 0)
    with pytest.raises(InputError, match="partition"):
        interactive_challenges(64, 1, seed, 1 << 31, partition=2)


# -- registered proofs, porep ids, replica ids --------------------------------------------------

def test_registered_table():
    assert sorted(REGISTERED_SEAL_PROOFS) == list(range(20))
    sizes = [2 << 10, 8 << 20, 512 << 20, 32 << 30, 64 << 30]
    for i, p in REGISTERED_SEAL_PROOFS.items():
        assert p.sector_size == sizes[i % 5] and p.nodes == p.sector_size // 32
        assert p.api_version == ("1.0.0", "1.1.0", "1.2.0", "1.2.0")[i // 5]
        assert p.feature == (None, None, "synthetic", "non-interactive")[i // 5]
        big = i % 5 >= 3
        assert p.layers == (11 if big else 2)
        # filecoin-proofs' constants: interactive 1 / 10 partitions (2 / 176 challenges),
        # non-interactive 13 / 126 (26 / 2253); 18 or 2 challenges a partition either way
        assert p.partitions == ((126 if big else 13) if i >= 15 else (10 if big else 1))
        assert p.challenges_per_partition == (18 if big else 2)
        assert p.shape.leaves == p.nodes
    assert registered_seal_proof(3).name == "StackedDrg32GiBV1"
    assert registered_seal_proof(12).name == "StackedDrg512MiBV1_1_Feat_SyntheticPoRep"
    assert registered_seal_proof(16).name == "StackedDrg8MiBV1_2_Feat_NonInteractivePoRep"
    assert registered_seal_proof(14).synthetic_challenges == 1 << 18
    assert registered_seal_proof(10).synthetic_challenges == 64
    assert registered_seal_proof(15).synthetic_challenges == 0


@pytest.mark.parametrize("i", range(20))
def test_porep_id(i):
    pid = porep_id(i)
    assert pid == bytes([i]) + bytes(31)  # id u64 LE, nonce 0 u64 LE, 16 zeros
    assert registered_seal_proof(i).porep_id == pid


@pytest.mark.parametrize("bad", [20, -1, 255])
def test_unknown_registered_proof(bad):
    with pytest.raises(InputError, match=f"id {bad}"):
        porep_id(bad)


@given(b32, st.integers(0, 2**64 - 1), b32, b32, b32)
def test_replica_id(prover, sector, ticket, comm_d, pid):
    d = bytearray(hashlib.sha256(prover + sector.to_bytes(8, "big") + ticket + comm_d + pid).digest())
    d[31] &= 0x3F
    rid = replica_id(prover, sector, ticket, comm_d, pid)
    assert rid == bytes(d)
    assert int.from_bytes(rid, "little") < FR.modulus
    assert interactive_challenges(64, rid, ticket, 1) == interactive_challenges(64, int.from_bytes(rid, "little"), ticket, 1)


def test_replica_id_errors():
    z = bytes(32)
    with pytest.raises(InputError, match="ticket"):
        replica_id(z, 1, z[:31], z, z)
    with pytest.raises(InputError, match="sector_id"):
        replica_id(z, 1 << 64, z, z, z)


def test_exports():
    from cuzk.circuits import filecoin

    for name in ("porep_id", "replica_id", "parent_cache", "interactive_challenges", "ni_challenges",
                 "synthetic_challenges", "synthetic_porep_challenges"):
        assert getattr(filecoin, name) is getattr(porep, name)
