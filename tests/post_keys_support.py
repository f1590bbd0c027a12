"""cuzk's development keys of the two 2 KiB PoSt circuits, set up once per test process and shared
by tests/test_post_oracle.py and tests/test_serve_post_oracle.py (the setups take ~4 s and ~13 s
on two cores)."""

from __future__ import annotations

import functools

import numpy as np

import cuzk
from cuzk.circuits.filecoin import window_post, winning_post

__all__ = ["post_keys"]


@functools.cache
def post_keys(kind: str):
    """``(synthesizer, pk, vk)`` of the 2 KiB ``"window"`` or ``"winning"`` circuit, seeded.

    One key per kind serves every API version: the version changes which leaves are challenged
    (the witness and the public inputs), not the R1CS.
    """
    post, seed = {"window": (window_post(2048), 41), "winning": (winning_post(2048), 42)}[kind]
    synth = cuzk.Synthesizer(post)
    pk, vk = cuzk.groth16.setup(synth.r1cs, rng=np.random.default_rng(seed))
    return synth, pk, vk
