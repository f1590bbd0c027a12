"""SnapDeals' native side: the custom-tag Poseidon against the pure-Python permutation, the challenges
against the vectors rust-fil-proofs hard-codes (storage-proofs-update's challenges.rs, reproduced
from its XorShift test seed), the update equation node by node in Python ints, decode and the
sector key, files, and bad input."""

from __future__ import annotations

import random

import numpy as np
import pytest

from cuzk.circuit.gadgets.poseidon_spec import poseidon_spec
from cuzk.circuits.filecoin import build_tree, poseidon_hash
from cuzk.circuits.filecoin.porep import fr32_pad, seal
from cuzk.circuits.filecoin.update import (
    GEN_RANDOMNESS_TAG, decode, gen_randomness, partition_challenges, phi, rho, sector_key, update, update_params,
)
from cuzk.circuits.filecoin.update.encode import REPLICA_FILE
from cuzk.errors import InputError
from cuzk.field import FR

R = FR.modulus
TEST_SEED = bytes([0x59, 0x62, 0xBE, 0x5D, 0x76, 0x3D, 0x31, 0x8D, 0x17, 0xDB, 0x37, 0x32, 0x54, 0x06, 0xBC, 0xE5])


class XorShift:
    """rand_xorshift 0.3's XorShiftRng (the generator of storage-proofs-core's TEST_SEED)."""

    def __init__(self, seed: bytes):
        self.s = [int.from_bytes(seed[i:i + 4], "little") for i in range(0, 16, 4)]

    def u32(self) -> int:
        x, y, z, w = self.s
        t = (x ^ (x << 11)) & 0xFFFFFFFF
        self.s = [y, z, w, (w ^ (w >> 19) ^ t ^ (t >> 8)) & 0xFFFFFFFF]
        return self.s[3]

    def fr(self) -> int:
        """blstrs' Scalar::random: four u64 (low u32 first), top bit cleared, retried until < r."""
        while True:
            limbs = [self.u32() | self.u32() << 32 for _ in range(4)]
            v = sum(x << (64 * i) for i, x in enumerate(limbs)) & ((1 << 255) - 1)
            if v < R:
                return v


# storage-proofs-update's test_challenges_against_hardcoded: (sector nodes, k) -> first five challenges
HARDCODED = {
    (1 << 5, 0): [21, 7, 3, 31, 0], (1 << 6, 0): [53, 51, 56, 3, 0], (1 << 7, 0): [117, 25, 62, 0, 72],
    (1 << 8, 0): [245, 140, 15, 128, 28], (1 << 9, 0): [245, 140, 15, 128, 28], (1 << 9, 1): [286, 308, 493, 510, 508],
    (1 << 10, 0): [245, 454, 3, 400, 193], (1 << 10, 1): [542, 666, 955, 927, 911],
    (1 << 18, 0): [36085, 32783, 44060, 10950, 3731], (1 << 18, 1): [78878, 130797, 112892, 93994, 78379],
    (1 << 19, 0): [101621, 16391, 109319, 25944, 41193], (1 << 19, 1): [209950, 163702, 175679, 224741, 197410],
    (1 << 24, 0): [1019125, 116736, 706220, 59698, 799498], (1 << 24, 1): [2092548, 1213276, 1185483, 1164598, 1095197],
    (1 << 24, 14): [15212432, 15665918, 15015423, 15012912, 15495223],
    (1 << 24, 15): [16388544, 15794686, 16637142, 16319148, 16328348],
    (1 << 30, 0): [1019125, 27985696, 15282860, 11586600, 44651330],
    (1 << 30, 1): [109168525, 127316247, 80331041, 97065716, 72310052],
    (1 << 30, 14): [990420169, 955146989, 968005601, 976863263, 944650706],
    (1 << 30, 15): [1038629497, 1053983614, 1030421316, 1027373887, 1068685433],
    (1 << 31, 0): [1019125, 13992848, 3820715, 18225541, 57316660],
    (1 << 31, 1): [243386253, 197875851, 204632136, 171516766, 247789010],
    (1 << 31, 14): [1997053129, 1920414070, 2003609080, 1900492803, 1963254685],
    (1 << 31, 15): [2045262457, 2036941247, 2136653521, 2091356007, 2147167623],
}


def test_custom_tag_hash_is_neptunes_arity_2_permutation_with_tag_2_pow_40():
    spec = poseidon_spec("neptune", 3)
    rng = random.Random(3)
    for _ in range(3):
        a, b = rng.randrange(R), rng.randrange(R)
        assert gen_randomness(a, b) == spec.hash([a, b], tag=1 << 40)
    assert GEN_RANDOMNESS_TAG == 1 << 40 and gen_randomness(1, 2) != poseidon_hash([1, 2])
    assert phi(5, 6) == gen_randomness(5, 6) and rho(7, 3) == gen_randomness(7, 3)


def test_challenges_equal_rust_fil_proofs_hardcoded_vectors():
    comm_r_new = XorShift(TEST_SEED).fr()
    for (nodes, k), want in HARDCODED.items():
        assert partition_challenges(update_params(nodes=nodes), comm_r_new, k)[:5] == want, (nodes, k)


