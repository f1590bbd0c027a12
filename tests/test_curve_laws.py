"""Group laws for G1 and G2 of every curve (hypothesis), on the array API and on the in-JIT formulas."""

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuzk import curves
from cuzk.curve import G1, G2
from cuzk.curves.bls12_381 import g1, g2
from cuzk.field import FR

R = FR.modulus
_BN = curves.get("bn254")
GROUPS = [pytest.param(G1, id="G1"), pytest.param(G2, id="G2"),
          pytest.param(_BN.G1, id="bn254-G1"), pytest.param(_BN.G2, id="bn254-G2")]
_POOLS = {}


def pool(group):
    """Eight random subgroup points plus the identity (index 8), built once per group."""
    if repr(group) not in _POOLS:
        pts = group.random(8, np.random.default_rng(20261129))
        _POOLS[repr(group)] = np.concatenate([pts, group.identity(1)])
    return _POOLS[repr(group)]


idx = st.integers(0, 8)
scalars = st.one_of(st.integers(0, 5), st.integers(0, R - 1), st.integers(R - 3, R + 3))


@pytest.mark.parametrize("group", GROUPS)
@given(i=idx, j=idx, k=idx)
def test_associative_and_commutative(group, i, j, k):
    p = pool(group)
    a, b, c = p[i], p[j], p[k]
    assert group.eq(group.add(group.add(a, b), c), group.add(a, group.add(b, c)))
    assert group.eq(group.add(a, b), group.add(b, a))


@pytest.mark.parametrize("group", GROUPS)
@given(i=idx)
def test_identity_inverse_doubling(group, i):
    a = pool(group)[i]
    zero = group.identity()
    assert group.eq(group.add(a, zero), a) and group.eq(group.add(zero, a), a)
    assert group.eq(group.add(a, group.neg(a)), zero)
    assert group.eq(group.add(a, a), group.mul(a, 2))
    assert group.eq(group.neg(group.neg(a)), a)
    assert group.is_on_curve(a) and group.is_in_subgroup(a)


@pytest.mark.parametrize("group", GROUPS)
@given(i=idx, k1=scalars, k2=scalars)
def test_scalar_multiplication_is_linear(group, i, k1, k2):
    a = pool(group)[i]
    assert group.eq(group.add(group.mul(a, k1), group.mul(a, k2)), group.mul(a, k1 + k2))
    assert group.eq(group.mul(a, -k1), group.neg(group.mul(a, k1)))
    assert group.eq(group.mul(group.mul(a, k1), k2), group.mul(a, k1 * k2 % group.params.order))


@pytest.mark.parametrize("group", GROUPS)
def test_order_and_batch_helpers(group):
    p = pool(group)
    r = group.params.order
    assert np.all(group.eq(group.mul_many(p, [r] * len(p)), group.identity(len(p))))
    ks = [3, 0, 1, r - 1, 2**200, 7, 11, 13, 5]
    expected = np.stack([group.mul(p[i], k) for i, k in enumerate(ks)])
    assert np.all(group.eq(group.mul_many(p, ks), expected))
    total = p[0]
    for q in p[1:]:
        total = group.add(total, q)
    assert group.eq(group.sum(p), total)
    assert group.eq(group.linear_combination(p, ks), group.sum(expected))
    assert group.eq(group.sum(np.concatenate([p[:3], group.neg(p[:3])])), group.identity())


