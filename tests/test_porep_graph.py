"""The Stacked-DRG graph (cuzk/circuits/filecoin/porep/graph.py) against rust-fil-proofs.

The strongest check: the SHA-256 of the parent cache equals the digest rust-fil-proofs ships in
storage-proofs-porep/parent_cache.json for that file name, for the 2 KiB and 8 MiB sectors of
API 1.0 (registered proofs 0, 1) and 1.1 (5, 6), and 512 MiB under ``slow``. Around it: the
ChaCha block function on published vectors, the specialised BLAKE2b on hashlib, the Feistel and
the bucket sampling on pure-Python re-derivations, and rust-fil-proofs' graph tests' properties.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import given, strategies as st

from cuzk.circuits.filecoin.porep import graph
from cuzk.circuits.filecoin.porep.chacha import chacha_blocks, keystream
from cuzk.circuits.filecoin.porep.feistel import blake2b_16, permute_all, precompute
from cuzk.circuits.filecoin.porep.graph import parent_cache, parent_cache_id, parents
from cuzk.circuits.filecoin.porep.registered import porep_id
from cuzk.errors import InputError

KIB, MIB = 1 << 10, 1 << 20

# storage-proofs-porep/parent_cache.json: file name stem -> (sector size, SHA-256 of the file),
# and the registered proof whose PoRep id names that file.
PARENT_CACHE_JSON = {
    0: ("v28-sdr-parent-3f0eef38bb48af1f48ad65e14eb85b4ebfc167cec18cd81764f6d998836c9899", 2 * KIB,
        0x3da49221e2ed55371b86d0bf3d6526fcf128af61bed904f966428db1b531750d),
    5: ("v28-sdr-parent-494d91dc80f2df5272c4b9e129bc7ade9405225993af9fe34e6542a39a47554b", 2 * KIB,
        0x840057702eea7652cf97e04306c30fe57174714d90de156a25eddd6075c25b97),
    1: ("v28-sdr-parent-dcdabb0fbe4364bf0ac28b6a18c66de246409fa1a9020a00f33fb3e3053da6dc", 8 * MIB,
        0xa76604f2f59f2744c7151653bbb1d8596b6b57d295e6fa6c1f0c41d725b502ce),
    6: ("v28-sdr-parent-5eed212119fd91aa6220a27f31a8966444a9381842bceb3a1ea61525bd47a5b5", 8 * MIB,
        0x03cd13565ded97c240a5f52e54295ad127bd0461b57904cb3a4d79b097bbecab),
    2: ("v28-sdr-parent-2aa9c77c3e58259481351cc4be2079cc71e1c9af39700866545c043bfa30fb42", 512 * MIB,
        0x3adcc092423aa76d6a7184016893406da44dd974b219a89cd3ece25e4e3018f5),
    7: ("v28-sdr-parent-7ba215a1d2345774ab90b8cb1158d296e409d6068819d7b8c7baf0b25d63dc34", 512 * MIB,
        0xb5877d1963793efebc261fd8fde4dd6bc59e6b5c7abf52617a4ee023b8dc173a),
}
# The other four entries: 32 GiB (3, 8) and 64 GiB (4, 9), too large to build here.
OTHER_CACHE_NAMES = {
    (3, 32 << 30): "v28-sdr-parent-e1fa5d5b811ddbd118be3412c4a8c329156b8b8acc72632bca459455b5a05a13",
    (8, 32 << 30): "v28-sdr-parent-21981246c370f9d76c7a77ab273d94bde0ceb4e938292334960bce05585dc117",
    (4, 64 << 30): "v28-sdr-parent-8a99e8d6b6be7ab87a56b632e6739ff201c23ea14e99737c74690f0e265574d6",
    (9, 64 << 30): "v28-sdr-parent-4905486b7af19558ac3649bc6261411858b6add534438878c4ee3b29d8b9de0b",
}


def _version(proof_id: int) -> str:
    return "1.0.0" if proof_id < 5 else "1.1.0"


@pytest.mark.parametrize("proof_id", sorted(PARENT_CACHE_JSON))
def test_parent_cache_file_names(proof_id):
    name, size, _ = PARENT_CACHE_JSON[proof_id]
    assert parent_cache_id(size // 32, porep_id(proof_id)) == name


@pytest.mark.parametrize(("proof_id", "size"), sorted(OTHER_CACHE_NAMES))
def test_parent_cache_file_names_large(proof_id, size):
    assert parent_cache_id(size // 32, porep_id(proof_id)) == OTHER_CACHE_NAMES[(proof_id, size)]


@pytest.mark.parametrize("proof_id", [0, 5, 1, 6])
def test_parent_cache_digest(proof_id):
    _, size, digest = PARENT_CACHE_JSON[proof_id]
    data = parent_cache(size // 32, porep_id(proof_id), _version(proof_id))
    assert len(data) == size // 32 * 14 * 4
    assert int.from_bytes(hashlib.sha256(data).digest(), "big") == digest


@pytest.mark.slow
@pytest.mark.parametrize("proof_id", [2, 7])
def test_parent_cache_digest_512mib(proof_id):
    _, size, digest = PARENT_CACHE_JSON[proof_id]
    data = parent_cache(size // 32, porep_id(proof_id), _version(proof_id))
    assert int.from_bytes(hashlib.sha256(data).digest(), "big") == digest


def test_wrong_version_changes_the_cache():
    _, size, digest = PARENT_CACHE_JSON[5]
    data = parent_cache(size // 32, porep_id(5), "1.0.0")
    assert int.from_bytes(hashlib.sha256(data).digest(), "big") != digest


# -- ChaCha ---------------------------------------------------------------------------------

# draft-strombergson-chacha-test-vectors TC1: 256-bit zero key, zero IV, 8 rounds, two blocks
CHACHA8_TC1 = (
    "3e00ef2f895f40d67f5bb8e81f09a5a12c840ec3ce9a7f3b181be188ef711a1e"
    "984ce172b9216f419f445367456d5619314a42a3da86b001387bfdb80e0cfe42"
    "d2aefa0deaa5c151bf0adb6c01f2a5adc0fd581259f9a2aadcf20f8fd566a26b"
    "5032ec38bbc5da98ee0c6f568b872a65a08abf251deb21bb4b56e5d8821e68aa"
)
# RFC 8439 section 2.3.2: key 00..1f, nonce 000000090000004a00000000, counter 1
RFC8439_BLOCK = (
    "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
    "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"
)


def test_chacha8_vector():
    assert keystream(bytes(32), 8, 128).hex() == CHACHA8_TC1


def test_chacha20_rfc8439_block():
    nonce = bytes.fromhex("000000090000004a00000000")
    assert keystream(bytes(range(32)), 20, 64, counter=1, nonce=nonce).hex() == RFC8439_BLOCK


def _py_chacha_block(key: bytes, tail: list, rounds: int) -> bytes:
    """Textbook ChaCha on Python ints, independent of the Numba kernel."""
    m = 0xFFFFFFFF
    s = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574, *np.frombuffer(key, "<u4").tolist(), *tail]
    x = list(s)

    def q(a, b, c, d):
        for (p, r, rot) in ((a, d, 16), (c, b, 12), (a, d, 8), (c, b, 7)):
            src = b if p == a else d
            x[p] = (x[p] + x[src]) & m
            x[r] ^= x[p]
            x[r] = ((x[r] << rot) | (x[r] >> (32 - rot))) & m

    for _ in range(rounds // 2):
        q(0, 4, 8, 12), q(1, 5, 9, 13), q(2, 6, 10, 14), q(3, 7, 11, 15)
        q(0, 5, 10, 15), q(1, 6, 11, 12), q(2, 7, 8, 13), q(3, 4, 9, 14)
    return b"".join(((a + b) & m).to_bytes(4, "little") for a, b in zip(x, s))


@given(st.binary(min_size=32, max_size=32), st.integers(0, 1000), st.sampled_from([8, 20]))
def test_chacha_matches_python(key, counter, rounds):
    got = chacha_blocks(key, rounds, counter, 1, bytes(12)).tobytes()
    assert got == _py_chacha_block(key, [counter, 0, 0, 0], rounds)


@given(st.integers(0, 300), st.integers(0, 200))
def test_keystream_offsets(offset, length):
    full = keystream(b"\x07" * 32, 20, 600)
    assert keystream(b"\x07" * 32, 20, length, offset=offset) == full[offset:offset + length]


# -- BLAKE2b / Feistel ---------------------------------------------------------------------

@given(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1))
def test_blake2b_16_matches_hashlib(a, b):
    d = hashlib.blake2b(a.to_bytes(8, "little") + b.to_bytes(8, "little")).digest()
    assert int(blake2b_16(np.uint64(a), np.uint64(b))) == int.from_bytes(d[:8], "little")


def _py_permute(n: int, index: int, keys) -> int:
    lm, rm, hb = precompute(n)

    def enc(i):
        left, right = (i & lm) >> hb, i & rm
        for k in keys[:3]:
            f = hashlib.blake2b(right.to_bytes(8, "big") + k.to_bytes(8, "big")).digest()
            left, right = right, left ^ (int.from_bytes(f[:8], "big") & rm)
        return (left << hb) | right

    u = enc(index)
    while u >= n:
        u = enc(u)
    return u


@pytest.mark.parametrize("n", [5, 6, 8, 12, 17, 64, 1000])
def test_feistel_matches_python(n):
    keys = (1, 2, 3, 4)
    want = [_py_permute(n, i, keys) for i in range(n)]
    assert permute_all(n, keys) == want
    assert permute_all(n, keys, tables=False) == want


def test_feistel_is_a_permutation():
    # rust-fil-proofs' test_shuffle: 2^10 nodes * 8 expander slots, keys 1, 2, 3, 4
    n = (1 << 10) * 8
    assert sorted(permute_all(n, (1, 2, 3, 4))) == list(range(n))


# -- the graph ------------------------------------------------------------------------------

def _py_drg(node: int, pid: bytes, legacy: bool) -> list:
    """Bucket sampling for one node >= 2 on Python ints and the textbook ChaCha8."""
    seed = graph.drg_seed(pid) + node.to_bytes(4, "little")
    stream = _py_chacha_block(seed, [0, 0, 0, 0], 8) + _py_chacha_block(seed, [1, 0, 0, 0], 8)
    draws = iter(int.from_bytes(stream[8 * i:8 * i + 8], "little") for i in range(10))
    meta = node * 5
    buckets = int(np.ceil(np.log2(float(meta))))  # as rust-fil-proofs: through f64
    out = []
    for _ in range(5):
        largest = min(meta, 1 << (next(draws) % buckets + 1))
        smallest = max(2, largest >> 1)
        p = (meta - smallest - next(draws) % (largest - smallest + 1)) // 5
        out.append(node - 1 if p == node else p)
    return out + [node - 1] if legacy else [node - 1] + out


@pytest.mark.parametrize(("version", "legacy"), [("1.0.0", True), ("1.1.0", False), ("1.2.0", False)])
def test_drg_matches_python(version, legacy):
    pid = porep_id(6)
    nodes = 1 << 18
    sample = [2, 3, 4, 100, 4097, nodes - 1]
    rows = {n: parents(nodes, pid, version, start=n, stop=n + 1)[0] for n in sample}
    for n in sample:
        assert rows[n][:6].tolist() == _py_drg(n, pid, legacy)


def test_expander_matches_python():
    pid, nodes = porep_id(5), 64
    keys = graph.feistel_keys(pid)
    p = parents(nodes, pid, "1.1.0")
    for node in range(nodes):
        assert p[node, 6:].tolist() == [_py_permute(nodes * 8, node * 8 + i, keys) // 8 for i in range(8)]


@pytest.mark.parametrize(("proof_id", "version"), [(0, "1.0.0"), (5, "1.2.0")])
def test_graph_properties(proof_id, version):
    # rust-fil-proofs' graph_bucket test: nodes 0 and 1 have all-zero DRG parents, no node is its
    # own parent, the predecessor is the last DRG parent under 1.0 and the first one after.
    nodes = 2048
    p = parents(nodes, porep_id(proof_id), version)
    assert p.shape == (nodes, 14) and p.dtype == np.uint32
    assert not p[:2, :6].any()
    idx = np.arange(nodes)
    drg = p[2:, :6].astype(np.int64)
    assert (drg < idx[2:, None]).all()
    assert (p[2:, 5 if version == "1.0.0" else 0] == idx[2:] - 1).all()
    assert (p[:, 6:] < nodes).all()


def test_ranges_agree():
    pid = porep_id(1)
    whole = parents(10_000, pid, "1.0.0")
    assert np.array_equal(parents(10_000, pid, "1.0.0", start=4095, stop=8200), whole[4095:8200])
    assert parents(10_000, pid, "1.0.0", start=7, stop=7).shape == (0, 14)


def test_high_parent_bits():
    # rust-fil-proofs' test_high_parent_bits: a 64 GiB graph's (2^31 nodes) expander reaches past
    # 2^29 (where truncating slots to u32 would stop) within the first 3 nodes under API 1.2.
    p = parents(1 << 31, porep_id(5), "1.2.0", start=0, stop=3)
    assert (p[:, 6:] >= 1 << 29).any()


@pytest.mark.parametrize(("proof_id", "nodes", "version", "pathological"), [
    (3, 1 << 30, "1.0.0", True), (4, 1 << 31, "1.0.0", True),
    (8, 1 << 30, "1.1.0", False), (9, 1 << 31, "1.2.0", False),
])
def test_distribution_pathology(proof_id, nodes, version, pathological):
    # rust-fil-proofs' test_graph_distribution_pathology (porep ids with first byte 3, 4, 8, 9):
    # API 1.0's expander never reaches the second half of a 32 / 64 GiB sector in the first 1,000
    # nodes; 1.1 does.
    pid = bytes([proof_id]) + bytes(31)
    p = parents(nodes, pid, version, start=0, stop=1000)
    assert (p[:, 6:] >= nodes // 2).any() != pathological


def test_errors():
    with pytest.raises(InputError, match="porep_id"):
        parents(64, b"short", "1.1.0")
    with pytest.raises(InputError, match="api_version"):
        parents(64, porep_id(5), "2.0.0")
    with pytest.raises(InputError, match="nodes"):
        parents(1, porep_id(5), "1.1.0")
    with pytest.raises(InputError, match="range"):
        parents(64, porep_id(5), "1.1.0", start=10, stop=65)
