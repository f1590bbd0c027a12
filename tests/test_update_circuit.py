"""SnapDeals' EmptySectorUpdate circuits: constraint and input counts equal to rust-fil-proofs'
(storage-proofs-update's tests/circuit.rs and tests/circuit_poseidon.rs), the 32 GiB partitions
traced with stamping and counted without compiling, the public-input layout, and the arguments
the constructors refuse."""

from __future__ import annotations

import pytest

from cuzk.circuits.filecoin import EmptySectorUpdate, EmptySectorUpdatePoseidon
from cuzk.errors import InputError
from cuzk.synth.placement import pce_sizes
from cuzk.synth.program import trace

GIB32 = 1 << 30  # nodes of a 32 GiB sector


def _count(circuit) -> tuple[int, int]:
    cs, _ = trace(circuit)
    return pce_sizes(cs)["rows"], cs.n_public + 1


@pytest.mark.parametrize("nodes, constraints", [
    (1 << 5, 1_248_389),     # 1 KiB, tree R 8-4-0
    (1 << 6, 1_705_039),     # 2 KiB, 8-0-0
    (1 << 7, 2_165_109),     # 4 KiB, 8-2-0
    (1 << 8, 2_620_359),     # 8 KiB, 8-4-0
    (1 << 9, 6_300_021),     # 16 KiB, 8-8-0, two partitions, 128 apex leaves
    (1 << 10, 6_760_091),    # 32 KiB, 8-8-2
    (GIB32, 81_049_499),     # 32 GiB: the blank circuit, 86 challenges
])
def test_sha256_variant_counts_are_rust_fil_proofs(nodes, constraints):
    assert _count(EmptySectorUpdate(nodes=nodes)) == (constraints, 5)


@pytest.mark.parametrize("nodes, constraints", [(1 << 5, 32_164), (1 << 8, 47_974), (GIB32, 22_305_906)])
def test_poseidon_variant_counts_are_rust_fil_proofs(nodes, constraints):
    assert _count(EmptySectorUpdatePoseidon(nodes=nodes)) == (constraints, 5)


def test_sector_size_alone_gives_filecoins_parameters():
    c = EmptySectorUpdate(32 << 30)
    p = c.params
    assert (p.nodes, p.shape.arities, p.partition_count, p.challenge_count, p.apex_leaf_count) == (GIB32, (8, 8, 0), 16, 86, 128)
    assert (c.h, p.hs, p.apex_height) == (10, (7, 8, 9, 10, 11, 12), 19)
    assert EmptySectorUpdate(64 << 30).params.shape.arities == (8, 8, 2)
    assert EmptySectorUpdatePoseidon(32 << 30).params.challenge_count == 16 * 86


def test_public_inputs_pack_the_partition_and_h_select():
    c = EmptySectorUpdate(32 << 30, partition=3)
    # k in the 4 low bits, h_select = 2^index(h) above them
    assert c.public_inputs(None, 7, 8, 9) == [3 | 8 << 4, 7, 8, 9]
    assert c.public_inputs(15, 7, 8, 9, h=12) == [15 | 32 << 4, 7, 8, 9]
    assert EmptySectorUpdate(nodes=64).public_inputs(0, 1, 2, 3) == [1, 1, 2, 3]   # one partition: no k bits
    assert EmptySectorUpdatePoseidon(8 << 20).public_inputs(1, 2, 3, h=7) == [1, 1, 2, 3]


def test_bad_arguments_name_what_is_wrong():
    with pytest.raises(InputError, match="partition must be an int in \\[0, 16\\)"):
        EmptySectorUpdate(32 << 30, partition=16)
    with pytest.raises(InputError, match="h must be one of"):
        EmptySectorUpdate(32 << 30, h=1)
    with pytest.raises(InputError, match="h must be one of"):
        EmptySectorUpdate(32 << 30).public_inputs(0, 1, 2, 3, h=13)
    with pytest.raises(InputError, match="has shape \\(8, 4, 0\\)"):
        EmptySectorUpdate(nodes=32, shape=(8, 0, 0))
    with pytest.raises(InputError, match="a sector update is defined for sectors of"):
        EmptySectorUpdate(1 << 30)          # 1 GiB: a PoRep size, no update parameters
    with pytest.raises(InputError, match="exactly one of sector_size"):
        EmptySectorUpdate(2048, nodes=64)
    with pytest.raises(InputError, match="partition must be"):
        EmptySectorUpdatePoseidon(32 << 30, partition=1)
    with pytest.raises(InputError, match="not a canonical BLS12-381 Fr"):
        EmptySectorUpdate(2048).public_inputs(0, 1, 2, 1 << 255)


def test_stamped_trace_equals_the_hand_trace():
    # the Poseidon variant is cheap to trace by hand: stamping its challenges changes nothing
    class Hand(EmptySectorUpdatePoseidon):
        stamp = False

    from cuzk import Synthesizer

    a, b = Synthesizer(EmptySectorUpdatePoseidon(nodes=32)).r1cs, Synthesizer(Hand(nodes=32)).r1cs
    assert a.digest == b.digest and a.n_constraints == 32_164
    assert tuple(a.names) == tuple(b.names)  # a stamped Poseidon template's rows keep the traced names


def test_poseidon_variant_is_satisfied_by_an_update():
    import numpy as np

    from cuzk import Synthesizer
    from cuzk.circuits.filecoin.update import circuit_inputs, partition_proof, update

    class Sealed:
        replica = np.random.default_rng(1).integers(0, 256, (32, 32), dtype=np.uint8) & np.uint8(0x3F)
        comm_c = bytes(31) + b"\x02"

    data = np.random.default_rng(2).integers(0, 256, (32, 32), dtype=np.uint8) & np.uint8(0x3F)
    u = update(Sealed(), data, poseidon=True)
    st = dict(comm_r_old=u.comm_r_old, comm_d_new=u.comm_d_new, comm_r_new=u.comm_r_new)
    synth = Synthesizer(EmptySectorUpdatePoseidon(nodes=32), check=True)
    w = synth.synthesize(**circuit_inputs(u.params, partition_proof(u, 0), **st))
    assert list(w.public_inputs) == EmptySectorUpdatePoseidon(nodes=32).public_inputs(
        u.comm_r_old_int, u.comm_d_new_int, u.comm_r_new_int)
    with pytest.raises(InputError, match="comm_d_new is not the root"):
        circuit_inputs(u.params, partition_proof(u, 0), **dict(st, comm_d_new=u.comm_r_new))
