"""The reference Groth16 prover (bellperson's algebra, polynomial division instead of NTTs).

For the assignment z = [1, public..., private...] and blinding scalars r, s:

* h(x) = (A(x)·B(x) − C(x)) / Z(x), with A(x) = Σ z_i·u_i(x) etc. (exact division);
* A = α + Σ z_i·a_i + r·δ                                          (G1)
* B = β + Σ z_i·b_i + s·δ                                          (G2, and in G1 for C)
* C = Σ_private z_j·l_j + Σ h_k·h_query_k + s·A + r·B_g1 − r·s·δ   (G1)

:func:`create_proof` is the deterministic core; :func:`prove` draws r and s from :mod:`secrets`.
A proof serialises to 192 bytes: compressed A (48) ‖ B (96) ‖ C (48), zcash format.

    >>> from cuzk.reference.qap import ReferenceR1CS
    >>> from cuzk.reference.setup import generate_parameters, ToxicWaste
    >>> r1cs = ReferenceR1CS([({1: 1}, {1: 1}, {2: 1})], n_public=1, n_vars=3)   # x·x = y, x public
    >>> pk, vk = generate_parameters(r1cs, ToxicWaste(5, 2, 3, 7, 11))
    >>> proof = create_proof(pk, [1, 3, 9], r=1, s=2)
    >>> len(proof_to_bytes(proof)), proof_from_bytes(proof_to_bytes(proof)) == proof
    (192, True)
"""

from __future__ import annotations

import secrets

import attrs

from cuzk.errors import InputError, PointEncodingError, UnsatisfiedConstraint
from cuzk.reference import points as P
from cuzk.reference.curve import ref_curve
from cuzk.reference.qap import check_witness

__all__ = ["Proof", "create_proof", "prove", "proof_to_bytes", "proof_from_bytes", "PROOF_BYTES"]

PROOF_BYTES = 192  # 48 (G1) + 96 (G2) + 48 (G1), compressed


@attrs.frozen
class Proof:
    """A Groth16 proof: py_ecc points, canonical (Z = 1), so ``==`` is point equality.

    Attributes:
        a: G1 point A.
        b: G2 point B.
        c: G1 point C.
        curve: the curve's canonical name (default BLS12-381; :mod:`cuzk.reference.curve`).
    """

    a: tuple = attrs.field(converter=P.canonical)
    b: tuple = attrs.field(converter=P.canonical)
    c: tuple = attrs.field(converter=P.canonical)
    curve: str = attrs.field(default=None, converter=lambda c: ref_curve(c).name)

    def to_bytes(self) -> bytes:
        """Same as :func:`proof_to_bytes`."""
        return proof_to_bytes(self)

    def to_affine_ints(self) -> tuple:
        """``((ax, ay), ((bx0, bx1), (by0, by1)), (cx, cy))`` as ints; zeros for infinity."""
        return (P.g1_affine(self.a), P.g2_affine(self.b), P.g1_affine(self.c))


def proof_to_bytes(proof: Proof) -> bytes:
    """192 bytes: compressed A ‖ B ‖ C in the zcash format (bellperson's proof layout).

    Raises:
        InputError: a proof of a curve without the zcash encoding (only BLS12-381 has it).

    >>> proof_to_bytes(Proof(P.G1, P.G2, P.Z1)).hex()[-96:-92]
    'c000'
    """
    if proof.curve != ref_curve(None).name:
        raise InputError(f"the zcash proof encoding is BLS12-381's; this proof is over {proof.curve}")
    return P.g1_compress(proof.a) + P.g2_compress(proof.b) + P.g1_compress(proof.c)


def proof_from_bytes(data: bytes, check_subgroup: bool = True) -> Proof:
    """Inverse of :func:`proof_to_bytes`.

    Raises:
        PointEncodingError (or its subclasses NotOnCurveError, NotInSubgroupError): the bytes
            are not 192 or a point is malformed; the message names A, B or C.

    >>> proof_from_bytes(bytes(192))
    Traceback (most recent call last):
    ...
    cuzk.errors.PointEncodingError: proof A: bad compressed G1 point: c_flag should be 1
    """
    if len(data) != PROOF_BYTES:
        raise PointEncodingError(f"a proof is {PROOF_BYTES} bytes, got {len(data)}")
    parts = {}
    layout = (("A", 0, 48, P.g1_decompress), ("B", 48, 144, P.g2_decompress), ("C", 144, 192, P.g1_decompress))
    for name, lo, hi, decode in layout:
        try:
            parts[name] = decode(bytes(data[lo:hi]), check_subgroup=check_subgroup)
        except PointEncodingError as e:
            raise type(e)(f"proof {name}: {e}") from None
    return Proof(parts["A"], parts["B"], parts["C"])


def _scalar(name: str, value, r: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < r:
        raise InputError(f"{name} must be an int with 0 <= {name} < r, got {value!r}")
    return value


def create_proof(pk, z, r: int, s: int) -> Proof:
    """Deterministic Groth16 proof for the full assignment ``z`` with blinding ``r``, ``s``.

    Args:
        pk: a :class:`~cuzk.reference.setup.ProvingKey`.
        z: ``[1, public..., private...]`` as canonical Fr ints.
        r, s: blinding scalars in 0..r−1 (any value gives a valid proof; random ones make it
            zero-knowledge).

    Raises:
        InputError: a malformed assignment or scalar.
        UnsatisfiedConstraint: z fails a constraint (``index`` = the first failing row).
    """
    cv = ref_curve(pk.vk.curve)
    r, s = _scalar("r", r, cv.r), _scalar("s", s, cv.r)
    qap = pk.qap
    z = qap.r1cs.check_assignment(z)
    row = check_witness(qap.r1cs, z)
    if row is not None:
        raise UnsatisfiedConstraint(f"witness does not satisfy constraint {row}", index=row)
    h = qap.compute_h(z)
    vk = pk.vk
    n_in = qap.r1cs.n_public + 1

    a = cv.add(cv.add(vk.alpha_g1, cv.msm(pk.a, z, cv.Z1)), cv.g1_mul(r, vk.delta_g1))
    b_g2 = cv.add(cv.add(vk.beta_g2, cv.msm(pk.b_g2, z, cv.Z2)), cv.g2_mul(s, vk.delta_g2))
    b_g1 = cv.add(cv.add(vk.beta_g1, cv.msm(pk.b_g1, z, cv.Z1)), cv.g1_mul(s, vk.delta_g1))
    c = cv.msm(pk.l, z[n_in:], cv.Z1)
    c = cv.add(c, cv.msm(pk.h, h, cv.Z1))
    c = cv.add(c, cv.g1_mul(s, a))
    c = cv.add(c, cv.g1_mul(r, b_g1))
    c = cv.add(c, cv.g1_mul(-r * s, vk.delta_g1))
    return Proof(a, b_g2, c, curve=cv.name)


def prove(pk, z) -> Proof:
    """:func:`create_proof` with r and s drawn uniformly from :mod:`secrets`."""
    r = ref_curve(pk.vk.curve).r
    return create_proof(pk, z, secrets.randbelow(r), secrets.randbelow(r))
