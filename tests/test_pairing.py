"""Optimal ate pairing: bilinearity, non-degeneracy, the product check, and agreement with two
independent implementations: py_ecc (up to its exponent, see test_matches_py_ecc) and the
zkcrypto bls12_381 crate's published e(G1, G2).

Test points are made with py_ecc (slow; a few per module) so these tests do not depend on
cuzk's own point code.
"""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from py_ecc import optimized_bls12_381 as pe
from py_ecc.fields import optimized_bls12_381_FQ12 as PyFQ12

from cuzk.curves.bls12_381 import pairing as pr
from cuzk.errors import FieldValueError, NotOnCurveError
from cuzk.curves.bls12_381 import fq12
from cuzk.field import FQ, FR

P, R = FQ.modulus, FR.modulus


def _mont_limbs(x):
    m = x * FQ.r % P
    return [(m >> (64 * i)) & (2**64 - 1) for i in range(6)]


def g1_arr(pt):
    """py_ecc G1 point -> (2, 6) uint64 Montgomery (infinity -> zeros)."""
    if pe.is_inf(pt):
        return np.zeros((2, 6), np.uint64)
    x, y = pe.normalize(pt)
    return np.array([_mont_limbs(int(x.n)), _mont_limbs(int(y.n))], np.uint64)


def g2_arr(pt):
    """py_ecc G2 point -> (2, 2, 6) uint64 Montgomery (infinity -> zeros)."""
    if pe.is_inf(pt):
        return np.zeros((2, 2, 6), np.uint64)
    x, y = pe.normalize(pt)
    return np.array([[_mont_limbs(int(c)) for c in v.coeffs] for v in (x, y)], np.uint64)


def to_py_ecc(e):
    """Our Fq12 (w^2 = v, v^3 = 1 + u, u^2 = -1) in py_ecc's basis Fq[W]/(W^12 - 2W^6 + 2).

    There W^6 = 1 + i with i^2 = -1, so W plays our w (w^6 = xi = 1 + u) and u = W^6 - 1:
    the coefficient (a + b u) of w^k (k = 2j + i for c_i.c_j) adds a - b to W^k and b to W^(k+6).
    """
    coeffs = [0] * 12
    for i, half in enumerate(fq12.to_ints(e)):
        for j, (a, b) in enumerate(half):
            k = 2 * j + i
            coeffs[k] = (coeffs[k] + a - b) % P
            coeffs[k + 6] = (coeffs[k + 6] + b) % P
    return PyFQ12(coeffs)


@njit(cache=True)
def _gt_pow(a, e):
    return fq12.store_one(fq12.cyclotomic_exp(fq12.load_one(a), e))


def gt_pow(a, k):
    k %= R
    return _gt_pow(a, np.array([(k >> (64 * i)) & (2**64 - 1) for i in range(4)], np.uint64))


def gt_mul(a, b):
    return _gt_mul(a, b)


@njit(cache=True)
def _gt_mul(a, b):
    return fq12.store_one(fq12.mul(fq12.load_one(a), fq12.load_one(b)))


ONE = fq12.from_ints((((1, 0), (0, 0), (0, 0)), ((0, 0), (0, 0), (0, 0))))

# zkcrypto/bls12_381 src/pairings.rs, Gt::generator() = pairing(G1 generator, G2 generator):
# Montgomery limbs (R = 2^384, as ours) of c0.c0.c0, c0.c0.c1, c0.c1.c0, ..., c1.c2.c1.
ZKCRYPTO_GT_GENERATOR = np.array(
    [
        [0x1972E433A01F85C5, 0x97D32B76FD772538, 0xC8CE546FC96BCDF9, 0xCEF63E7366D40614, 0xA611342781843780, 0x13F3448A3FC6D825],
        [0xD26331B02E9D6995, 0x9D68A482F7797E7D, 0x9C9B29248D39EA92, 0xF4801CA2E13107AA, 0xA16C0732BDBCB066, 0x083CA4AFBA360478],
        [0x59E261DB0916B641, 0x2716B6F4B23E960D, 0xC8E55B10A0BD9C45, 0x0BDB0BD99C4DEDA8, 0x8CF89EBF57FDAAC5, 0x12D6B7929E777A5E],
        [0x5FC85188B0E15F35, 0x34A06E3A8F096365, 0xDB3126A6E02AD62C, 0xFC6F5AA97D9A990B, 0xA12F55F5EB89C210, 0x1723703A926F8889],
        [0x93588F2971828778, 0x43F65B8611AB7585, 0x3183AAF5EC279FDF, 0xFA73D7E18AC99DF6, 0x64E176A6A64C99B0, 0x179FA78C58388F1F],
        [0x672A0A11CA2AEF12, 0x0D11B9B52AA3F16B, 0xA44412D0699D056E, 0xC01D0177221A5BA5, 0x66E0CEDE6C735529, 0x05F5A71E9FDDC339],
        [0xD30A88A1B062C679, 0x5AC56A5D35FC8304, 0xD0C834A6A81F290D, 0xCD5430C2DA3707C7, 0xF0C27FF780500AF0, 0x09245DA6E2D72EAE],
        [0x9F2E0676791B5156, 0xE2D1C8234918FE13, 0x4C9E459F3C561BF4, 0xA3E85E53B9D3E3C1, 0x820A121E21A70020, 0x15AF618341C59ACC],
        [0x7C95658C24993AB1, 0x73EB38721CA886B9, 0x5256D749477434BC, 0x8BA41902EA504A8B, 0x04A3D3F80C86CE6D, 0x18A64A87FB686EAA],
        [0xBB83E71BB920CF26, 0x2A5277AC92A73945, 0xFC0EE59F94F046A0, 0x7158CDF3786058F7, 0x7CC1061B82F945F6, 0x03F847AA9FDBE567],
        [0x8078DBA56134E657, 0x1CD7EC9A43998A6E, 0xB1AA599A1A993766, 0xC9A0F62F0842EE44, 0x8E159BE3B605DFFA, 0x0C86BA0D4AF13FC2],
        [0xE80FF2A06A52FFB1, 0x7694CA48721A906C, 0x7583183E03B08514, 0xF567AFDD40CEE4E2, 0x9A6D96D2E526A5FC, 0x197E9F49861F2242],
    ],
    dtype=np.uint64,
).reshape(2, 3, 2, 6)


