"""Slow, obviously-correct Groth16 in pure Python: the oracle for cuzk's fast prover.

Python ints for Fr, py_ecc for curve arithmetic, pairing and (BLS12-381) zcash point
compression; nothing from cuzk's Numba/CUDA paths. The curve is a parameter of the R1CS
(``ReferenceR1CS(..., curve="bn254")``; default BLS12-381) and travels into the keys and proofs;
:mod:`cuzk.reference.curve` lists the curves py_ecc has (BLS12-381 and BN254). It follows bellperson's conventions exactly (extra input rows in
the QAP, ω from generator 7, H query τ^i·Z(τ)/δ, proof layout A ‖ B ‖ C), so for the same toxic
waste and (r, s) a fast proof must equal the reference proof byte for byte. Tiny circuits only:
a G2 scalar multiplication takes ~50 ms and a verification ~2 s.

    >>> from cuzk import reference as ref
    >>> r1cs = ref.ReferenceR1CS([({1: 1}, {1: 1}, {2: 1})], n_public=1, n_vars=3)   # x·x = y
    >>> pk, vk = ref.generate_parameters(r1cs, ref.ToxicWaste(5, 2, 3, 7, 11))
    >>> proof = ref.create_proof(pk, [1, 3, 9], r=1, s=2)
    >>> ref.verify(vk, [3], proof), len(ref.proof_to_bytes(proof))
    (True, 192)
"""

from cuzk.reference.curve import RefCurve, ref_curve
from cuzk.reference.prove import PROOF_BYTES, Proof, create_proof, proof_from_bytes, proof_to_bytes, prove
from cuzk.reference.qap import QAP, QapEvaluation, ReferenceR1CS, check_witness, domain_size, evaluate_qap_at, from_r1cs
from cuzk.reference.setup import ProvingKey, ToxicWaste, VerifyingKey, generate_parameters, setup
from cuzk.reference.verify import public_input_point, verify

__all__ = [
    "RefCurve",
    "ref_curve",
    "ReferenceR1CS",
    "from_r1cs",
    "check_witness",
    "domain_size",
    "QAP",
    "QapEvaluation",
    "evaluate_qap_at",
    "ToxicWaste",
    "ProvingKey",
    "VerifyingKey",
    "generate_parameters",
    "setup",
    "Proof",
    "PROOF_BYTES",
    "create_proof",
    "prove",
    "proof_to_bytes",
    "proof_from_bytes",
    "verify",
    "public_input_point",
]
