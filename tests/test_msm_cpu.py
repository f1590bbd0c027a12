"""CPU Pippenger MSM and fixed-base multiplication against naive sums of scalar multiples.

The reference is ``Group.linear_combination`` (cuzk.curve's double-and-add, a different code
path) and, for a few points, py_ecc (an independent implementation).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuzk.curve import G1, G2
from cuzk.errors import FieldValueError, InputError
from cuzk.field import FR
from cuzk.kernels import msm_cpu
from cuzk.curves import get as _get_curve
cpu = _get_curve("bls12_381").kernels  # BLS12-381's CPU kernels

r = FR.modulus
GROUPS = {"g1": G1, "g2": G2}


def scalars_of(ints):
    raw = b"".join(int(k).to_bytes(32, "little") for k in ints)
    return np.frombuffer(raw, dtype="<u8").astype(np.uint64).reshape(len(ints), 4)


def rand_ints(n, seed):
    rng = np.random.default_rng(seed)
    return [int.from_bytes(rng.bytes(40), "little") % r for _ in range(n)]


def rand_points(group, n, seed):
    """Random subgroup points, made with the fixed-base kernel (itself checked below)."""
    mul = cpu.batch_mul_g1 if group is G1 else cpu.batch_mul_g2
    return mul(group.generator(), scalars_of([k or 1 for k in rand_ints(n, seed)]))


@pytest.mark.parametrize("group", ["g1", "g2"])
def test_batch_mul_equals_scalar_mults(group):
    G = GROUPS[group]
    ks = [0, 1, 2, r - 1, r - 2, 2**128, 2**254] + rand_ints(9, seed=1)
    base = G.mul(G.generator(), 123456789)
    out = msm_cpu.batch_mul(cpu.group(group), base, scalars_of(ks), threads=2)
    want = G.mul_many(np.broadcast_to(base, (len(ks),) + base.shape), scalars_of(ks))
    assert np.array_equal(out, want)  # both affine Montgomery: equal points have equal limbs
    assert not out[0].any() and np.array_equal(out[1], base)
    assert np.array_equal(out[3], G.neg(base))  # (r - 1)·B = −B


@pytest.mark.parametrize("window", [2, 5, 9])
def test_batch_mul_windows_and_threads_agree(window):
    ks = scalars_of(rand_ints(40, seed=window))
    g = G1.generator()
    ref = msm_cpu.batch_mul(cpu.group("g1"), g, ks, threads=1, window=4)
    assert np.array_equal(msm_cpu.batch_mul(cpu.group("g1"), g, ks, threads=3, window=window), ref)


def test_batch_mul_identity_base_and_empty():
    assert not cpu.batch_mul_g1(G1.identity(), scalars_of([5, 7])).any()
    assert cpu.batch_mul_g2(G2.generator(), np.zeros((0, 4), np.uint64)).shape == (0, 2, 2, 6)


@pytest.mark.parametrize("method", msm_cpu.AVAILABLE)
@pytest.mark.parametrize("n", [1, 2, 3, 17, 130])
def test_msm_g1_matches_naive(method, n):
    pts = rand_points(G1, n, seed=n)
    ks = scalars_of(rand_ints(n, seed=1000 + n))
    want = G1.linear_combination(pts, ks)
    for window in (None, 1, 4, 11):
        got = cpu.msm("g1", pts, ks, threads=1, method=method, window=window)
        assert np.array_equal(got, want), window


@settings(max_examples=15)
@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from([0, 1, 2, 3, r - 1, r - 2, 2**200 + 1])), min_size=1, max_size=24),
       st.sampled_from(msm_cpu.AVAILABLE), st.sampled_from([2, 3, 5, 8, 15, 16]))
def test_msm_edge_scalars_duplicates_and_identities(pairs, method, window):
    """Points drawn from a pool of 6 (so duplicates, P and −P are common; index 5 = identity)."""
    g = G1.generator()
    pool = np.stack([g, G1.neg(g), G1.mul(g, 2), G1.mul(g, r - 2), G1.mul(g, 5), G1.identity()])
    pts = pool[[i for i, _ in pairs]]
    ks = scalars_of([k for _, k in pairs])
    want = G1.linear_combination(pts, ks)
    got = cpu.msm("g1", pts, ks, threads=1, method=method, window=window)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("method", msm_cpu.AVAILABLE)
def test_msm_cancelling_sum_is_zeros(method):
    g = G1.mul(G1.generator(), 99)
    pts = np.stack([g, g, G1.neg(g), g, G1.identity()])
    ks = scalars_of([5, r - 3, 1, r - 1, 7])  # 5 − 3 − 1 − 1 = 0
    assert not cpu.msm("g1", pts, ks, threads=1, method=method).any()
    assert not cpu.msm_g1(pts, scalars_of([0] * 5)).any()
    assert not cpu.msm_g1(G1.identity(0), np.zeros((0, 4), np.uint64)).any()


@pytest.mark.parametrize("method", msm_cpu.AVAILABLE)
def test_msm_many_duplicates_in_one_bucket(method):
    """Hundreds of equal points with equal digits: every round adds P + P in batch-affine."""
    g = G1.mul(G1.generator(), 7)
    n = 600
    pts = np.broadcast_to(g, (n, 2, 6)).copy()
    k = 3 + 2**100
    got = cpu.msm("g1", pts, scalars_of([k] * n), threads=1, method=method, window=6)
    assert np.array_equal(got, G1.mul(g, n * k % r))


@pytest.mark.parametrize("window", [15, 16])
def test_msm_streamed_windows_match_naive(window):
    """Windows of >= 2^14 buckets stream the points into affine buckets (``window_stream``): 5000
    random points (more than one batch of CHUNK, bucket conflicts inside a batch), and the same
    with most scalars equal (most rows wait for later passes, then go to the sorted rest)."""
    n = 5000
    pts = rand_points(G1, n, seed=21)
    ints = rand_ints(n, seed=22)
    for ks in (ints, [1 if k % 5 else k for k in ints]):
        want = G1.linear_combination(pts, scalars_of(ks))
        assert np.array_equal(cpu.msm("g1", pts, scalars_of(ks), threads=1, method="affine", window=window), want)
    g = G1.mul(G1.generator(), 7)
    same = np.broadcast_to(g, (3000, 2, 6)).copy()
    got = cpu.msm("g1", same, scalars_of([3 + 2**100] * 3000), threads=1, method="affine", window=window)
    assert np.array_equal(got, G1.mul(g, 3000 * (3 + 2**100) % r))


def test_msm_g2_streamed_window_matches_naive():
    n = 2500
    pts = rand_points(G2, n, seed=23)
    ks = scalars_of(rand_ints(n, seed=24))
    want = G2.linear_combination(pts, ks)
    assert np.array_equal(cpu.msm("g2", pts, ks, threads=2, method="affine", window=15, endo=False), want)


def test_msm_threads_agree_on_the_parallel_path():
    n = 3000
    pts = rand_points(G1, n, seed=5)
    ks = scalars_of(rand_ints(n, seed=6))
    one = cpu.msm_g1(pts, ks, threads=1)
    assert np.array_equal(cpu.msm_g1(pts, ks, threads=2), one)
    assert np.array_equal(cpu.msm_g1(pts, ks), one)
    assert np.array_equal(cpu.msm("g1", pts, ks, threads=3, method="xyzz"), one)


def test_msm_medium_size_crosses_batch_chunks():
    """5000 points: the first round schedules more pairs than one batch inversion (CHUNK) holds."""
    n = 5000
    pts = rand_points(G1, n, seed=12)
    ks = scalars_of(rand_ints(n, seed=13))
    want = G1.linear_combination(pts, ks)
    assert np.array_equal(cpu.msm("g1", pts, ks, threads=1, method="affine", window=4), want)
    assert np.array_equal(cpu.msm_g1(pts, ks, threads=2), want)


def test_concurrent_msm_calls_from_several_threads():
    """What a pipeline does: several Python threads each running a multi-threaded MSM."""
    import threading

    jobs = [(rand_points(G1, 700, seed=20 + k), scalars_of(rand_ints(700, seed=30 + k))) for k in range(3)]
    want = [cpu.msm_g1(p, k, threads=1) for p, k in jobs]
    got = [None] * 3

    def work(i):
        got[i] = cpu.msm_g1(*jobs[i], threads=2)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=300)
    assert all(g is not None and np.array_equal(g, w) for g, w in zip(got, want))


@pytest.mark.parametrize("method", msm_cpu.AVAILABLE)
def test_msm_g2_matches_naive(method):
    n = 40
    pts = rand_points(G2, n, seed=8)
    pts[3] = 0  # an identity
    pts[4] = pts[5]  # a duplicate
    ints = rand_ints(n, seed=9)
    ints[6] = 0
    ints[7] = r - 1
    ks = scalars_of(ints)
    want = G2.linear_combination(pts, ks)
    assert np.array_equal(cpu.msm("g2", pts, ks, threads=2, method=method), want)


def test_msm_against_py_ecc():
    from py_ecc.optimized_bls12_381 import FQ, FQ2, add, multiply, normalize

    ints = [3, r - 1, 2**255 % r, 12345678901234567890]
    for G, make, one in ((G1, FQ, FQ.one()), (G2, lambda c: FQ2(list(c)), FQ2.one())):
        pts = rand_points(G, len(ints), seed=11)
        acc = None
        for (x, y), k in zip(G.to_ints(pts), ints):
            term = multiply((make(x), make(y), one), k)
            acc = term if acc is None else add(acc, term)
        ex, ey = normalize(acc)
        fn = cpu.msm_g1 if G is G1 else cpu.msm_g2
        x, y = G.to_ints(fn(pts, scalars_of(ints)))
        if G is G1:
            assert (x, y) == (ex.n, ey.n)
        else:
            assert (tuple(x), tuple(y)) == (tuple(int(c) for c in ex.coeffs), tuple(int(c) for c in ey.coeffs))


def test_choose_msm_prefers_batch_affine_for_large_n():
    assert msm_cpu.choose_msm(1 << 16, 381)[0] == "affine"
    assert msm_cpu.choose_msm(4, 381)[0] == "xyzz"
    for n in (1, 10, 1000, 1 << 20):
        _, c = msm_cpu.choose_msm(n, 381)
        assert 1 <= c <= 16


@pytest.mark.parametrize(
    "points, scalars, exc, match",
    [
        (np.zeros((2, 2, 6), np.int64), np.zeros((2, 4), np.uint64), InputError, "uint64"),
        (np.zeros((2, 3, 6), np.uint64), np.zeros((2, 4), np.uint64), InputError, "shape"),
        (np.zeros((2, 2, 6), np.uint64), np.zeros((3, 4), np.uint64), InputError, "one scalar per point"),
        (np.zeros((2, 2, 6), np.uint64), np.zeros((2, 5), np.uint64), FieldValueError, "shape"),
        (np.zeros((2, 2, 6), np.uint64), scalars_of([0, r]), FieldValueError, r"scalars\[1\]"),
        (np.full((1, 2, 6), 2**64 - 1, np.uint64), np.zeros((1, 4), np.uint64), FieldValueError, r"points\[0\]"),
        ("nope", np.zeros((1, 4), np.uint64), InputError, "numpy"),
    ],
)
def test_msm_bad_inputs(points, scalars, exc, match):
    with pytest.raises(exc, match=match):
        cpu.msm_g1(points, scalars)


def test_msm_bad_options():
    pts, ks = G1.identity(1), np.zeros((1, 4), np.uint64)
    with pytest.raises(InputError, match="threads"):
        cpu.msm_g1(pts, ks, threads=0)
    with pytest.raises(InputError, match="method"):
        cpu.msm("g1", pts, ks, method="jacobian")
    with pytest.raises(InputError, match="window"):
        cpu.msm("g1", pts, ks, window=17)
    with pytest.raises(InputError, match="group"):
        cpu.msm("g3", pts, ks)
    with pytest.raises(InputError, match="shape"):
        cpu.msm_g2(G1.identity(1), ks)
    with pytest.raises(InputError, match="base"):
        cpu.batch_mul_g1(G1.identity(2), ks)
    with pytest.raises(FieldValueError, match="scalars"):
        cpu.batch_mul_g1(G1.generator(), scalars_of([r]))
