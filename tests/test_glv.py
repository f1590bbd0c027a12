"""GLV (G1) / GLS (G2) scalar splits: derived plans, the Numba split against Python ints, and
split MSMs against plain scalar multiplication and the unsplit MSM, for BLS12-381 and BN254."""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuzk import curves
from cuzk.curves import BLS12_381, BN254
from cuzk.kernels import msm_cpu
from cuzk.curves import get as _get_curve
cpu = _get_curve("bls12_381").kernels  # BLS12-381's CPU kernels
from cuzk.curves.bls12_381 import msm_kernels_g1
from cuzk.kernels.glv import ROUND_SHIFT, derive, lll, plan_for, split_ints
from cuzk.kernels.glv_kernels import split

SPECS = {"bls12_381": BLS12_381, "bn254": BN254}
CASES = [(c, g) for c in SPECS for g in ("g1", "g2")]


def _plan(curve, group):
    s = SPECS[curve]
    return plan_for(getattr(s, group), s.fq, s.fr, s.fq2_nonresidue)


def _rows(ks):
    return np.array([[(k >> (64 * i)) & (2**64 - 1) for i in range(4)] for k in ks], np.uint64)


def _parts(mags, neg, n, dim):
    return [[(-1 if neg[j * n + i] else 1) * sum(int(mags[j * n + i, a]) << (64 * a) for a in range(4))
             for j in range(dim)] for i in range(n)]


def _edge_scalars(plan, r):
    """0, 1, r−1 and friends, the basis entries ±1, and scalars on the Babai rounding boundaries
    (k·|g_j|/2^256 just below/above m + 1/2), where a part is largest."""
    ks = {0, 1, 2, r - 1, r - 2, (r - 1) // 2, (r + 1) // 2}
    for v in plan.basis:
        for x in v:
            ks.update(abs(x) + d for d in (-1, 0, 1))
    for g in plan.rounding:
        if g:
            for m in (1, 2, 3, 1000, (r * abs(g)) >> (ROUND_SHIFT + 1)):
                k0 = ((2 * m + 1) << (ROUND_SHIFT - 1)) // abs(g)
                ks.update(k0 + d for d in (-1, 0, 1))
    rng = random.Random(7)
    ks.update(rng.randrange(r) for _ in range(200))
    return sorted(k % r for k in ks)


@pytest.mark.parametrize("curve,group", CASES)
def test_plan_is_derived_and_consistent(curve, group):
    s = SPECS[curve]
    plan = _plan(curve, group)
    r = s.fr.modulus
    mu = plan.mu
    if group == "g1":
        assert plan.dim == 2 and (mu * mu + mu + 1) % r == 0
    else:
        assert plan.dim == 4 and mu == s.fq.modulus % r and (mu**4 - mu**2 + 1) % r == 0
    for v in plan.basis:  # every basis row is in the lattice, and they span it (|det| = r)
        assert sum(x * pow(mu, i, r) for i, x in enumerate(v)) % r == 0
    det = round(np.linalg.det(np.array(plan.basis, dtype=object).astype(float)))
    assert abs(det - r) / r < 1e-9 or abs(det + r) / r < 1e-9
    # parts of ~r^(1/d): 128-ish bits for GLV, 64-ish for GLS
    assert plan.bits <= -(-s.fr.bits // plan.dim) + 2


def test_lll_reduces_a_small_lattice():
    b = lll([[201, 37], [1648, 297]])
    assert abs(b[0][0] * b[1][1] - b[0][1] * b[1][0]) == abs(201 * 297 - 37 * 1648)
    assert max(abs(x) for x in b[0]) < 50


@pytest.mark.parametrize("curve,group", CASES)
def test_kernel_split_is_exact_on_edges(curve, group):
    plan = _plan(curve, group)
    r = SPECS[curve].fr.modulus
    ks = _edge_scalars(plan, r)
    mags, neg = split(plan, _rows(ks))
    for k, u in zip(ks, _parts(mags, neg, len(ks), plan.dim)):
        assert u == split_ints(plan, k, r)
        assert sum(x * pow(plan.mu, i, r) for i, x in enumerate(u)) % r == k
        assert all(abs(x) < 1 << plan.bits for x in u)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, BLS12_381.fr.modulus - 1), st.integers(0, BN254.fr.modulus - 1))
def test_kernel_split_matches_ints(k_bls, k_bn):
    for curve, k in (("bls12_381", k_bls), ("bn254", k_bn)):
        r = SPECS[curve].fr.modulus
        for group in ("g1", "g2"):
            plan = _plan(curve, group)
            mags, neg = split(plan, _rows([k]))
            u = _parts(mags, neg, 1, plan.dim)[0]
            assert u == split_ints(plan, k, r)
            assert sum(x * pow(plan.mu, i, r) for i, x in enumerate(u)) % r == k


