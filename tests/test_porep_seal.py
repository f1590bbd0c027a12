"""The native SDR sealer against plain references: Fr32 padding (rust-fil-proofs' fr32 test
vectors), labels (a hashlib rebuild of each preimage), tree D (Filecoin's zero comm_d), trees C
and R_last (build_tree), the encoding and comm_r."""

import hashlib

import numpy as np
import pytest
from numba import njit
from hypothesis import given, settings, strategies as st

from cuzk.circuits.filecoin.porep.fr32 import check_nodes, fr32_pad, fr32_unpad, padded_size
from cuzk.circuits.filecoin.porep.graph import parents as graph_parents
from cuzk.circuits.filecoin.porep.labels import label_layers, layer_file
from cuzk.circuits.filecoin.porep.registered import porep_id, replica_id
from cuzk.circuits.filecoin.porep.seal import int_bytes, replica_file, seal
from cuzk.circuits.filecoin.porep.sector_trees import TreeD, column_hashes, poseidon_tree, tree_d_file
from cuzk.circuits.filecoin.porep.sha_kernels import compress_scalar, hash_pairs, initial_state, round_constants
from cuzk.circuits.filecoin.porep.sha_ni import HAVE_SHA_NI, sha_ni_compress
from cuzk.circuits.filecoin.poseidon import poseidon_hash
from cuzk.circuits.filecoin.shapes import TreeShape
from cuzk.circuits.filecoin.tree import build_tree
from cuzk.errors import InputError
from cuzk.field import FR, Fr

R = FR.modulus
KIB2 = 2048


def trim(digest: bytes) -> bytes:
    d = bytearray(digest)
    d[31] &= 0x3F
    return bytes(d)


def random_sector(rng, nodes: int) -> bytes:
    raw = rng.integers(0, 256, size=(nodes, 32), dtype=np.uint8)
    raw[:, 31] &= 0x3F
    return raw.tobytes()


# --- Fr32 -----------------------------------------------------------------------------------

def test_fr32_vectors_from_rust_fil_proofs():
    # fr32/src/reader.rs test_simple_short, test_simple_single, test_simple_127
    assert fr32_pad(bytes([3] * 30)) == bytes([3] * 30) + bytes(2)
    p = fr32_pad(b"\xff" * 32)
    assert len(p) == 64 and p[:31] == b"\xff" * 31 and p[31] == 0b0011_1111 and p[32] == 0b0000_0011
    assert p[33:] == bytes(31)
    p = fr32_pad(b"\xff" * 127)
    assert len(p) == 128 and p[31] == 0b0011_1111 and p[32] == 0xFF
    # test_exotic
    src = bytes(list(range(1, 32)) + [0xFF] + list(range(1, 32)) + [0xFF, 9, 9, 9, 0xFF])
    buf = fr32_pad(src)
    assert list(buf[:31]) == list(range(1, 32))
    assert buf[31] == 63 and buf[32] == (1 << 2) | 0b11
    assert [buf[i] for i in range(33, 63)] == [(i - 31) << 2 for i in range(33, 63)]
    assert buf[63] == 0x0F << 2 and buf[64] == 0x0F | 9 << 4
    assert buf[65] == 9 << 4 and buf[66] == 9 << 4 and buf[67] == 0xF0 and buf[68] == 0x0F
    assert fr32_unpad(buf, len(src)) == src


def _bitwise_pad(raw: bytes) -> bytes:
    """fr32's own test model (bit_vec_padding): 254 data bits then 2 zero bits per node."""
    bits = [(b >> i) & 1 for b in raw for i in range(8)]
    out = []
    for k in range(0, len(bits), 254):
        unit = bits[k:k + 254]
        out += unit + ([0, 0] if len(unit) == 254 else [])
    out += [0] * (-len(out) % 256)
    return bytes(sum(out[8 * j + i] << i for i in range(8)) for j in range(len(out) // 8))


@settings(max_examples=60, deadline=None)
@given(st.binary(min_size=0, max_size=600))
def test_fr32_pad_matches_the_bit_model_and_round_trips(raw):
    padded = fr32_pad(raw)
    assert padded == _bitwise_pad(raw)
    assert len(padded) == padded_size(len(raw))
    if padded:
        check_nodes(padded)
    assert fr32_unpad(padded, len(raw)) == raw


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 40).flatmap(lambda k: st.binary(min_size=127 * k, max_size=127 * k)))
def test_fr32_unpad_of_whole_blocks_needs_no_size(raw):
    assert fr32_unpad(fr32_pad(raw)) == raw


