"""Groth16 over any curve of ``cuzk.curves`` (BLS12-381 by default, BN254): setup, prove, verify,
keys and proofs (a module per step, like ark-groth16). Keys and proofs carry their curve; the
steps take fields, groups, pairing and kernels from ``cuzk.curves.get(key.curve)``.

    >>> import cuzk
    >>> from cuzk import Synthesizer
    >>> from cuzk.circuits import Cube                     # doctest: +SKIP
    >>> synth = Synthesizer(Cube())                         # doctest: +SKIP
    >>> pk, vk = cuzk.groth16.setup(synth.r1cs)             # doctest: +SKIP
    >>> w = synth.synthesize(x=3, out=35)                   # doctest: +SKIP
    >>> cuzk.groth16.verify(vk, w.public_inputs, cuzk.groth16.prove(pk, w))   # doctest: +SKIP
    True
"""

from cuzk.groth16.keys import CONVENTIONS, Density, ProvingKey, VerifyingKey
from cuzk.groth16.proof import PROOF_BYTES, Proof
from cuzk.groth16.prove import Bases, check_witness, create_proof, prove
from cuzk.groth16.setup import ToxicWaste, setup, setup_with_waste
from cuzk.groth16.verify import PreparedVerifyingKey, prepare_verifying_key, verify, verify_batch

__all__ = [
    "ProvingKey", "VerifyingKey", "Density", "CONVENTIONS", "Proof", "PROOF_BYTES",
    "setup", "setup_with_waste", "ToxicWaste", "prove", "create_proof", "check_witness", "Bases",
    "verify", "verify_batch", "prepare_verifying_key", "PreparedVerifyingKey",
]