def test_derive_refuses_a_g2_without_psi():
    import attrs

    from cuzk.errors import CurveSpecError

    g2 = attrs.evolve(BN254.g2, endo_x=None, endo_y=None)
    with pytest.raises(CurveSpecError, match="psi"):
        derive(g2, BN254.fq, BN254.fr, BN254.fq2_nonresidue)


@pytest.mark.parametrize("curve,group", CASES)
def test_split_msm_equals_plain_scalar_multiplication(curve, group):
    bundle = curves.get(curve)
    G = getattr(bundle, group.upper())
    k = bundle.kernels
    r = SPECS[curve].fr.modulus
    plan = _plan(curve, group)
    rng = np.random.default_rng(3)
    edges = _edge_scalars(plan, r)
    picks = [0, 1, r - 1] + random.Random(1).sample(edges, 9)
    pts = G.random(len(picks), rng)
    for i, kk in enumerate(picks):  # one point each: the MSM is a plain k·P
        want = G.mul(pts[i], kk)
        got = k.msm(group, pts[i:i + 1], _rows([kk]), threads=1, endo=True)
        assert G.eq(got, want), (curve, group, kk)
    # all together, with an identity and a duplicate, split vs unsplit, 1 and 2 threads
    pts[3] = 0
    pts[4] = pts[5]
    ks = _rows(picks)
    plain = k.msm(group, pts, ks, threads=1, endo=False)
    for threads in (1, 2):
        assert G.eq(k.msm(group, pts, ks, threads=threads, endo=True), plain)
        assert G.eq(k.msm(group, pts, ks, threads=threads), plain)


@settings(max_examples=6, deadline=None)
@given(st.integers(1, 300), st.integers(0, 2**32), st.sampled_from(msm_cpu.AVAILABLE), st.sampled_from([None, 3, 9]))
def test_split_msm_matches_unsplit_msm(n, seed, method, window):
    rng = np.random.default_rng(seed)
    r = BLS12_381.fr.modulus
    for group in ("g1", "g2"):
        G = getattr(curves.get("bls12_381"), group.upper())
        pts = G.random(n, rng)
        ks = _rows([random.Random(seed + j).randrange(r) for j in range(n)])
        a = cpu.msm(group, pts, ks, 2, method=method, window=window, endo=True)
        b = cpu.msm(group, pts, ks, 2, endo=False)
        assert G.eq(a, b)


def test_one_thread_means_one_thread(monkeypatch):
    widths = []
    real = msm_cpu.run_phases

    def spy(width, phases):
        widths.append(width)
        return real(width, phases)

    monkeypatch.setattr(msm_cpu, "run_phases", spy)
    G = curves.get("bls12_381").G1
    pts = G.random(5000, np.random.default_rng(0))
    ks = _rows([random.Random(2).randrange(BLS12_381.fr.modulus) for _ in range(5000)])
    cpu.msm("g1", pts, ks, 1, endo=True)
    cpu.msm("g1", pts, ks, 2, endo=True)
    assert widths == [1, 2]


def test_default_splits_only_while_the_split_points_fit(monkeypatch):
    dims = []
    real = msm_cpu._prepare

    def spy(kernels, plan, *args):
        dims.append(plan.dim)
        return real(kernels, plan, *args)

    monkeypatch.setattr(msm_cpu, "_prepare", spy)
    G = curves.get("bls12_381").G2
    pts = G.random(40, np.random.default_rng(4))
    ks = _rows([random.Random(3).randrange(BLS12_381.fr.modulus) for _ in range(40)])
    want = cpu.msm("g2", pts, ks, 1, endo=False)
    assert G.eq(cpu.msm("g2", pts, ks, 1), want) and dims == [4]
    monkeypatch.setattr(msm_cpu, "_SPLIT_MAX_BYTES", 4 * 40 * pts[:1].nbytes - 1)
    assert G.eq(cpu.msm("g2", pts, ks, 1), want) and dims == [4]


def test_windows_cut_into_point_slices_when_threads_outnumber_them(monkeypatch):
    # 4 threads, 10 windows (c = 13 over 129-bit parts): each window runs as 2 point slices
    slices = []
    real = msm_kernels_g1.combine_slices

    def spy(sums, c, s):
        slices.append(s)
        return real(sums, c, s)

    monkeypatch.setattr(msm_kernels_g1, "combine_slices", spy)
    G = curves.get("bls12_381").G1
    n = 4096
    pts = G.random(n, np.random.default_rng(5))
    ks = _rows([random.Random(5).randrange(BLS12_381.fr.modulus) for _ in range(n)])
    got = cpu.msm("g1", pts, ks, 4, window=13, endo=True)
    assert slices == [2]
    assert G.eq(got, cpu.msm("g1", pts, ks, 2, endo=False))