@pytest.mark.parametrize("nodes", [1 << 6, 1 << 10, 1 << 18, 1 << 31])
def test_every_challenge_of_a_partition_is_in_its_slice(nodes):
    p = update_params(nodes=nodes)
    c_r = random.Random(nodes).randrange(R)
    width = nodes // p.partition_count
    for k in (0, p.partition_count - 1):
        cs = partition_challenges(p, c_r, k)
        assert len(cs) == p.challenge_count and all(k * width <= c < (k + 1) * width for c in cs)
    poseidon = update_params(nodes=nodes, poseidon=True)
    assert len(partition_challenges(poseidon, c_r, 0)) == p.challenge_count * p.partition_count


@pytest.fixture(scope="module")
def sealed():
    data = fr32_pad(random.Random(7).randbytes(2032))
    return seal(data, registered_proof=5, prover_id=bytes(range(32)), sector_id=3, ticket=bytes([9] * 32))


@pytest.fixture(scope="module")
def new_data():
    return fr32_pad(random.Random(8).randbytes(2032))


def _ints(arr) -> list:
    raw = np.frombuffer(arr, np.uint8) if isinstance(arr, bytes) else np.asarray(arr)
    return [int.from_bytes(row.tobytes(), "little") for row in raw.reshape(-1, 32)]


def test_update_follows_the_equation_node_by_node(sealed, new_data):
    u = update(sealed, new_data)
    p = u.params
    assert (u.h, p.nodes, u.comm_c, u.comm_r_old) == (1, 64, sealed.comm_c, sealed.comm_r)
    ph = phi(u.comm_d_new_int, sealed.comm_r_int)
    assert ph == u.phi
    old, data, new = _ints(sealed.replica), _ints(new_data), _ints(u.replica)
    for v in range(p.nodes):
        assert new[v] == (old[v] + data[v] * rho(ph, v >> (6 - u.h))) % R
    tree = build_tree(new, (8, 0, 0))
    assert u.comm_r_last_new == tree.root.to_bytes(32, "little")
    assert u.comm_r_new_int == poseidon_hash([sealed.comm_c_int, tree.root])
    assert u.comm_d_new == sealed.tree_d.build(np.frombuffer(new_data, np.uint8).reshape(-1, 32)).root


def test_decode_and_sector_key_undo_the_update(sealed, new_data):
    u = update(sealed, new_data)
    st = dict(comm_d_new=u.comm_d_new, comm_r_old=sealed.comm_r)
    assert decode(u.replica, sealed.replica, **st).tobytes() == new_data
    assert sector_key(u.replica, new_data, **st).tobytes() == sealed.replica.tobytes()
    # another phi (the wrong comm_r_old): the data does not come back
    assert decode(u.replica, sealed.replica, comm_d_new=u.comm_d_new, comm_r_old=sealed.comm_d).tobytes() != new_data


def test_larger_sector_with_every_h(tmp_path):
    # an 8 MiB sector: 4 partitions, h in 7..12 picks how many nodes share a rho
    class Sector:
        pass

    rng = np.random.default_rng(1)
    n = 1 << 18
    s = Sector()
    s.replica = rng.integers(0, 256, (n, 32), dtype=np.uint8)
    s.replica[:, 31] &= 0x3F
    s.comm_c = bytes(31) + b"\x01"
    data = rng.integers(0, 256, (n, 32), dtype=np.uint8)
    data[:, 31] &= 0x3F
    u = update(s, data, h=12, cache_dir=tmp_path / "new")
    assert u.params.partition_count == 4 and (tmp_path / "new" / REPLICA_FILE).stat().st_size == n * 32
    st = dict(comm_d_new=u.comm_d_new, comm_r_old=u.comm_r_old)
    assert np.array_equal(decode(np.asarray(u.replica), s.replica, h=12, **st), data)
    ph, old, new = u.phi, _ints(s.replica[-2:]), _ints(u.replica[-2:])
    d = _ints(data[-2:])
    assert new == [(o + x * rho(ph, (n - 2 + i) >> 6)) % R for i, (o, x) in enumerate(zip(old, d))]
    # h = 10 (Filecoin's default) encodes differently
    assert update(s, data).replica[-1].tobytes() != u.replica[-1].tobytes()


def test_bad_input_is_refused_naming_it(sealed, new_data):
    with pytest.raises(InputError, match="data must hold the sector's 2048 bytes"):
        update(sealed, new_data[:-32])
    bad = bytearray(new_data)
    bad[32 * 5 + 31] = 0xFF
    with pytest.raises(InputError, match="data: sector node 5 is not a canonical Fr"):
        update(sealed, bytes(bad))
    with pytest.raises(InputError, match="h must be one of \\[1\\]"):
        update(sealed, new_data, h=10)
    with pytest.raises(InputError, match="sealed must be a sealed sector"):
        update(object(), new_data)
    with pytest.raises(InputError, match="comm_d_new must be 32 bytes"):
        decode(sealed.replica, sealed.replica, comm_d_new=b"x", comm_r_old=sealed.comm_r)
    with pytest.raises(InputError, match="sector key must hold the sector's 2048 bytes"):
        decode(sealed.replica, bytes(64), comm_d_new=sealed.comm_d, comm_r_old=sealed.comm_r)
