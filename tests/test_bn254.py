"""BN254 through the generic kernels: fields and tower against Python ints, G2 membership, the pairing
against py_ecc's bn128, MSM against naive sums, NTT against a naive DFT.

The group laws (and scalar multiplication against py_ecc) run for BN254 in tests/test_curve_laws.py.
Pairing values are compared with py_ecc EXACTLY: BN254's final exponentiation raises to
(p^12 - 1)/r itself (no extra factor, unlike BLS12-381's 3), and py_ecc's Fq12 basis
Fq[W]/(W^12 - 18 W^6 + 82) maps onto ours (w^6 = xi = 9 + u, u^2 = -1) by u = W^6 - 9.
"""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from py_ecc import optimized_bn128 as pe
from py_ecc.fields import optimized_bn128_FQ12 as PyFQ12

from cuzk import curves
from cuzk.curves.bn254 import fq2, fq12
from cuzk.errors import FieldValueError, NotOnCurveError, UnsupportedCurveError
from cuzk.field import fq2_ints
from cuzk.curves import get as _get_curve
cpu = _get_curve("bls12_381").kernels  # BLS12-381's CPU kernels

BN = curves.get("bn254")
SPEC = BN.spec
P, R = SPEC.fq.modulus, SPEC.fr.modulus
BETA, XI = SPEC.fq2_nonresidue, SPEC.fq6_nonresidue


# ---------------------------------------------------------------- prime fields
@pytest.mark.parametrize("role", ["fr", "fq"])
def test_prime_field_ops_match_ints(role):
    F = BN.Fr if role == "fr" else BN.Fq
    m = F.modulus
    rng = random.Random(254)
    xs = [0, 1, 2, m - 1, m - 2, 2**64, 2**192 - 1, m >> 1] + [rng.randrange(m) for _ in range(40)]
    ys = xs[::-1]
    a, b = F.from_ints(xs), F.from_ints(ys)
    assert F.to_ints(F.add(a, b)) == [(x + y) % m for x, y in zip(xs, ys)]
    assert F.to_ints(F.sub(a, b)) == [(x - y) % m for x, y in zip(xs, ys)]
    assert F.to_ints(F.mul(a, b)) == [x * y % m for x, y in zip(xs, ys)]
    assert F.to_ints(F.sqr(a)) == [x * x % m for x in xs]
    assert F.to_ints(F.batch_inverse(a)) == [pow(x, -1, m) if x else 0 for x in xs]  # through inv
    ok, roots = F.sqrt(F.sqr(a))  # Fq: one exponentiation (p = 3 mod 4); Fr: Tonelli-Shanks (2^28)
    assert ok.all() and F.to_ints(F.sqr(roots)) == [x * x % m for x in xs]
    ok, _ = F.sqrt(F.from_ints([F.params.generator]))  # the generator is a non-residue
    assert not ok[0]
    assert F.limbs == 4 and F.to_bytes(F.from_ints([1])).shape == (1, 32)


# ---------------------------------------------------------------- tower (oracle: schoolbook on ints)
def f2mul(a, b):
    return fq2_ints.mul(a, b, P, BETA)


def f2add(a, b):
    return ((a[0] + b[0]) % P, (a[1] + b[1]) % P)


Z2, O2 = (0, 0), (1, 0)
Z6, O6 = (Z2, Z2, Z2), (O2, Z2, Z2)
O12 = (O6, Z6)


def f6mul(a, b):
    c = [Z2] * 5
    for i in range(3):
        for j in range(3):
            c[i + j] = f2add(c[i + j], f2mul(a[i], b[j]))
    return (f2add(c[0], f2mul(XI, c[3])), f2add(c[1], f2mul(XI, c[4])), c[2])


def f6v(a):  # a * v, v^3 = xi
    return (f2mul(XI, a[2]), a[0], a[1])


def f12mul(a, b):
    c0 = f6mul(a[0], b[0])
    c0 = tuple(f2add(x, y) for x, y in zip(c0, f6v(f6mul(a[1], b[1]))))
    c1 = tuple(f2add(x, y) for x, y in zip(f6mul(a[0], b[1]), f6mul(a[1], b[0])))
    return (c0, c1)


