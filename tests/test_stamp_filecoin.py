"""FallbackPoSt through cs.repeat: the same R1CS (digest, names, public layout) and witness as
tracing every sector and challenge, and rust-fil-proofs' counts."""

import numpy as np

from cuzk.circuits.filecoin.post import FallbackPoSt
from cuzk.synth import Synthesizer


def test_stamped_fallback_post_equals_the_traced_one():
    stamped = FallbackPoSt(2048, 5, 3)
    hand = FallbackPoSt(2048, 5, 3)
    hand.stamp = False
    s, h = Synthesizer(stamped), Synthesizer(hand)
    assert (s.r1cs.n_constraints, s.r1cs.n_public + 1) == (16869, 19)  # rust-fil-proofs' 2 KiB count
    assert s.r1cs.digest == h.r1cs.digest and tuple(s.r1cs.names) == tuple(h.r1cs.names)
    rng = np.random.default_rng(1)
    inputs = {name: rng.integers(0, 2**62, size=shape).tolist() for name, shape in s.program.inputs}
    ws, wh = s.synthesize_inputs(inputs), h.synthesize_inputs(inputs)
    assert np.array_equal(ws.z, wh.z) and ws.public_inputs == wh.public_inputs
