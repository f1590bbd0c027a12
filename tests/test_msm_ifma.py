"""The AVX-512 IFMA path: lane arithmetic against Python ints, the "ifma" MSM against the scalar one.

Runs where the CPU has AVX-512 IFMA (``cuzk.field.ifma.HAVE_IFMA``), as on the project's CI and
development hosts; elsewhere only the parts that need no such CPU run. The scalar MSM methods
are checked against naive sums in tests/test_msm_cpu.py (which also runs "ifma" where present).
"""

import importlib
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from cuzk import curves
from cuzk.errors import InputError
from cuzk.field import ifma
from cuzk.field.ifma_arith import LANES, limb_count
from cuzk.kernels import msm_cpu
from cuzk.kernels.msm_cost import IFMA_MIN_POINTS

NAMES = ("bls12_381", "bn254", "bls12_377")
needs_ifma = pytest.mark.skipif(not ifma.HAVE_IFMA, reason="this CPU has no AVX-512 IFMA")


def _vec(name, group):
    return importlib.import_module(f"{curves.get(name).layout.package}.msm_vec_{group}")


def test_limb_counts_and_constants_come_from_the_modulus():
    for name in NAMES:
        spec = curves.resolve(name)
        vf = ifma.VecField(spec.fq.modulus, spec.fq.limbs, 2, spec.fq2_nonresidue)
        assert vf.L == limb_count(spec.fq.modulus) and (1 << (52 * vf.L)) > 2 * spec.fq.modulus
        assert int(ifma.limbs52(spec.fq.modulus, vf.L)[-1]) == int(vf.P52[-1])
        assert vf.k == (-spec.fq2_nonresidue) % spec.fq.modulus  # 1, 1, 5
    with pytest.raises(ValueError, match="small k"):
        ifma.VecField(2**127 - 1, 2, 2, 3)  # u^2 = 3 is not -k for a small k


def test_vec_module_is_none_without_ifma(monkeypatch):
    monkeypatch.setattr(ifma, "HAVE_IFMA", False)
    assert msm_cpu.vec_module("cuzk.curves.bls12_381", "g1") is None
    bls = curves.get("bls12_381")
    g = msm_cpu.MsmGroup("g1", bls.module("msm_kernels_g1"), 1, bls.spec.fq, bls.spec.fr)
    assert g.methods == msm_cpu.METHODS
    pts, ks = np.zeros((1, 2, 6), np.uint64), np.zeros((1, 4), np.uint64)
    with pytest.raises(InputError, match="AVX-512 IFMA"):
        msm_cpu.msm(g, pts, ks, method="ifma")


# --------------------------------------------------------------------- lane arithmetic

_HARNESS = {}


def _harness(vf):
    """njit wrappers of one VecField's lane kernels (compiled once per field and degree)."""
    key = (vf.p, vf.degree)
    if key not in _HARNESS:
        mul, inv, to52, to64 = vf.mul_lanes, vf.inv_lanes, vf.to52, vf.to64

        @njit
        def run_mul(out, x, y):
            mul(out, x, y)

        @njit
        def run_inv(out, x, bits):
            inv(out, x, bits)

        @njit
        def run_convert(src, mid, back, n):
            for e in range(0, n, 8):
                to52(src, mid, e, n)
            for e in range(0, n, 8):
                to64(mid, back, e, n)

        _HARNESS[key] = (run_mul, run_inv, run_convert)
    return _HARNESS[key]


def _block(vf, lanes):
    """SoA block of 8 lane values (each a list of degree ints, IFMA form)."""
    out = np.zeros(vf.BLOCK, np.uint64)
    for lane, value in enumerate(lanes):
        for c, x in enumerate(value):
            for j, limb in enumerate(ifma.limbs52(x, vf.L)):
                out[(c * vf.L + j) * LANES + lane] = limb
    return out


def _unblock(vf, block):
    return [[sum(int(block[(c * vf.L + j) * LANES + lane]) << (52 * j) for j in range(vf.L)) for c in range(vf.degree)]
            for lane in range(LANES)]


def _ext_mul(x, y, k, p):
    if len(x) == 1:
        return [x[0] * y[0] % p]
    return [(x[0] * y[0] - k * x[1] * y[1]) % p, (x[0] * y[1] + x[1] * y[0]) % p]


