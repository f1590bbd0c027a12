"""The prover's threaded host work on a witness (cuzk.groth16.witness_prep) against the one-thread
numpy code it replaced: the same canonical assignment, query scalars and first unsatisfied row,
for any chunking, on each curve's Fr."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from cuzk import curves
from cuzk.errors import FieldValueError, UnsatisfiedConstraint
from cuzk.groth16 import witness_prep
from cuzk.groth16.keys import Density

prove_mod = importlib.import_module("cuzk.groth16.prove")


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(witness_prep, "CHUNK_ROWS", 7)  # many chunks on small arrays


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 300), threads=st.integers(1, 4), seed=st.integers(0, 2**32 - 1),
       curve=st.sampled_from(["bls12_381", "bn254", "bls12_377"]))
def test_canonical_is_from_mont(n, threads, seed, curve):
    fr = curves.get(curve).Fr
    z = fr.random(n, np.random.default_rng(seed))
    assert np.array_equal(witness_prep.canonical(fr, z, threads), fr.from_mont(z))


def test_canonical_refuses_an_unreduced_row():
    fr = curves.get("bls12_381").Fr
    z = fr.random(50, np.random.default_rng(1))
    z[33] = np.uint64(2**64 - 1)
    with pytest.raises(FieldValueError, match="not reduced"):
        witness_prep.canonical(fr, z, 3)


@settings(max_examples=25, deadline=None)
@given(n_inputs=st.integers(1, 5), n_aux=st.integers(0, 200), threads=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_query_scalars_match_the_mask_code(n_inputs, n_aux, threads, seed):
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 2**62, size=(n_inputs + n_aux, 4), dtype=np.uint64)
    dens = Density(a_aux=rng.random(n_aux) < 0.7, b_input=rng.random(n_inputs) < 0.5, b_aux=rng.random(n_aux) < 0.3)

    class Key:
        def resolved_density(self):
            return dens

    Key.n_inputs = n_inputs
    a, b, l = witness_prep.query_scalars(Key(), z, threads)
    inputs, aux = z[:n_inputs], z[n_inputs:]
    assert np.array_equal(a, np.concatenate([inputs, aux[dens.a_aux]]))
    assert np.array_equal(b, np.concatenate([inputs[dens.b_input], aux[dens.b_aux]]))
    assert np.array_equal(l, aux)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 120), bad=st.lists(st.integers(0, 119), max_size=3), threads=st.integers(1, 4))
def test_the_first_unsatisfied_row_is_found(n, bad, threads):
    fr = curves.get("bn254").Fr
    rng = np.random.default_rng(n)
    a, b = fr.random(n, rng), fr.random(n, rng)
    c = fr.mul(a, b)
    rows = sorted({r for r in bad if r < n})
    for r in rows:
        c[r] = fr.add(c[r:r + 1], fr.one(1))[0]
    assert witness_prep.unsatisfied_row(fr, a, b, c, threads) == (rows[0] if rows else None)


def test_check_witness_names_the_row(monkeypatch):
    from cuzk.synth import Synthesized

    fr = curves.get("bls12_381").Fr
    rng = np.random.default_rng(3)
    a, b = fr.random(40, rng), fr.random(40, rng)
    c = fr.mul(a, b)
    c[29] = fr.one(1)[0]
    w = Synthesized(z=fr.random(3, rng), a=a, b=b, c=c, public_inputs=[], digest="")
    with pytest.raises(UnsatisfiedConstraint, match="constraint 29 ") as e:
        prove_mod.check_witness(w, threads=3)
    assert e.value.index == 29