def test_fr32_unpad_refuses_non_fr32_data():
    with pytest.raises(InputError, match="node 1 has its top two bits"):
        fr32_unpad(bytes(32) + b"\xff" * 32)
    with pytest.raises(InputError, match="whole 32-byte nodes"):
        fr32_unpad(bytes(33))
    with pytest.raises(InputError, match="at most 127"):
        fr32_unpad(bytes(128), 128)


def test_check_nodes_names_the_first_node_at_or_above_r():
    nodes = [int_bytes(0), int_bytes(R - 1), int_bytes(5), int_bytes(R), int_bytes(R + 1)]
    check_nodes(b"".join(nodes[:3]))
    with pytest.raises(InputError, match="node 3 "):
        check_nodes(b"".join(nodes))
    with pytest.raises(InputError, match="node 0 "):
        check_nodes(b"\xff" * 32)
    with pytest.raises(InputError, match="whole number"):
        check_nodes(bytes(31))


# --- SHA-256 kernels ------------------------------------------------------------------------

def test_sha256_constants_are_fips_180_4():
    k, h = round_constants(), initial_state()
    assert int(k[0]) == 0x428A2F98 and int(k[63]) == 0xC67178F2
    assert int(h[0]) == 0x6A09E667 and int(h[7]) == 0x5BE0CD19


@njit
def _ni(state, w, k):
    sha_ni_compress(state, w, k)


@pytest.mark.parametrize("kind", ["scalar", pytest.param("sha-ni", marks=pytest.mark.skipif(
    not HAVE_SHA_NI, reason="this CPU has no SHA extensions"))])
def test_both_compressions_equal_hashlib(kind):
    compress = compress_scalar if kind == "scalar" else _ni
    rng = np.random.default_rng(3)
    for length in (0, 3, 55, 56, 64, 119, 200):
        msg = rng.bytes(length)
        padded = msg + b"\x80" + bytes(-(length + 9) % 64) + (8 * length).to_bytes(8, "big")
        state, w, k = initial_state().copy(), np.zeros(64, np.int64), round_constants()
        for at in range(0, len(padded), 64):
            w[:16] = np.frombuffer(padded[at:at + 64], ">u4")
            compress(state, w, k)
        assert b"".join(int(x).to_bytes(4, "big") for x in state) == hashlib.sha256(msg).digest()


def test_hash_pairs_is_trimmed_sha256_of_each_pair():
    rng = np.random.default_rng(1)
    src = rng.integers(0, 256, size=(64, 32), dtype=np.uint8)
    dst = np.empty((32, 32), np.uint8)
    hash_pairs(src, dst)
    for i in range(32):
        assert dst[i].tobytes() == trim(hashlib.sha256(src[2 * i:2 * i + 2].tobytes()).digest())


# --- labels ---------------------------------------------------------------------------------

def reference_labels(rid: bytes, parents: np.ndarray, layers: int) -> list[bytes]:
    """Straight from create_label / create_label_exp: header, then 37 parents, hashlib."""
    n = parents.shape[0]
    out, prev = [], None
    for layer in range(1, layers + 1):
        cur = [b""] * n
        for v in range(n):
            pre = rid + layer.to_bytes(4, "big") + v.to_bytes(8, "big") + bytes(20)
            if v > 0:
                base = [cur[int(p)] for p in parents[v, :6]]
                if layer == 1:
                    pre += b"".join(base) * 6 + base[0]
                else:
                    ps = base + [prev[int(p)] for p in parents[v, 6:]]
                    pre += b"".join(ps) * 2 + b"".join(ps[:9])
            cur[v] = trim(hashlib.sha256(pre).digest())
        out.append(b"".join(cur))
        prev = cur
    return out