def pow_ref(a, e):
    r = O12
    for bit in bin(e)[2:]:
        r = f12mul(r, r)
        if bit == "1":
            r = f12mul(r, a)
    return r


@njit(cache=True)
def _k12(op, a, b, k):
    x, y = fq12.load_one(a), fq12.load_one(b)
    if op == 0:
        r = fq12.mul(x, y)
    elif op == 1:
        r = fq12.sqr(x)
    elif op == 2:
        r = fq12.inv(x)
    elif op == 3:
        r = fq12.frobenius_map(x, k)
    elif op == 4:
        r = fq12.cyclotomic_sqr(x)
    elif op == 5:
        r = fq12.mul_by_034(x, y[0][0], y[1][0], y[1][1])
    else:
        r = fq12.mul_by_014(x, y[0][0], y[0][1], y[1][1])
    return fq12.store_one(r)


def k12(op, a, b=None, k=0):
    return fq12.to_ints(_k12(op, fq12.from_ints(a), fq12.from_ints(b if b is not None else a), k))


fq_el = st.integers(0, P - 1)
fq2_el = st.tuples(fq_el, fq_el)
fq6_el = st.tuples(fq2_el, fq2_el, fq2_el)
fq12_el = st.tuples(fq6_el, fq6_el)


@settings(max_examples=20)
@given(fq12_el, fq12_el)
def test_fq12_matches_schoolbook(a, b):
    assert k12(0, a, b) == f12mul(a, b)
    assert k12(1, a) == f12mul(a, a)
    if a != (Z6, Z6):
        assert f12mul(a, k12(2, a)) == O12


@settings(max_examples=20)
@given(fq12_el, fq2_el, fq2_el, fq2_el)
def test_sparse_line_products(a, c0, c1, c2):
    # D-type lines (BN254): c0 + c1 w + c2 v w; M-type (BLS12-381): c0 + c1 v + c2 v w
    assert k12(5, a, ((c0, Z2, Z2), (c1, c2, Z2))) == f12mul(a, ((c0, Z2, Z2), (c1, c2, Z2)))
    assert k12(6, a, ((c0, c1, Z2), (Z2, c2, Z2))) == f12mul(a, ((c0, c1, Z2), (Z2, c2, Z2)))


@settings(max_examples=2)
@given(fq12_el)
def test_frobenius_and_cyclotomic_square(a):
    ap = pow_ref(a, P)
    assert k12(3, a, k=1) == ap and k12(3, a, k=2) == pow_ref(ap, P)
    assert k12(3, a, k=12) == a
    if a != (Z6, Z6):
        # a^((p^6 - 1)(p^2 + 1)) is unitary; Granger-Scott squares it
        u = f12mul((a[0], tuple(((-x) % P, (-y) % P) for x, y in a[1])), k12(2, a))
        u = f12mul(k12(3, u, k=2), u)
        assert k12(4, u) == f12mul(u, u)


@njit(cache=True)
def _fq2_sqrt(arr):
    ok, r = fq2.sqrt(fq2.load(arr, 0))
    out = np.empty_like(arr)
    fq2.store(out, 0, r)
    return ok, out


def _fq2_arr(c):
    return BN.G2.from_ints((c, (0, 0)))[0][None]


def test_fq2_sqrt():
    rng = random.Random(9)
    for _ in range(10):
        c = (rng.randrange(P), rng.randrange(P))
        sq = f2mul(c, c)
        ok, r = _fq2_sqrt(_fq2_arr(sq))
        root = BN.G2.to_ints(np.stack([r[0], r[0]]))[0]
        assert ok and f2mul(root, root) == sq
    assert not _fq2_sqrt(_fq2_arr(XI))[0]  # xi is a non-square (the sextic twist needs it)


# ---------------------------------------------------------------- G2 membership (cofactor 2p - r)
def _twist_point_outside_g2(seed):
    rng = random.Random(seed)
    b = SPEC.g2.b
    while True:
        x = (rng.randrange(P), rng.randrange(P))
        rhs = f2add(f2mul(f2mul(x, x), x), b)
        ok, r = _fq2_sqrt(_fq2_arr(rhs))
        if ok:
            return BN.G2.from_ints((x, BN.G2.to_ints(np.stack([r[0], r[0]]))[0]))


