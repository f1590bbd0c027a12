"""Bad input to a 2 KiB update partition: a wrong comm_r_old, a tampered data leaf, a wrong h, a
partition out of range, challenge proofs of other nodes. Each fails before a proof exists: as a
cuzk.errors exception naming the field (circuit_inputs' checks) or, with those checks off, as an
UnsatisfiedConstraint of the circuit itself."""

from __future__ import annotations

import random

import attrs
import pytest

import cuzk
from cuzk.circuits.filecoin.porep import fr32_pad, seal
from cuzk.circuits.filecoin.update import (
    PartitionProof, circuit_for, circuit_inputs, partition_challenges, partition_proof, update,
    update_public_inputs,
)
from cuzk.errors import InputError, UnsatisfiedConstraint


@pytest.fixture(scope="module")
def setup():
    sealed = seal(fr32_pad(random.Random(11).randbytes(2032)), registered_proof=5, prover_id=bytes(32),
                  sector_id=5, ticket=bytes([3] * 32))
    u = update(sealed, fr32_pad(random.Random(12).randbytes(2032)))
    synth = cuzk.Synthesizer(circuit_for(u.params), check=True)  # every row checked: the first failing one raises
    return u, partition_proof(u, 0), synth


def _statement(u, **over):
    return dict(dict(comm_r_old=u.comm_r_old, comm_d_new=u.comm_d_new, comm_r_new=u.comm_r_new), **over)


def _inputs(u, proof, check=True, **over):
    return circuit_inputs(u.params, proof, k=0, check=check, **_statement(u, **over))


def _with_challenge(proof, i, cp):
    cps = list(proof.challenge_proofs)
    cps[i] = cp
    return attrs.evolve(proof, challenge_proofs=cps)


def test_the_honest_partition_is_satisfied(setup):
    u, proof, synth = setup
    w = synth.synthesize(**_inputs(u, proof))
    assert list(w.public_inputs) == update_public_inputs(u.params, 0, u.comm_r_old, u.comm_d_new, u.comm_r_new)


def test_wrong_comm_r_old(setup):
    u, proof, synth = setup
    wrong = (u.comm_r_old_int + 1).to_bytes(32, "little")
    with pytest.raises(InputError, match="comm_r_old is not Poseidon"):
        _inputs(u, proof, comm_r_old=wrong)
    with pytest.raises(UnsatisfiedConstraint, match="comm_r_old_calc == comm_r_old"):
        synth.synthesize(**_inputs(u, proof, check=False, comm_r_old=wrong))


def test_tampered_data_leaf(setup):
    u, proof, synth = setup
    cp = proof.challenge_proofs[4]
    leaf = (int.from_bytes(cp.proof_d_new.leaf, "little") + 1).to_bytes(32, "little")
    bad = _with_challenge(proof, 4, attrs.evolve(cp, proof_d_new=attrs.evolve(cp.proof_d_new, leaf=leaf)))
    with pytest.raises(InputError, match=r"challenge_proofs\[4\]\.proof_r_new\.leaf is not"):
        _inputs(u, bad)
    with pytest.raises(UnsatisfiedConstraint):
        synth.synthesize(**_inputs(u, bad, check=False))


def test_wrong_h(setup):
    u, proof, synth = setup
    with pytest.raises(InputError, match=r"h must be one of \[1\]"):
        _inputs(u, proof, h=10)
    # h_select with no bit set: every challenge whose high bit is 1 gets rho(phi, 0), the wrong one
    assert any(c >> 5 for c in partition_challenges(u.params, u.comm_r_new_int, 0))
    with pytest.raises(UnsatisfiedConstraint):
        synth.synthesize(**dict(_inputs(u, proof), k_and_h_select=0))


def test_partition_out_of_range(setup):
    u, proof, synth = setup
    with pytest.raises(InputError, match=r"partition must be an int in \[0, 1\)"):
        circuit_inputs(u.params, proof, k=1, **_statement(u))
    # a partition bit above the 6 h_select bits of a one-partition sector: the decomposition fails
    with pytest.raises(UnsatisfiedConstraint, match="k_and_h_select binary decomp"):
        synth.synthesize(**dict(_inputs(u, proof), k_and_h_select=1 | 1 << 6))


def test_proofs_of_other_nodes_or_shapes(setup):
    u, proof, synth = setup
    cps = list(proof.challenge_proofs)
    swapped = attrs.evolve(proof, challenge_proofs=[cps[1], cps[0]] + cps[2:])
    with pytest.raises((UnsatisfiedConstraint, InputError)):
        synth.synthesize(**_inputs(u, swapped))
    with pytest.raises(UnsatisfiedConstraint):
        synth.synthesize(**_inputs(u, swapped, check=False))
    with pytest.raises(InputError, match="challenge_proofs: a partition proves 10 challenges, got 9"):
        _inputs(u, attrs.evolve(proof, challenge_proofs=cps[:9]))
    with pytest.raises(InputError, match="apex_leafs: a partition has 8, got 7"):
        _inputs(u, attrs.evolve(proof, apex_leafs=proof.apex_leafs[:7]))
    short = attrs.evolve(cps[0].proof_r_old, base=cps[0].proof_r_old.base[:1])
    with pytest.raises(InputError, match=r"challenge_proofs\[0\]\.proof_r_old: a path of arities \(8,\)"):
        _inputs(u, _with_challenge(proof, 0, attrs.evolve(cps[0], proof_r_old=short)))
    with pytest.raises(InputError, match="proof must be a PartitionProof"):
        _inputs(u, proof.to_bincode())
    assert isinstance(PartitionProof.from_bincode(proof.to_bincode()), PartitionProof)