@pytest.fixture(scope="module")
def pts():
    rng = random.Random(20261129)
    a, b = rng.randrange(1, R), rng.randrange(1, R)
    return {
        "a": a,
        "b": b,
        "P": g1_arr(pe.G1),
        "Q": g2_arr(pe.G2),
        "negP": g1_arr(pe.neg(pe.G1)),
        "aP": g1_arr(pe.multiply(pe.G1, a)),
        "aQ": g2_arr(pe.multiply(pe.G2, a)),
        "bQ_pe": pe.multiply(pe.G2, b),
        "aP_pe": pe.multiply(pe.G1, a),
    }


@pytest.fixture(scope="module")
def e_gen(pts):
    return pr.pairing(pts["P"], pts["Q"])


def test_generator_pairing_matches_zkcrypto(e_gen):
    assert np.array_equal(e_gen, ZKCRYPTO_GT_GENERATOR)


def test_non_degenerate_and_order_r(e_gen):
    assert not np.array_equal(e_gen, ONE)
    assert np.array_equal(gt_pow(e_gen, R - 1), _gt_inv_via_conj(e_gen))
    assert np.array_equal(gt_mul(gt_pow(e_gen, R - 1), e_gen), ONE)  # e^r = 1


def _gt_inv_via_conj(e):
    # GT elements are unitary: the inverse is the conjugate (w -> -w)
    ints = fq12.to_ints(e)
    return fq12.from_ints((ints[0], tuple(((-c0) % P, (-c1) % P) for c0, c1 in ints[1])))


def test_matches_py_ecc(pts):
    # py_ecc raises the Miller value over |x| (not conjugated, i.e. its inverse) to (p^12-1)/r;
    # we conjugate and raise to 3(p^12-1)/r, so ours == py_ecc^-3 == py_ecc^(r-3).
    bQ = g2_arr(pts["bQ_pe"])
    ours = pr.pairing(pts["aP"], bQ)
    theirs = pe.pairing(pts["bQ_pe"], pts["aP_pe"])
    assert to_py_ecc(ours) == theirs ** (R - 3)


def test_basis_map_is_a_ring_map():
    # the to_py_ecc map must respect products for the py_ecc comparison to mean anything
    rng = random.Random(7)
    a, b = (fq12.from_ints(tuple(tuple((rng.randrange(P), rng.randrange(P)) for _ in range(3)) for _ in range(2)))
            for _ in range(2))
    assert to_py_ecc(gt_mul(a, b)) == to_py_ecc(a) * to_py_ecc(b)


@settings(max_examples=3)
@given(st.integers(1, R - 1), st.integers(1, R - 1))
def test_bilinearity(e_gen, a, b):
    aP = g1_arr(pe.multiply(pe.G1, a))
    bQ = g2_arr(pe.multiply(pe.G2, b))
    assert np.array_equal(pr.pairing(aP, bQ), gt_pow(e_gen, a * b))


def test_scalar_moves_between_arguments(pts, e_gen):
    e1 = pr.pairing(pts["aP"], pts["Q"])
    assert np.array_equal(e1, pr.pairing(pts["P"], pts["aQ"]))
    assert np.array_equal(e1, gt_pow(e_gen, pts["a"]))
    assert np.array_equal(pr.pairing(pts["negP"], pts["Q"]), _gt_inv_via_conj(e_gen))