def test_g2_subgroup_check_rejects_twist_points():
    G2 = BN.G2
    for seed in range(3):
        q = _twist_point_outside_g2(seed)
        assert G2.is_on_curve(q)
        assert not G2.is_in_subgroup(q) and not G2.is_in_subgroup(q, method="order")
        cleared = G2.mul(q, SPEC.g2.cofactor)
        assert G2.is_in_subgroup(cleared) and G2.is_in_subgroup(cleared, method="order")
    g = G2.random(3, np.random.default_rng(1))
    assert G2.is_in_subgroup(g).all()
    assert BN.G1.is_in_subgroup(BN.G1.random(2, np.random.default_rng(2))).all()  # cofactor 1


# ---------------------------------------------------------------- pairing
def to_py_ecc(e):
    """Our Fq12 in py_ecc's basis: the coefficient (a + b u) of w^k adds a - 9b to W^k and b to W^(k+6)."""
    coeffs = [0] * 12
    for i, half in enumerate(fq12.to_ints(e)):
        for j, (a, b) in enumerate(half):
            k = 2 * j + i
            coeffs[k] = (coeffs[k] + a - 9 * b) % P
            coeffs[k + 6] = (coeffs[k + 6] + b) % P
    return PyFQ12(coeffs)


@njit(cache=True)
def _gt_pow(a, e):
    return fq12.store_one(fq12.cyclotomic_exp(fq12.load_one(a), e))


def gt_pow(a, k):
    k %= R
    return _gt_pow(a, np.array([(k >> (64 * i)) & (2**64 - 1) for i in range(4)], np.uint64))


@pytest.fixture(scope="module")
def gens():
    G1, G2 = BN.G1, BN.G2
    return G1.generator(), G2.generator(), BN.pairing.pairing(G1.generator(), G2.generator())


def test_basis_map_is_a_ring_map():
    rng = random.Random(7)
    a, b = (tuple(tuple((rng.randrange(P), rng.randrange(P)) for _ in range(3)) for _ in range(2)) for _ in range(2))
    A, B = fq12.from_ints(a), fq12.from_ints(b)
    assert to_py_ecc(fq12.from_ints(f12mul(a, b))) == to_py_ecc(A) * to_py_ecc(B)


def test_pairing_equals_py_ecc(gens):
    a, b = 0x1234567890ABCDEF1234567 % R, R - 12345
    G1, G2, pr = BN.G1, BN.G2, BN.pairing
    ours = pr.pairing(G1.mul(gens[0], a), G2.mul(gens[1], b))
    theirs = pe.pairing(pe.multiply(pe.G2, b), pe.multiply(pe.G1, a))
    assert to_py_ecc(ours) == theirs
    assert to_py_ecc(gens[2]) == pe.pairing(pe.G2, pe.G1)


@settings(max_examples=2)
@given(st.integers(1, R - 1), st.integers(1, R - 1))
def test_bilinear_non_degenerate(gens, a, b):
    P1, Q1, e = gens
    one = fq12.from_ints(O12)
    assert not np.array_equal(e, one) and np.array_equal(gt_pow(e, R), one)
    assert np.array_equal(BN.pairing.pairing(BN.G1.mul(P1, a), BN.G2.mul(Q1, b)), gt_pow(e, a * b))


def test_pairing_check_and_prepared_lines(gens):
    G1, G2, pr = BN.G1, BN.G2, BN.pairing
    P1, Q1, _ = gens
    a = 987654321
    aP, aQ, negP = G1.mul(P1, a), G2.mul(Q1, a), G1.neg(P1)
    assert pr.pairing_check([(aP, Q1), (negP, aQ)])
    assert pr.pairing_check([(aP, pr.prepare_g2(Q1)), (negP, pr.prepare_g2(aQ)), (P1, Q1), (negP, Q1)])
    assert not pr.pairing_check([(aP, Q1), (P1, aQ)])
    assert not pr.pairing_check([(aP, Q1)])
    assert pr.pairing_check([(G1.identity(), Q1), (P1, G2.identity())]) and pr.pairing_check([])
    prep = pr.prepare_g2(Q1)
    # 65 NAF digits of 6x + 2 (21 non-zero) and the two Frobenius lines
    assert pr.N_LINES == 88 and prep.lines.shape == (88, 3, 2, 4)
    off = Q1.copy()
    off[1] = Q1[0]
    with pytest.raises(NotOnCurveError, match=r"3/\(9 \+ u\)"):
        pr.prepare_g2(off)
    with pytest.raises(FieldValueError):
        pr.pairing(P1, np.zeros((2, 2, 6), np.uint64))  # a BLS12-381-shaped point


