"""Filecoin circuits: trees of every shape, PoR and Fallback PoSt with rust-fil-proofs' counts,
challenge derivation, public-input layout, proofs, and bad input."""

import hashlib
import random

import pytest

import cuzk
from cuzk.circuits.filecoin import (
    FallbackPoSt, PoR, PostSector, SparseTree, TreeShape, build_tree, leaves_from_bytes, merkle_root_native, poseidon_hash,
    shape_for_sector, window_post, winning_post, winning_post_sectors,
)
from cuzk.errors import InputError, ProofVerificationError, UnsatisfiedConstraint
from cuzk.field import FR
from cuzk.synth import Synthesizer

R = FR.modulus


def _tree(shape, leaves, seed=0):
    rng = random.Random(seed)
    return build_tree([rng.randrange(R) for _ in range(leaves)], shape)


def _naive_root(leaves, levels):
    layer = list(leaves)
    for a in levels:
        layer = [poseidon_hash(layer[i:i + a]) for i in range(0, len(layer), a)]
    assert len(layer) == 1
    return layer[0]


@pytest.mark.parametrize("shape, leaves", [((8, 0, 0), 64), ((2, 0, 0), 16), ((8, 2, 0), 128), ((8, 8, 2), 1024), ((4, 4, 2), 128)])
def test_tree_root_and_paths(shape, leaves):
    t = _tree(shape, leaves, seed=leaves)
    s = TreeShape.of(shape, leaves)
    assert t.root == _naive_root([t.leaf(i) for i in range(leaves)], s.levels)
    for c in (0, 1, leaves // 2 + 3, leaves - 1):
        path = t.path(c)
        assert [len(p) for p in path] == [a - 1 for a in s.levels]
        assert merkle_root_native(t.leaf(c), c, path, s) == t.root


def test_leaves_from_bytes_little_endian_and_fr_safe():
    data = b"".join(i.to_bytes(32, "little") for i in range(64))
    assert build_tree(data).root == build_tree(list(range(64))).root
    with pytest.raises(InputError, match="canonical"):
        leaves_from_bytes(b"\xff" * 32)
    with pytest.raises(InputError, match="32-byte"):
        leaves_from_bytes(b"\x00" * 33)


@pytest.mark.parametrize("shape, leaves, count", [((2, 0, 0), 64, 1887), ((8, 0, 0), 64, 1063), ((8, 8, 2), 64 * 16, 1907)])
def test_por_counts_match_rust_fil_proofs(shape, leaves, count):
    pub = Synthesizer(PoR(shape=shape, leaves=leaves)).r1cs
    priv = Synthesizer(PoR(shape=shape, leaves=leaves, private_root=True)).r1cs
    assert (pub.n_constraints, pub.n_public + 1) == (count, 3)
    assert (priv.n_constraints, priv.n_public + 1) == (count - 1, 2)  # no root input row


@pytest.mark.parametrize("shape, leaves", [((8, 0, 0), 64), ((8, 4, 2), 512), ((2, 2, 0), 8)])
def test_por_every_insertion_position_satisfies(shape, leaves):
    c = PoR(shape=shape, leaves=leaves)
    s = Synthesizer(c, check=True)
    tree = _tree(shape, leaves, seed=3)
    # every position at the leaf level and at the top levels (challenges spread over all bits)
    for ch in sorted({*range(8), *range(0, leaves, max(1, leaves // 8)), leaves - 1}):
        inp = c.inputs_for(tree, ch)
        assert s.synthesize(**inp).public_inputs == [ch, tree.root]
    bad = c.inputs_for(tree, 5)
    bad["siblings"] = [bad["siblings"][0] + 1] + bad["siblings"][1:]
    with pytest.raises(UnsatisfiedConstraint, match="root"):
        s.synthesize(**bad)
    lie = c.inputs_for(tree, 5)
    lie["challenge"] = 6  # a path for leaf 5 claimed as leaf 6
    with pytest.raises(UnsatisfiedConstraint):
        s.synthesize(**lie)


def test_fallback_post_2kib_count():
    r = Synthesizer(FallbackPoSt(2048, challenge_count=5, sector_count=3)).r1cs
    assert (r.n_constraints, r.n_public + 1) == (16869, 19)


def test_window_post_32gib_partition_count_from_a_slice():
    # a partition is sector_count copies of one sector's rows: trace one sector, scale, and check
    # the scaling on two
    one = Synthesizer(window_post(32 << 30, sector_count=1)).r1cs
    two = Synthesizer(window_post(32 << 30, sector_count=2)).r1cs
    assert (two.n_constraints, two.n_public) == (2 * one.n_constraints, 2 * one.n_public)
    n = window_post(32 << 30).sector_count
    assert (n, n * one.n_constraints, n * one.n_public + 1) == (2349, 125_279_217, 25_840)


def test_window_post_32gib_whole_partition_traced_with_stamping_has_the_counts():
    # the whole partition traced once through cs.repeat (one sector template, one challenge
    # template, 2,349 x 10 placements counted, not built: its PCE would take ~20 GiB)
    from cuzk.synth.placement import pce_sizes
    from cuzk.synth.program import trace

    cs, _ = trace(window_post(32 << 30))
    sizes = pce_sizes(cs)
    assert (sizes["rows"], cs.n_public + 1) == (125_279_217, 25_840)
    assert sizes["memory_bytes"] > 20 * 2**30


@pytest.mark.slow
def test_winning_post_32gib_built_in_full_and_satisfied_from_a_sparse_tree():
    c = winning_post(32 << 30)
    s = Synthesizer(c, check=True)
    assert (s.r1cs.n_constraints, s.r1cs.n_public + 1) == (370590, 133)
    rng = random.Random(32)
    sid, rnd = 9, rng.randrange(R)
    chal = {x for i in range(c.sector_count) for x in c.challenges(rnd, sid, i)}
    sector = PostSector(sector_id=sid, comm_c=rng.randrange(R), tree=SparseTree(c.shape, c.shape.leaves, {x: rng.randrange(R) for x in chal}))
    w = s.synthesize(**c.inputs(rnd, winning_post_sectors(sector)))
    assert w.public_inputs == c.public_inputs(rnd, [(sid, sector.comm_r)] * 66)


def test_sparse_tree_equals_the_full_tree():
    shape, leaves = (8, 2, 0), 128
    rng = random.Random(5)
    set_leaves = {rng.randrange(leaves): rng.randrange(R) for _ in range(5)}
    full = build_tree([set_leaves.get(i, 0) for i in range(leaves)], shape)
    sparse = SparseTree(shape, leaves, set_leaves)
    assert sparse.root == full.root
    for c in [*set_leaves, 0, 127, 64]:
        assert sparse.leaf(c) == full.leaf(c) and sparse.path(c) == full.path(c)
    with pytest.raises(InputError, match="beyond"):
        SparseTree(shape, leaves, {128: 1})


def _sectors(n, shape=(8, 0, 0), leaves=64, seed=7):
    rng = random.Random(seed)
    return [PostSector(sector_id=1000 + i, comm_c=rng.randrange(R), tree=_tree(shape, leaves, seed=seed + i)) for i in range(n)]


def test_challenges_sha256_and_api_versions():
    c12 = FallbackPoSt(2048, 3, 2)
    c10 = FallbackPoSt(2048, 3, 2, api_version="1.0")
    rnd, sid = 12345, 77

    def ref(index):
        d = hashlib.sha256(rnd.to_bytes(32, "little") + sid.to_bytes(8, "little") + index.to_bytes(8, "little")).digest()
        return int.from_bytes(d[:8], "little") % 64

    assert c12.challenges(rnd, sid, sector_index=5) == [ref(0), ref(1), ref(2)]
    assert c10.challenges(rnd, sid, sector_index=5) == [ref(15), ref(16), ref(17)]


def test_public_inputs_layout_and_short_partition():
    c = FallbackPoSt(2048, challenge_count=2, sector_count=3)
    secs = _sectors(4)
    rnd = 99
    s = Synthesizer(c, check=True)
    for part, chunk in ((0, secs[:3]), (1, secs[3:])):
        w = s.synthesize(**c.inputs(rnd, secs, partition=part))
        expect = []
        for i, sec in enumerate(chunk):
            expect += [sec.comm_r, *c.challenges(rnd, sec.sector_id, part * 3 + i)]
        expect += expect[-3:] * (3 - len(chunk))  # the short partition repeats its last sector
        assert w.public_inputs == expect == c.public_inputs(rnd, [(x.sector_id, x.comm_r) for x in secs], partition=part)
    with pytest.raises(InputError, match="partition 2"):
        c.public_inputs(rnd, secs, partition=2)


def test_post_proves_and_verifies_and_wrong_commitments_fail():
    c = FallbackPoSt(2048, challenge_count=1, sector_count=2)
    s = Synthesizer(c, check=True)
    secs = _sectors(2, seed=11)
    inp = c.inputs(5, secs)
    w = s.synthesize(**inp)
    pk, vk = cuzk.groth16.setup(s.r1cs)
    prover = cuzk.GpuProver(pk, device="cpu")
    proof = prover.prove(w)
    assert cuzk.groth16.verify(vk, c.public_inputs(5, secs), proof)
    assert not cuzk.groth16.verify(vk, c.public_inputs(6, secs), proof)
    for key in ("comm_c", "comm_r_last"):
        bad = {k: [list(x) if isinstance(x, list) else x for x in v] for k, v in inp.items()}
        bad[key][1] = (bad[key][1] + 1) % R
        with pytest.raises(UnsatisfiedConstraint, match=r"sector 1/comm_r = H\(comm_c, comm_r_last\)"):
            s.synthesize(**bad)
        wb = s.synthesize_inputs(bad, check=False)
        try:
            forged = prover.prove(wb)
        except (ProofVerificationError, UnsatisfiedConstraint):
            continue  # the prover's own check refuses the witness
        assert not cuzk.groth16.verify(vk, wb.public_inputs, forged)


def test_winning_post_layout():
    c = winning_post(2048)
    sec = _sectors(1)[0]
    inputs = c.public_inputs(3, winning_post_sectors(sec))
    assert len(inputs) == 2 * 66 and inputs[0::2] == [sec.comm_r] * 66


def test_bad_input():
    with pytest.raises(InputError, match="not a Filecoin sector size"):
        FallbackPoSt(4096 * 3, 1, 1)
    with pytest.raises(InputError, match="do not fill"):
        FallbackPoSt(2048, 1, 1, shape=(8, 2, 0))  # 64 leaves are not 2 base trees of 8^h
    with pytest.raises(InputError, match="do not fill"):
        PoR(shape=(8, 0, 0), leaves=32)
    with pytest.raises(InputError, match="arities"):
        PoR(shape=(3, 0, 0), leaves=9)
    with pytest.raises(InputError, match="top arity needs a sub"):
        shape_for_sector(2048, (2, 0, 2))
    with pytest.raises(InputError, match="beyond the tree"):
        _tree((8, 0, 0), 64).path(64)
    with pytest.raises(InputError, match="beyond the tree"):
        PoR().public_inputs(64, 0)
    with pytest.raises(InputError, match="api_version"):
        FallbackPoSt(2048, 1, 1, api_version="2.0")
    with pytest.raises(InputError, match="positive"):
        FallbackPoSt(2048, 0, 1)
    c = FallbackPoSt(2048, 1, 1)
    with pytest.raises(InputError, match="shape"):
        c.inputs(1, _sectors(1, shape=(2, 0, 0)))
    with pytest.raises(InputError, match="randomness"):
        c.public_inputs(R, [(1, 2)])
    with pytest.raises(InputError, match="sector_id"):
        c.public_inputs(1, [(-1, 2)])
    assert window_post(2048).sector_count == 2 and window_post(2048).challenge_count == 10