@needs_ifma
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("group", ["g1", "g2"])
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_lane_products_and_inverses_match_ints(name, group, seed):
    vf = _vec(name, group).VF
    p, rp = vf.p, 1 << (52 * vf.L)
    rnd = random.Random(seed)
    edge = [0, 1, 2, p - 1, p - 2, (p + 1) // 2]

    def draw(nonzero=False):
        while True:
            v = [rnd.choice(edge) if rnd.random() < 0.3 else rnd.randrange(p) for _ in range(vf.degree)]
            if not nonzero or any(v):
                return v

    xs, ys = [draw() for _ in range(LANES)], [draw(nonzero=True) for _ in range(LANES)]
    run_mul, run_inv, _ = _harness(vf)
    mont = lambda vals: _block(vf, [[a * rp % p for a in v] for v in vals])  # noqa: E731
    plain = lambda block: [[a * pow(rp, -1, p) % p for a in v] for v in _unblock(vf, block)]  # noqa: E731
    out = np.zeros(vf.BLOCK, np.uint64)
    run_mul(out, mont(xs), mont(ys))
    assert plain(out) == [_ext_mul(x, y, vf.k, p) for x, y in zip(xs, ys)]
    assert all(v < p for lane in _unblock(vf, out) for v in lane)  # fully reduced
    run_inv(out, mont(ys), vf.INV_BITS)
    one = [1] + [0] * (vf.degree - 1)
    assert [_ext_mul(y, z, vf.k, p) for y, z in zip(ys, plain(out))] == [one] * LANES


@needs_ifma
@pytest.mark.parametrize("name", NAMES)
def test_conversions_round_trip_and_mean_the_same_value(name):
    spec = curves.resolve(name)
    vf = _vec(name, "g1").VF
    p, r64 = spec.fq.modulus, 1 << (64 * spec.fq.limbs)
    xs = [0, 1, p - 1] + [random.Random(7).randrange(p) for _ in range(18)]  # 21: a partial last group
    words = np.array([[(x * r64 % p) >> (64 * k) & (2**64 - 1) for k in range(spec.fq.limbs)] for x in xs], np.uint64)
    mid = np.zeros((len(xs), vf.L), np.uint64)
    back = np.zeros_like(words)
    _harness(vf)[2](words, mid, back, len(xs))
    assert [sum(int(v) << (52 * j) for j, v in enumerate(row)) for row in mid] == [x * (1 << (52 * vf.L)) % p for x in xs]
    assert np.array_equal(back, words)


# --------------------------------------------------------------------- the MSM


def _scalars(ints):
    raw = b"".join(int(k).to_bytes(32, "little") for k in ints)
    return np.frombuffer(raw, dtype="<u8").astype(np.uint64).reshape(len(ints), 4)


@needs_ifma
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("group", ["g1", "g2"])
def test_ifma_msm_equals_the_scalar_msm_with_every_special_pair(name, group):
    """Identity points, zero scalars, P + P (equal points and digits), P + (−P) (digits k and
    r − k on one point) and r − 1, over windows that give full, sparse and single-point buckets."""
    cv = curves.get(name)
    G, k = (cv.G1, cv.kernels) if group == "g1" else (cv.G2, cv.kernels)
    r = cv.Fr.modulus
    rnd = random.Random(hash((name, group)) & 0xFFFF)
    n = 300
    base = getattr(k, f"batch_mul_{group}")(G.generator(), _scalars([rnd.randrange(1, r) for _ in range(n)]))
    ks = [rnd.randrange(r) for _ in range(n)]
    base[3] = 0  # identity
    ks[4] = 0
    base[10:20] = base[9]  # ten equal points with equal scalars: P + P in every window
    ks[10:20] = [ks[9]] * 10
    base[30] = base[31]  # k·P + (r − k)·P = identity
    ks[30] = r - ks[31]
    ks[40] = r - 1
    sc = _scalars(ks)
    want = k.msm(group, base, sc, threads=1, method="affine", endo=False)
    for window, threads in ((2, 1), (7, 2), (11, 1)):
        got = k.msm(group, base, sc, threads=threads, method="ifma", window=window, endo=False)
        assert G.eq(got, want), (window, threads)
    assert G.eq(k.msm(group, base, sc, threads=2, method="ifma", endo=True), want)  # GLV/GLS-split rows


@needs_ifma
def test_ifma_msm_across_flushes_and_cancelling_to_identity():
    """More pairs than one flush holds (CHUNK), and a sum that is the identity."""
    cv = curves.get("bn254")
    rnd = random.Random(3)
    r = cv.Fr.modulus
    n = 3 * _vec("bn254", "g1").CHUNK + 5
    base = cv.kernels.batch_mul_g1(cv.G1.generator(), _scalars([rnd.randrange(1, r) for _ in range(n)]))
    sc = _scalars([rnd.randrange(r) for _ in range(n)])
    want = cv.kernels.msm("g1", base, sc, threads=2, method="affine", window=3)
    assert cv.G1.eq(cv.kernels.msm("g1", base, sc, threads=2, method="ifma", window=3), want)
    pair = np.concatenate([base[:50], base[:50]])
    ks = [rnd.randrange(r) for _ in range(50)]
    assert not cv.kernels.msm("g1", pair, _scalars(ks + [r - x for x in ks]), method="ifma", window=5).any()


@needs_ifma
def test_the_model_picks_ifma_for_large_msms_where_it_runs():
    assert msm_cpu.choose_msm(1 << 16, 254, methods=msm_cpu.AVAILABLE)[0] == "ifma"
    assert curves.get("bls12_381").kernels.group("g1").methods == msm_cpu.AVAILABLE
    assert curves.get("bn254").kernels.group("g2").vec is not None


@needs_ifma
@pytest.mark.parametrize("group", ["g1", "g2"])
def test_precomputed_tables_run_the_ifma_windows_and_give_the_same_point(group):
    from cuzk.kernels.msm_fixed import FixedBasePlan, msm_precomputed, precompute

    cv = curves.get("bn254")
    G = cv.G1 if group == "g1" else cv.G2
    rnd = random.Random(11)
    r = cv.Fr.modulus
    n = 1500  # 2 copies: 3,000 table rows, past the "ifma" threshold
    base = getattr(cv.kernels, f"batch_mul_{group}")(G.generator(), _scalars([rnd.randrange(1, r) for _ in range(n)]))
    base[7] = 0
    sc = _scalars([rnd.randrange(r) for _ in range(n)])
    g = cv.kernels.group(group)
    table = precompute(g, base, FixedBasePlan(c=9, t=15), threads=2)
    assert table.points.shape[0] >= IFMA_MIN_POINTS
    assert G.eq(msm_precomputed(table, sc, threads=2), cv.kernels.msm(group, base, sc, threads=1, method="affine"))