@pytest.fixture(scope="module")
def parents_2k():
    return graph_parents(KIB2 // 32, porep_id(5), "1.1.0")


def test_labels_of_a_2kib_sector_equal_the_hashlib_reference(parents_2k):
    rid = trim(hashlib.sha256(b"replica").digest())
    got = label_layers(rid, parents_2k, 2)
    want = reference_labels(rid, parents_2k, 2)
    assert [g.tobytes() for g in got] == want
    # three layers: the expander parents come from the layer just below, not from layer 1
    got3 = label_layers(rid, parents_2k, 3)
    assert [g.tobytes() for g in got3] == reference_labels(rid, parents_2k, 3)


def test_labels_to_files(parents_2k, tmp_path):
    rid = bytes(range(32))[:31] + b"\x01"
    mem = label_layers(rid, parents_2k, 2)
    disk = label_layers(rid, parents_2k, 2, out_dir=tmp_path)
    for layer, (m, d) in enumerate(zip(mem, disk), 1):
        assert layer_file(tmp_path, layer).read_bytes() == m.tobytes() == np.asarray(d).tobytes()


def test_labels_refuse_bad_inputs(parents_2k):
    with pytest.raises(InputError, match="replica_id"):
        label_layers(bytes(31), parents_2k, 2)
    with pytest.raises(InputError, match=r"\(nodes, 14\)"):
        label_layers(bytes(32), parents_2k[:, :6], 2)
    bad = parents_2k.copy()
    bad[5, 7] = 64
    with pytest.raises(InputError, match="beyond"):
        label_layers(bytes(32), bad, 2)


# --- trees ----------------------------------------------------------------------------------

def test_zero_comm_d_is_filecoins():
    # filecoin-proofs/tests/pieces.rs test_compute_comm_d_empty (2 KiB and 128 B sectors)
    zero_2k = bytes([252, 126, 146, 130, 150, 229, 22, 250, 173, 233, 134, 178, 143, 146, 212, 74, 79, 36,
                     185, 53, 72, 82, 35, 55, 106, 121, 144, 39, 188, 24, 248, 51])
    assert TreeD.build(np.zeros((64, 32), np.uint8)).root == zero_2k
    assert TreeD.build(np.zeros((4, 32), np.uint8)).root.hex() == (
        "3731bb99ac689f66eef5973e4a94da188f4ddcae580724fc6f3fd60dfd488333")


def test_tree_d_matches_a_hashlib_tree_and_its_file(tmp_path):
    rng = np.random.default_rng(2)
    data = np.frombuffer(random_sector(rng, 256), np.uint8).reshape(-1, 32)
    level = [row.tobytes() for row in data]
    levels = [level]
    while len(level) > 1:
        level = [trim(hashlib.sha256(level[i] + level[i + 1]).digest()) for i in range(0, len(level), 2)]
        levels.append(level)
    for threads in (1, 2):
        t = TreeD.build(data, threads=threads, out_dir=tmp_path if threads == 2 else None)
        assert [[r.tobytes() for r in lv] for lv in t.levels] == levels
        assert t.path(37)[0] == levels[0][36] and t.path(37)[1] == levels[1][19]
    assert tree_d_file(tmp_path).read_bytes() == b"".join(b"".join(lv) for lv in levels)
    with pytest.raises(InputError, match="power-of-two"):
        TreeD.build(data[:3])


@pytest.mark.parametrize("arities, leaves", [((8, 0, 0), 512), ((8, 2, 0), 128), ((8, 8, 2), 1024), ((2, 0, 0), 64)])
def test_poseidon_tree_equals_build_tree(arities, leaves):
    rng = np.random.default_rng(leaves)
    ints = [int.from_bytes(rng.bytes(32), "little") % R for _ in range(leaves)]
    want = build_tree(ints, arities)
    got = poseidon_tree(Fr.from_ints(ints), TreeShape.of(arities, leaves), threads=2)
    assert len(got.layers) == len(want.layers)
    assert all((g == w).all() for g, w in zip(got.layers, want.layers))
    assert got.path(leaves - 3) == want.path(leaves - 3)


@pytest.mark.parametrize("count", [2, 11])
def test_column_hashes_are_poseidon_of_each_column(count):
    rng = np.random.default_rng(count)
    layers = [np.frombuffer(random_sector(rng, 16), np.uint8).reshape(-1, 32) for _ in range(count)]
    got = Fr.to_ints(column_hashes(layers, threads=2))
    for v in (0, 7, 15):
        assert got[v] == poseidon_hash([int.from_bytes(layer[v].tobytes(), "little") for layer in layers])
    with pytest.raises(InputError, match="no column hash for 3"):
        column_hashes(layers[:1] * 3)


# --- seal -----------------------------------------------------------------------------------

IDS = dict(prover_id=bytes(range(32)), sector_id=4242, ticket=bytes(range(100, 132)))


@pytest.fixture(scope="module")
def sealed_2k():
    data = random_sector(np.random.default_rng(7), 64)
    return data, seal(data, registered_proof=5, **IDS)


def test_seal_2kib_end_to_end(sealed_2k, parents_2k):
    data, s = sealed_2k
    assert s.nodes == 64 and s.layers_count == 2 and s.data.tobytes() == data
    assert s.comm_d == TreeD.build(np.frombuffer(data, np.uint8).reshape(-1, 32)).root
    rid = replica_id(IDS["prover_id"], IDS["sector_id"], IDS["ticket"], s.comm_d, porep_id(5))
    assert s.replica_id == rid
    assert (s.parents == parents_2k).all()
    assert [a.tobytes() for a in s.layers] == reference_labels(rid, parents_2k, 2)
    # encoding: replica = last layer + data in Fr
    for v in range(64):
        d = int.from_bytes(data[32 * v:32 * v + 32], "little")
        assert s.replica_node(v) == (s.label(2, v) + d) % R
    # tree R_last and tree C as build_tree makes them, comm_r = Poseidon2(comm_c, comm_r_last)
    tree_r = build_tree(s.replica.tobytes(), (8, 0, 0))
    assert s.comm_r_last == int_bytes(tree_r.root) and s.replica_path(9) == tree_r.path(9)
    tree_c = build_tree([poseidon_hash(s.column(v)) for v in range(64)], (8, 0, 0))
    assert s.comm_c == int_bytes(tree_c.root) and s.column_path(63) == tree_c.path(63)
    assert s.comm_r == int_bytes(poseidon_hash([s.comm_c_int, s.comm_r_last_int]))
    assert s.data_path(5)[0] == data[128:160] and len(s.data_path(5)) == 6
    assert s.column(3) == [s.label(1, 3), s.label(2, 3)]
    assert s.node_parents(10) == [int(p) for p in parents_2k[10]]


def test_seal_is_deterministic_and_depends_on_every_input(sealed_2k, tmp_path):
    data, s = sealed_2k
    again = seal(data, registered_proof=5, cache_dir=tmp_path, threads=1, **IDS)
    assert (again.comm_d, again.comm_r, again.comm_c) == (s.comm_d, s.comm_r, s.comm_c)
    assert replica_file(tmp_path).read_bytes() == s.replica.tobytes()
    assert layer_file(tmp_path, 2).read_bytes() == s.layers[1].tobytes()
    assert tree_d_file(tmp_path).stat().st_size == (2 * 64 - 1) * 32
    other = seal(data, registered_proof=5, **(IDS | {"ticket": bytes(32)}))
    assert other.comm_d == s.comm_d and other.comm_r != s.comm_r
    v1_0 = seal(data, registered_proof=0, **IDS)  # another porep id and API version: other parents
    assert v1_0.comm_r != s.comm_r


def test_seal_refuses_bad_inputs():
    with pytest.raises(InputError, match="2048 bytes"):
        seal(bytes(2016), registered_proof=0, **IDS)
    with pytest.raises(InputError, match="node 2 "):
        seal(bytes(64) + b"\xff" * 32 + bytes(2048 - 96), registered_proof=0, **IDS)
    with pytest.raises(InputError, match="ticket"):
        seal(bytes(2048), registered_proof=0, **(IDS | {"ticket": bytes(31)}))
    with pytest.raises(InputError, match="sector_id"):
        seal(bytes(2048), registered_proof=0, **(IDS | {"sector_id": -1}))
    with pytest.raises(InputError, match="unknown registered seal proof"):
        seal(bytes(2048), registered_proof=99, **IDS)


@pytest.mark.slow
def test_seal_8mib_sector(tmp_path):
    rng = np.random.default_rng(8)
    data = random_sector(rng, (8 << 20) // 32)
    s = seal(data, registered_proof=6, cache_dir=tmp_path, **IDS)
    assert s.nodes == 1 << 18 and s.tree_r.shape.arities == (8, 0, 0)
    for v in (0, 1, 12345, (1 << 18) - 1):
        d = int.from_bytes(data[32 * v:32 * v + 32], "little")
        assert s.replica_node(v) == (s.label(2, v) + d) % R
        assert poseidon_hash(s.column(v)) == Fr.to_ints(s.tree_c.layers[0][v:v + 1])[0]
    assert s.comm_r == int_bytes(poseidon_hash([s.comm_c_int, s.comm_r_last_int]))
    assert s.comm_d == TreeD.build(np.frombuffer(data, np.uint8).reshape(-1, 32)).root