def _formula_kernel(K):
    """Every add/double formula on (a, b), with random-looking projective scalings; results affine."""

    @numba.njit
    def run(a, b, zsrc, out):
        F = K.F
        for i in range(a.shape[0]):
            pa = K.load_affine(a, i)
            pb = K.load_affine(b, i)
            z = K.load_affine(zsrc, i)[0]  # non-zero scaling factor
            z2 = F.sqr(z)
            z3 = F.mul(z2, z)
            ja = K.jac_from_affine(pa)
            jb = K.jac_from_affine(pb)
            if not K.jac_is_identity(ja):
                ja = (F.mul(ja[0], z2), F.mul(ja[1], z3), z)  # same point, Z = z
            xa = K.jac_to_xyzz(ja)
            xb = K.jac_to_xyzz(jb)
            if not K.xyzz_is_identity(xb):
                xb = (F.mul(xb[0], z2), F.mul(xb[1], z3), F.mul(xb[2], z2), F.mul(xb[3], z3))  # same point, scaled
            K.store_affine(out[i], 0, K.jac_to_affine(K.jac_add(ja, jb)))
            K.store_affine(out[i], 1, K.jac_to_affine(K.jac_madd(ja, pb)))
            K.store_affine(out[i], 2, K.xyzz_to_affine(K.xyzz_add(xa, xb)))
            K.store_affine(out[i], 3, K.xyzz_to_affine(K.xyzz_madd(xa, pb)))
            K.store_affine(out[i], 4, K.jac_to_affine(K.xyzz_to_jac(K.xyzz_add(xa, xb))))
            K.store_affine(out[i], 5, K.jac_to_affine(K.jac_dbl(ja)))
            K.store_affine(out[i], 6, K.xyzz_to_affine(K.xyzz_dbl(xa)))
            K.store_affine(out[i], 7, K.xyzz_to_affine(K.xyzz_mdbl(pa)))
            eqs = (
                K.jac_eq(ja, K.jac_from_affine(pa)),
                K.xyzz_eq(xa, K.xyzz_from_affine(pa)),
                K.jac_eq_affine(ja, pa),
                K.aff_eq(K.xyzz_to_affine(xb), pb),
            )
            out[i, 8, 0, 0] = np.uint64(eqs[0] and eqs[1] and eqs[2] and eqs[3])

    return run


_KERNELS = {}


# BLS12-381's groups only: the formulas are one template for every curve, and this test's
# uncacheable closure kernel costs ~10 s of compile per group
@pytest.mark.parametrize("group", GROUPS[:2])
def test_jacobian_xyzz_affine_agree(group):
    K = group.kernels
    if repr(group) not in _KERNELS:
        _KERNELS[repr(group)] = _formula_kernel(K)
    p = pool(group)
    n = len(p)
    ii, jj = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    a, b = p[ii.ravel()], p[jj.ravel()]
    # include P + (-P) and P + P for every point (the grid already has P + P)
    a = np.concatenate([a, p])
    b = np.concatenate([b, group.neg(p)])
    zsrc = np.roll(np.concatenate([p[:8]] * (len(a) // 8 + 1))[: len(a)], 3, axis=0)
    out = np.zeros((len(a), 9) + group.point_shape, dtype=np.uint64)
    _KERNELS[repr(group)](a, b, zsrc, out)
    sums, dbls = group.add(a, b), group.add(a, a)
    for f in range(5):
        assert np.all(group.eq(out[:, f], sums)), f"formula {f}"
    for f in range(5, 8):
        assert np.all(group.eq(out[:, f], dbls)), f"doubling formula {f}"
    assert np.all(out[:, 8, 0, 0] == 1) if group.degree == 1 else np.all(out[:, 8, 0, 0, 0] == 1)


@pytest.mark.parametrize("group", GROUPS)
def test_batch_to_affine_with_identities(group):
    K = group.kernels
    p = pool(group)
    jac = np.zeros((len(p), 3) + group.coord_shape, dtype=np.uint64)
    K.mul_many(p, np.array([[5]] * len(p), dtype=np.uint64), jac)
    jac[2] = 0  # Z = 0: identity in the middle of the batch
    out = np.empty((len(p),) + group.point_shape, dtype=np.uint64)
    K.batch_to_affine(jac, out)
    expected = group.mul_many(p, [5] * len(p))
    expected[2] = 0
    assert np.all(group.eq(out, expected))


def test_kernel_modules_expose_same_api():
    assert g1.__all__ == g2.__all__
    assert g1.DEGREE == 1 and g2.DEGREE == 2


def _py_ecc_ints(group, k):
    import py_ecc.optimized_bls12_381 as bls
    import py_ecc.optimized_bn128 as bn

    ref = bn if group.curve == "bn254" else bls
    q = ref.multiply(ref.G1 if group.degree == 1 else ref.G2, k)
    if ref.is_inf(q):
        return group.to_ints(group.identity())
    x, y = ref.normalize(q)
    return (x.n, y.n) if group.degree == 1 else (tuple(x.coeffs), tuple(y.coeffs))


@pytest.mark.parametrize("group", GROUPS)
@settings(max_examples=6)
@given(k=st.one_of(st.sampled_from([0, 1, 2, -1, -2, -3]), st.integers(0, 2**256)))
def test_scalar_multiplication_matches_py_ecc(group, k):
    r = group.params.order
    k = {-1: r - 1, -2: r, -3: r + 1}.get(k, k)  # the edges around each group's own order
    assert group.to_ints(group.mul(group.generator(), k)) == _py_ecc_ints(group, k)
