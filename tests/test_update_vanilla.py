"""SnapDeals vanilla partition proofs: bincode and serde JSON round trips for every proof variant the
tree shapes give (Single 8-0-0, Sub 8-8-0, Top 8-8-2, the Poseidon variant), the byte layout field by
field, rust-fil-proofs' vanilla verification of good and tampered proofs, and a fuzzed bincode reader
that only ever returns a proof or a VanillaFormatError naming where it stopped."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from cuzk.circuits.filecoin.update import (
    PartitionProof, PartitionProofPoseidon, partition_proof, partition_proofs, update, verify_partition_proof,
)
from cuzk.errors import InputError, VanillaFormatError


class _Sector:
    """A sealed sector as :func:`update` reads it: a replica of random field elements and comm_c."""

    def __init__(self, nodes: int, seed: int):
        rng = np.random.default_rng(seed)
        self.replica = rng.integers(0, 256, (nodes, 32), dtype=np.uint8)
        self.replica[:, 31] &= 0x3F
        self.comm_c = rng.integers(0, 256, 32, dtype=np.uint8).tobytes()[:31] + b"\x01"


def _data(nodes: int, seed: int) -> np.ndarray:
    d = np.random.default_rng(seed).integers(0, 256, (nodes, 32), dtype=np.uint8)
    d[:, 31] &= 0x3F
    return d


@pytest.fixture(scope="module", params=[64, 512, 1024], ids=["2KiB-single", "16KiB-sub", "32KiB-top"])
def updated(request):
    n = request.param
    return update(_Sector(n, n), _data(n, n + 1))


def _statement(u):
    return dict(comm_r_old=u.comm_r_old, comm_d_new=u.comm_d_new, comm_r_new=u.comm_r_new)


def test_round_trips_and_vanilla_verification(updated):
    proofs = partition_proofs(updated)
    kinds = {64: "Single", 512: "Sub", 1024: "Top"}[updated.nodes]
    assert len(proofs) == updated.params.partition_count
    for k, p in enumerate(proofs):
        assert p.challenge_proofs[0].proof_r_old.kind == kinds and p.challenge_proofs[0].proof_d_new.kind == "Single"
        assert PartitionProof.from_bincode(p.to_bincode()) == p
        assert PartitionProof.from_json(p.to_json()) == p
        assert verify_partition_proof(updated.params, p, k=k, **_statement(updated))
    if len(proofs) > 1:  # a partition's proof is not another partition's
        assert not verify_partition_proof(updated.params, proofs[0], k=1, **_statement(updated))


def test_bincode_layout_field_by_field(updated):
    p = partition_proof(updated, 0)
    raw = p.to_bincode()
    apex = updated.params.apex_leaf_count
    assert raw[:32] == p.comm_c
    assert int.from_bytes(raw[32:40], "little") == apex
    assert raw[40:40 + 32 * apex] == b"".join(p.apex_leafs)
    at = 40 + 32 * apex
    assert int.from_bytes(raw[at:at + 8], "little") == updated.params.challenge_count
    # the first challenge's proof_r_old: the MerkleProof enum's u32 variant index, then its fields
    variant = {"Single": 0, "Sub": 1, "Top": 2}[p.challenge_proofs[0].proof_r_old.kind]
    assert int.from_bytes(raw[at + 8:at + 12], "little") == variant
    # apex leaves are tree D's row at the apex height, partition 0's slice
    row = updated.tree_d.levels[updated.params.apex_height]
    assert list(p.apex_leafs) == [row[i].tobytes() for i in range(apex)]


def test_tampered_proofs_fail_vanilla_verification():
    u = update(_Sector(64, 3), _data(64, 4))
    p = partition_proof(u, 0)
    st_ = _statement(u)
    cp = p.challenge_proofs[2]
    leaf = (int.from_bytes(cp.proof_d_new.leaf, "little") ^ 1).to_bytes(32, "little")
    bad_leaf = type(cp)(cp.proof_r_old, type(cp.proof_d_new)(cp.proof_d_new.root, leaf, cp.proof_d_new.base),
                        cp.proof_r_new)
    tampered = PartitionProof(p.comm_c, p.apex_leafs, p.challenge_proofs[:2] + (bad_leaf,) + p.challenge_proofs[3:])
    assert not verify_partition_proof(u.params, tampered, k=0, **st_)
    swapped = PartitionProof(p.comm_c, p.apex_leafs, p.challenge_proofs[1:2] + p.challenge_proofs[:1] + p.challenge_proofs[2:])
    assert not verify_partition_proof(u.params, swapped, k=0, **st_)
    other_apex = PartitionProof(p.comm_c, (bytes(32),) + p.apex_leafs[1:], p.challenge_proofs)
    assert not verify_partition_proof(u.params, other_apex, k=0, **st_)
    assert not verify_partition_proof(u.params, p, k=0, **dict(st_, comm_r_old=u.comm_d_new))
    with pytest.raises(InputError, match="partition must be"):
        verify_partition_proof(u.params, p, k=1, **st_)
    with pytest.raises(InputError, match="holds 8 apex leaves and 10 challenges"):
        verify_partition_proof(u.params, PartitionProof(p.comm_c, p.apex_leafs, p.challenge_proofs[:9]), k=0, **st_)


def test_poseidon_variant_proof_round_trips():
    u = update(_Sector(32, 5), _data(32, 6), poseidon=True)
    p = partition_proof(u, 0)
    assert isinstance(p, PartitionProofPoseidon) and len(p.challenge_proofs) == 10
    assert p.challenge_proofs[0].proof_d_new.kind == "Sub"   # tree D is tree R's 8-4-0 shape
    assert PartitionProofPoseidon.from_bincode(p.to_bincode()) == p
    assert PartitionProofPoseidon.from_json(p.to_json()) == p


@pytest.fixture(scope="module")
def sample_bytes():
    return partition_proof(update(_Sector(64, 9), _data(64, 10)), 0).to_bincode()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.data())
def test_fuzzed_bincode_is_a_proof_or_a_format_error(sample_bytes, data):
    raw = bytearray(sample_bytes)
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(["flip", "cut", "insert", "length"]))
        i = data.draw(st.integers(0, len(raw) - 1))
        if op == "flip":
            raw[i] ^= 1 << data.draw(st.integers(0, 7))
        elif op == "cut":
            del raw[i:i + data.draw(st.integers(1, 64))]
        elif op == "insert":
            raw[i:i] = data.draw(st.binary(min_size=1, max_size=16))
        else:  # a hostile u64 length where the apex-leaf count sits
            raw[32:40] = data.draw(st.integers(0, 2**64 - 1)).to_bytes(8, "little")
        if not raw:
            break
    try:
        p = PartitionProof.from_bincode(bytes(raw))
    except VanillaFormatError as e:
        assert str(e)  # the message says where
    else:
        assert PartitionProof.from_bincode(p.to_bincode()) == p


def test_reader_refuses_hostile_lengths_before_allocating(sample_bytes):
    raw = bytearray(sample_bytes)
    raw[32:40] = (2**63).to_bytes(8, "little")
    with pytest.raises(VanillaFormatError, match="apex_leafs"):
        PartitionProof.from_bincode(bytes(raw))
    with pytest.raises(VanillaFormatError, match="bytes after"):
        PartitionProof.from_bincode(sample_bytes + b"\x00")
    with pytest.raises(VanillaFormatError):
        PartitionProof.from_bincode(sample_bytes[:-1])
