"""BLS12-377 from its spec entry alone: fields, tower, groups, pairing, NTT, MSM and a Groth16 proof.

py_ecc has no BLS12-377, so the checks are against Python-int definitions and algebraic
properties: the spec's numbers against the BLS12 polynomials and Zexe's published moduli, the
G2 generator re-derived, Fq2 arithmetic against ``cuzk.field.fq2_ints`` (u² = −5), the
pairing's bilinearity, non-degeneracy and order r, subgroup checks against r·P, the NTT
against a naive DFT on Python ints, the MSM against a sum of scalar multiplications, and a
proof that verifies while a tampered statement does not. Sizes are small: a third curve's Numba
compile is the cost here.
"""

import numpy as np
import pytest

from cuzk import curves
from cuzk.circuit import Circuit
from cuzk.curves import BLS12_377, families
from cuzk.field import fq2_ints
from cuzk.groth16 import ToxicWaste, create_proof, setup_with_waste, verify
from cuzk.synth import Synthesizer

C = curves.get("bls12_377")
P, R = BLS12_377.fq.modulus, BLS12_377.fr.modulus
BETA = BLS12_377.fq2_nonresidue


def test_spec_numbers():
    s = BLS12_377
    # Zexe (eprint 2018/962) / arkworks' moduli, typed here as an independent check of the seed
    assert R == 0x12AB655E9A2CA55660B44D1E5C37B00159AA76FED00000010A11800000000001
    assert P == 0x01AE3A4617C510EAC63B05C06CA1493B1A22D9F300F5138F1EF3622FBA094800170B5D44300000008508C00000000001
    assert s.fr.two_adicity == 47 and s.fq.two_adicity == 46
    assert s.fr.limbs == 4 and s.fq.limbs == 6 and BETA == P - 5 and s.fq6_nonresidue == (0, 1)
    assert curves.resolve("BLS12-377") is s and curves.get("bls12377") is C