def test_pairing_check(pts):
    P, Q, negP, aP, aQ = pts["P"], pts["Q"], pts["negP"], pts["aP"], pts["aQ"]
    assert pr.pairing_check([(aP, Q), (negP, aQ)])
    assert pr.pairing_check([(aP, pr.prepare_g2(Q)), (negP, pr.prepare_g2(aQ))])
    assert not pr.pairing_check([(aP, Q), (P, aQ)])  # sign flipped
    assert not pr.pairing_check([(P, Q), (negP, aQ)])  # wrong scalar
    assert not pr.pairing_check([(aP, Q)])
    # four pairs, as in Groth16: e(aP, Q) e(-P, aQ) e(P, Q) e(-P, Q) = 1
    assert pr.pairing_check([(aP, Q), (negP, aQ), (P, Q), (negP, Q)])
    assert not pr.pairing_check([(aP, Q), (negP, aQ), (P, Q), (P, Q)])


def test_infinity_contributes_one(pts):
    P, Q, aP, negP, aQ = pts["P"], pts["Q"], pts["aP"], pts["negP"], pts["aQ"]
    o1, o2 = np.zeros((2, 6), np.uint64), np.zeros((2, 2, 6), np.uint64)
    assert np.array_equal(pr.pairing(o1, Q), ONE)
    assert np.array_equal(pr.pairing(P, o2), ONE)
    assert np.array_equal(pr.pairing(o1, o2), ONE)
    assert pr.prepare_g2(o2).is_infinity
    assert pr.pairing_check([])
    assert pr.pairing_check([(o1, Q), (P, o2)])
    assert pr.pairing_check([(aP, Q), (o1, aQ), (negP, aQ), (P, pr.prepare_g2(o2))])


def test_multi_miller_loop_is_product(pts, e_gen):
    f = pr.multi_miller_loop([(pts["P"], pts["Q"]), (pts["aP"], pr.prepare_g2(pts["Q"]))])
    assert np.array_equal(pr.final_exponentiation(f), gt_pow(e_gen, 1 + pts["a"]))
    assert np.array_equal(pr.final_exponentiation(pr.multi_miller_loop([])), ONE)


def test_prepared_lines(pts):
    prep = pr.prepare_g2(pts["Q"])
    assert prep.lines.shape == (pr.N_LINES, 3, 2, 6) and not prep.lines.flags.writeable
    assert pr.N_LINES == 68  # 63 doublings + 5 additions for |x| = 0xd201000000010000
    assert np.array_equal(pr.pairing(pts["P"], prep), pr.pairing(pts["P"], pts["Q"]))


def test_views_and_readonly_inputs(pts, e_gen):
    big = np.stack([pts["P"], pts["aP"]])
    big.flags.writeable = False
    q2 = np.stack([pts["Q"], pts["Q"]], axis=1)[:, 0]  # non-contiguous view of Q
    assert not q2.flags.c_contiguous
    assert np.array_equal(pr.pairing(big[0], q2), e_gen)
    f = pr.multi_miller_loop([(big[0], q2)])
    f.flags.writeable = False
    assert np.array_equal(pr.final_exponentiation(f), e_gen)


def test_bad_inputs(pts):
    P, Q = pts["P"], pts["Q"]
    with pytest.raises(FieldValueError):
        pr.pairing(P.astype(np.int64), Q)
    with pytest.raises(FieldValueError):
        pr.pairing(P, Q[0])
    with pytest.raises(FieldValueError):
        pr.pairing_check([P])
    big = P.copy()
    big[0] = [(FQ.modulus >> (64 * i)) & (2**64 - 1) for i in range(6)]  # x limbs := p (unreduced)
    with pytest.raises(FieldValueError):
        pr.pairing(big, Q)
    off = P.copy()
    off[1] = P[0]
    with pytest.raises(NotOnCurveError):
        pr.pairing(off, Q)
    offq = Q.copy()
    offq[1] = Q[0]
    with pytest.raises(NotOnCurveError):
        pr.prepare_g2(offq)
    with pytest.raises(NotOnCurveError):
        pr.pairing_check([(off, np.zeros((2, 2, 6), np.uint64))])  # checked even when Q = O
    with pytest.raises(FieldValueError):
        pr.final_exponentiation(np.zeros((12, 6), np.uint64))


def test_bad_pair_containers_and_unreduced_fq12(pts):
    # pairing_check(None) was a bare TypeError; final_exponentiation computed with limbs >= p
    for pairs in (None, 5, pts["P"], pr.prepare_g2(pts["Q"])):
        with pytest.raises(FieldValueError, match="iterable"):
            pr.pairing_check(pairs)
    with pytest.raises(FieldValueError, match=">= p"):
        pr.final_exponentiation(np.full((2, 3, 2, 6), 2**64 - 1, np.uint64))