# ---------------------------------------------------------------- MSM and NTT
def _scalars(ints):
    raw = b"".join(int(k).to_bytes(32, "little") for k in ints)
    return np.frombuffer(raw, dtype="<u8").astype(np.uint64).reshape(len(ints), 4)


@pytest.mark.parametrize("name", ["g1", "g2"])
def test_msm_and_batch_mul_match_naive(name):
    group = BN.G1 if name == "g1" else BN.G2
    K = BN.kernels
    rng = random.Random(name)
    ks = [0, 1, 2, R - 1, R - 2, 2**253] + [rng.randrange(R) for _ in range(44)]
    msm = K.msm_g1 if name == "g1" else K.msm_g2
    bases = _scalars(ks[::-1])
    pts = group.mul_many(np.broadcast_to(group.generator(), (len(ks),) + group.point_shape), bases)
    if name == "g1":  # fixed base and both bucket methods: G2's kernels are the same template text
        assert np.array_equal(K.batch_mul_g1(group.generator(), bases), pts)
    pts[7] = 0  # an identity point
    want = group.linear_combination(pts, _scalars(ks))
    assert group.eq(msm(pts, _scalars(ks)), want)
    if name == "g1":
        for method, window in (("affine", 3), ("xyzz", 5)):
            assert group.eq(K.msm(name, pts, _scalars(ks), 2, method=method, window=window), want), method
    with pytest.raises(FieldValueError):
        msm(pts, _scalars([R] * len(ks)))  # scalars must be < r (BN254's)


def _naive_dft(coeffs, w, shift=1):
    out = []
    for i in range(len(coeffs)):
        x = shift * pow(w, i, R) % R
        acc = 0
        for c in reversed(coeffs):
            acc = (acc * x + c) % R
        out.append(acc)
    return out


def test_ntt_matches_naive_dft_and_round_trips():
    Fr, K = BN.Fr, BN.kernels
    rng = random.Random(28)
    for log_n in (1, 3, 6):
        v = [rng.randrange(R) for _ in range(1 << log_n)]
        w = SPEC.fr.root_of_unity_for(log_n)  # generator 5, snarkjs' convention
        assert Fr.to_ints(K.ntt(Fr.from_ints(v))) == _naive_dft(v, w)
        assert Fr.to_ints(K.ntt(Fr.from_ints(v), shift=7)) == _naive_dft(v, w, 7)
    x = Fr.random(1 << 13, np.random.default_rng(3))
    y1, y2 = K.ntt(x, threads=1), K.ntt(x, threads=2)
    assert np.array_equal(y1, y2)
    assert np.array_equal(K.ntt(y2, inverse=True, threads=2), x)
    assert np.array_equal(K.ntt(K.ntt(x, shift=5), inverse=True, shift=5), x)
    assert Fr.to_ints(K.h_pointwise(Fr.from_ints([2]), Fr.from_ints([5]), Fr.from_ints([1]), 3)) == [27]
    assert K.to_canonical(Fr.from_ints([3])).tolist() == [[3, 0, 0, 0]]
    with pytest.raises(FieldValueError):
        SPEC.fr.root_of_unity_for(29)  # 2-adicity 28


def test_no_point_encoding_yet():
    from cuzk.curve.encoding import point_from_bytes, point_to_bytes

    with pytest.raises(UnsupportedCurveError, match="no zcash"):
        point_to_bytes(BN.G1, BN.G1.identity())
    with pytest.raises(UnsupportedCurveError):
        point_from_bytes(BN.G2, bytes(64))


def test_every_curve_has_the_same_cpu_kernel_interface():
    names = {n for n in dir(cpu) if not n.startswith("_")}
    assert names == {n for n in dir(BN.kernels) if not n.startswith("_")}
    assert all(callable(getattr(BN.kernels, n)) for n in ("ntt", "msm_g1", "msm_bits_g2", "batch_mul_g2", "to_canonical"))