def _fq2_sqrt(a):
    """A square root in Fq2 on Python ints (the complex method for u² = β), or None."""
    n = (a[0] * a[0] - BETA * a[1] * a[1]) % P
    if pow(n, (P - 1) // 2, P) != 1:
        return None
    s = _fq_sqrt(n)
    for sg in (s, P - s):
        h = (a[0] + sg) * pow(2, -1, P) % P
        if h and pow(h, (P - 1) // 2, P) == 1:
            x0 = _fq_sqrt(h)
            root = (x0, a[1] * pow(2 * x0, -1, P) % P)
            if fq2_ints.mul(root, root, P, BETA) == (a[0] % P, a[1] % P):
                return root
    return None


def _affine_add(p1, p2):
    if p1 is None:
        return p2
    if p2 is None:
        return p1
    (x1, y1), (x2, y2) = p1, p2
    if x1 == x2:
        if fq2_ints.mul(y1, (1, 0), P, BETA) == tuple((-c) % P for c in y2):
            return None
        lam = fq2_ints.mul(fq2_ints.mul((3, 0), fq2_ints.mul(x1, x1, P, BETA), P, BETA),
                           fq2_ints.inv(fq2_ints.mul((2, 0), y1, P, BETA), P, BETA), P, BETA)
    else:
        lam = fq2_ints.mul(tuple((b - a) % P for a, b in zip(y1, y2)),
                           fq2_ints.inv(tuple((b - a) % P for a, b in zip(x1, x2)), P, BETA), P, BETA)
    l2 = fq2_ints.mul(lam, lam, P, BETA)
    x3 = tuple((l2[i] - x1[i] - x2[i]) % P for i in range(2))
    t = fq2_ints.mul(lam, tuple((x1[i] - x3[i]) % P for i in range(2)), P, BETA)
    return x3, tuple((t[i] - y1[i]) % P for i in range(2))


def _affine_mul(pt, k):
    acc = None
    for bit in bin(k)[2:]:
        acc = _affine_add(acc, acc)
        if bit == "1":
            acc = _affine_add(acc, pt)
    return acc


def _pt(group_params):
    g = group_params.generator
    return tuple(tuple(c) + (0,) * (2 - len(c)) for c in g)


def test_generators_are_in_the_subgroup_and_the_endomorphisms_hold():
    for g in (BLS12_377.g1, BLS12_377.g2):
        gen = _pt(g)
        assert _affine_mul(gen, R) is None
        assert _affine_mul(gen, g.cofactor) is not None or g.cofactor == 1
    # G1: φ(x, y) = (ω x, y) = −x²·P; G2: ψ(Q) = x·Q
    g1 = _pt(BLS12_377.g1)
    phi = (fq2_ints.mul(g1[0], BLS12_377.g1.endo_x + (0,), P, BETA), g1[1])
    assert phi == _affine_mul(g1, (-BLS12_377.x**2) % R)
    g2 = _pt(BLS12_377.g2)
    conj = lambda a: (a[0], (-a[1]) % P)  # noqa: E731
    psi = (fq2_ints.mul(conj(g2[0]), BLS12_377.g2.endo_x, P, BETA), fq2_ints.mul(conj(g2[1]), BLS12_377.g2.endo_y, P, BETA))
    assert psi == _affine_mul(g2, BLS12_377.x % R)


def test_g2_generator_is_the_documented_derivation():
    """h2·(2 + u, y): x = c + u for c = 0, 1, 2, ..., the first on the twist; y either root."""
    b2 = families.twist_b(1, (0, 1), "D", P, BETA)
    for c in range(10):
        x = (c, 1)
        rhs = fq2_ints.mul(fq2_ints.mul(x, x, P, BETA), x, P, BETA)
        y = _fq2_sqrt(((rhs[0] + b2[0]) % P, (rhs[1] + b2[1]) % P))
        if y is not None:
            break
    assert c == 2
    got = _affine_mul((x, y), BLS12_377.g2.cofactor)
    gen = _pt(BLS12_377.g2)
    assert got[0] == gen[0] and got[1] in (gen[1], tuple((-v) % P for v in gen[1]))


@pytest.fixture(scope="module")
def rng():
    return np.random.default_rng(377)


def test_fq2_matches_python_ints(rng):
    from cuzk.curves.bls12_377 import fq2 as k
    from numba import njit

    @njit
    def ops(a, b):
        x, y = k.load(a, 0), k.load(b, 0)
        return k.mul(x, y), k.sqr(x), k.inv(x), k.mul_by_nonresidue(x), k.sqrt(k.sqr(y))

    Fq = C.Fq
    for _ in range(3):
        av = [int(v) for v in rng.integers(0, 2**62, 2)]
        bv = [int(v) for v in rng.integers(0, 2**62, 2)]
        a = Fq.from_ints(av).reshape(1, 2, -1)
        b = Fq.from_ints(bv).reshape(1, 2, -1)
        m, s, i, nr, (ok, root) = ops(a, b)
        ints = lambda e: tuple(Fq.to_ints(np.array(e, dtype=np.uint64)))  # noqa: E731
        A, B = tuple(av), tuple(bv)  # noqa: N806
        assert ints(m) == fq2_ints.mul(A, B, P, BETA) and ints(s) == fq2_ints.mul(A, A, P, BETA)
        assert ints(i) == fq2_ints.inv(A, P, BETA) and ints(nr) == fq2_ints.mul(A, (0, 1), P, BETA)
        assert ok and fq2_ints.mul(ints(root), ints(root), P, BETA) == fq2_ints.mul(B, B, P, BETA)


def test_pairing_is_bilinear_non_degenerate_and_of_order_r():
    G1, G2, pr = C.G1, C.G2, C.pairing  # noqa: N806
    g1, g2 = G1.generator(), G2.generator()
    a, b = 0x1234567, 0x7654321
    e = pr.pairing(g1, g2)
    one = pr.pairing(G1.identity(), g2)
    assert not np.array_equal(e, one)  # non-degenerate
    assert np.array_equal(pr.pairing(G1.mul(g1, a), G2.mul(g2, b)), pr.pairing(G1.mul(g1, a * b), g2))
    assert np.array_equal(pr.pairing(G1.mul(g1, a * b), g2), pr.pairing(g1, G2.mul(g2, a * b)))
    assert pr.pairing_check([(G1.mul(g1, a), G2.mul(g2, b)), (G1.neg(G1.mul(g1, a * b % R)), g2)])
    assert not pr.pairing_check([(G1.mul(g1, a), G2.mul(g2, b)), (G1.neg(G1.mul(g1, a * b + 1)), g2)])
    assert np.array_equal(pr.pairing(G1.mul(g1, R - 1), g2), pr.pairing(G1.neg(g1), g2))  # e^r = 1


def test_subgroup_checks_against_r_times_p():
    G1 = C.G1  # noqa: N806
    # a curve point outside G1: the first x with x³ + 1 a square, not multiplied by the cofactor
    x = 2
    while pow(x**3 + 1, (P - 1) // 2, P) != 1:
        x += 1
    y = _fq_sqrt(x**3 + 1)
    assert _affine_mul(((x, 0), (y, 0)), R) is not None  # r·P ≠ O: outside G1
    pts = np.stack([G1.from_ints((x, y)), G1.generator()])
    assert G1.is_on_curve(pts).tolist() == [True, True]
    assert G1.is_in_subgroup(pts).tolist() == [False, True]
    assert G1.is_in_subgroup(pts, method="order").tolist() == [False, True]


def _fq_sqrt(a):
    # Tonelli–Shanks on Python ints (P − 1 = q·2^46)
    q, s = P - 1, 0
    while q % 2 == 0:
        q, s = q // 2, s + 1
    m, c, t, r = s, pow(BLS12_377.fq.generator, q, P), pow(a, q, P), pow(a, (q + 1) // 2, P)
    while t != 1:
        i, t2 = 0, t
        while t2 != 1:
            t2, i = t2 * t2 % P, i + 1
        b = pow(c, 1 << (m - i - 1), P)
        m, c, t, r = i, b * b % P, t * b * b % P, r * b % P
    return r


def test_ntt_equals_the_naive_dft(rng):
    n = 16
    vals = [int(v) for v in rng.integers(0, 2**62, n)]
    out = C.Fr.to_ints(C.kernels.ntt(C.Fr.from_ints(vals)))
    w = BLS12_377.fr.root_of_unity_for(4)
    assert out == [sum(v * pow(w, i * j, R) for j, v in enumerate(vals)) % R for i in range(n)]
    back = C.Fr.to_ints(C.kernels.ntt(C.Fr.from_ints(out), inverse=True))
    assert back == vals


def test_msm_equals_the_sum_of_products(rng):
    G1, K = C.G1, C.kernels  # noqa: N806
    n = 8
    pts = K.batch_mul_g1(G1.generator(), K.to_canonical(C.Fr.from_ints(list(range(1, n + 1)))))
    ks = [int(v) for v in rng.integers(0, 2**62, n)]
    got = K.msm_g1(pts, K.to_canonical(C.Fr.from_ints(ks)))
    assert G1.eq(got, G1.mul(G1.generator(), sum((i + 1) * k for i, k in enumerate(ks)) % R))


class Cube(Circuit):
    def define(self, cs, x, out):
        x, out = cs.private(x), cs.public(out)
        cs.assert_equal(x * x * x + x + 5, out)


def test_groth16_proof_verifies_and_a_wrong_statement_does_not():
    synth = Synthesizer(Cube(), curve="bls12_377")
    pk = setup_with_waste(synth.r1cs, ToxicWaste(tau=123456789, alpha=11, beta=13, gamma=17, delta=19))
    w = synth.synthesize(x=3, out=35)
    proof = create_proof(pk, w, 5, 7)
    assert proof.curve == pk.vk.curve == "bls12_377"
    assert verify(pk.vk, [35], proof) and not verify(pk.vk, [36], proof)
