"""msm.cu and cuzk.kernels.cuda's Pippenger launch plan on the CPU (host shim).

Points are built as P_i = t_i*G with known t_i, so the expected MSM is (sum k_i t_i)*G: one
Python-int scalar multiplication, independent of any bucket logic. BLS12-381 throughout; BN254
(the harness built with -DCUZK_CURVE_BN254) on small sizes, against the same reference and its
CPU backend.
"""

import random

import numpy as np
import pytest

from cuda_host import host_runtime, pyref
from cuzk import curves
from cuzk.errors import InputError
from cuzk.field import FR
from cuzk.kernels import cuda, cuda_msm

pytestmark = pytest.mark.skipif(not host_runtime.shutil.which("g++"), reason="g++ is needed for the host shim")
r = FR.modulus


def _groups(curve: str) -> dict:
    ref = pyref.get(curve)
    return {
        "g1": (ref.G1_GEN, ref.g1_add, ref.g1_mul, ref.g1_to_array),
        "g2": (ref.G2_GEN, ref.g2_add, ref.g2_mul, ref.g2_to_array),
    }


_GROUPS = _groups("bls12_381")


@pytest.fixture(scope="module")
def rt():
    rt = host_runtime.get_runtime()
    # small, so these sizes cut buckets across slices and need several tree and fold levels
    assert (rt.msm_slice, rt.msm_tree_fold, rt.msm_fold) == (4, 2, 2)
    return rt


def _instance(group: str, n: int, seed: int, curve: str = "bls12_381"):
    """n points with known discrete logs (incl. infinity and duplicates) and edge-heavy scalars
    (all canonical: < r)."""
    gen, add, mul, _ = _groups(curve)[group]
    r = pyref.get(curve).R
    top = 1 << (r.bit_length() - 1)  # the scalars' top bit: 2^254 (BLS12-381), 2^253 (BN254)
    rng = random.Random(seed)
    t0, step = rng.randrange(1, r), rng.randrange(1, r)
    S, P = mul(gen, step), mul(gen, t0)
    logs, pts = [], []
    for i in range(n):
        logs.append((t0 + i * step) % r)
        pts.append(P)
        P = add(P, S)
    for i in rng.sample(range(n), max(1, n // 16)):  # points at infinity
        logs[i], pts[i] = 0, None
    dup = rng.randrange(n)
    for i in rng.sample(range(n), max(2, n // 8)):  # duplicates of one point
        logs[i], pts[i] = logs[dup], pts[dup]
    edges = [0, 1, 2, r - 1, r - 2, (r - 1) // 2, top - 1, top, (1 << 128) - 1, 1 << 64]
    scalars = [rng.randrange(r) for _ in range(n)]
    for i, e in zip(rng.sample(range(n), min(n, len(edges))), edges):
        scalars[i] = e
    for i in rng.sample(range(n), max(1, n // 8)):  # zero scalars
        scalars[i] = 0
    return pts, logs, scalars


def _expected(group, logs, scalars, curve: str = "bls12_381"):
    gen, _, mul, to_array = _groups(curve)[group]
    k = sum(a * b for a, b in zip(logs, scalars)) % pyref.get(curve).R
    return to_array([mul(gen, k) if k else None])[0]


def _run(rt, group, pts, scalars, c=None, segment_len=None, **kw):
    arr = _groups(rt.curve.name)[group][3](pts)
    sc = pyref.canon_limbs(scalars)
    return cuda.run_msm(rt, group, arr.view(np.uint32), sc.view(np.uint32), len(pts), c, segment_len, **kw)


@pytest.mark.parametrize("group,log_n", [("g1", 6), ("g1", 8), ("g1", 10), ("g2", 6), ("g2", 8)])
def test_msm_matches_discrete_log_reference(rt, group, log_n):
    pts, logs, scalars = _instance(group, 1 << log_n, seed=log_n)
    np.testing.assert_array_equal(_run(rt, group, pts, scalars), _expected(group, logs, scalars))


@pytest.mark.parametrize("c", [2, 3, 5, 8, 13, 16])
def test_every_window_width_gives_the_same_sum(rt, c):
    pts, logs, scalars = _instance("g1", 48, seed=c)
    np.testing.assert_array_equal(_run(rt, "g1", pts, scalars, c), _expected("g1", logs, scalars))


@pytest.mark.parametrize("segment_len", [1, 2, 8, 64, 1 << 12])
def test_every_segment_length_gives_the_same_sum(rt, segment_len):
    pts, logs, scalars = _instance("g1", 40, seed=segment_len)
    np.testing.assert_array_equal(_run(rt, "g1", pts, scalars, 8, segment_len), _expected("g1", logs, scalars))


@pytest.mark.parametrize("group,bits,c", [("g1", 128, 5), ("g1", 128, 8), ("g1", 128, 13), ("g1", 64, 16),
                                          ("g1", 1, 4), ("g2", 65, 6), ("g2", 65, 13)])
def test_scalars_below_fewer_bits_run_fewer_windows_to_the_same_sum(rt, group, bits, c, monkeypatch):
    # the GLV shape (twice the points, half the bits): the widest scalar's last carry must still
    # land in the top window, whether or not c divides the bits
    pts, logs, _ = _instance(group, 40, seed=bits + c)
    rng = random.Random(bits * c)
    scalars = [rng.randrange(1 << bits) for _ in pts]
    scalars[:4] = [(1 << bits) - 1, 0, 1, (1 << bits) - (1 << max(0, bits - c))]
    launches, launch = [], rt.launch

    def counting_launch(name, grid, block, args, *a, **kw):
        if name == "msm_digit_count":
            launches.append(args[3])  # nw
        return launch(name, grid, block, args, *a, **kw)

    monkeypatch.setattr(rt, "launch", counting_launch)
    got = _run(rt, group, pts, scalars, c, scalar_bits=bits)
    np.testing.assert_array_equal(got, _expected(group, logs, scalars))
    assert launches == [bits // c + 1] and bits // c + 1 < cuda_msm.msm_windows(c)


@pytest.mark.parametrize("bits", [0, 256, True, 12.0])
def test_scalar_bits_out_of_range_are_refused(rt, bits):
    with pytest.raises(InputError, match="scalar_bits"):
        _run(rt, "g1", [None], [1], 4, scalar_bits=bits)


def test_segment_length_must_be_a_power_of_two(rt):
    with pytest.raises(InputError, match="power of two"):
        _run(rt, "g1", [None], [1], 4, 3)


def test_one_heavy_bucket_is_cut_into_slices_and_summed_in_a_tree(rt, monkeypatch):
    # 200 copies of (P, k): every window puts 200 points in one bucket, cut into ~50 slices of
    # the host runtime's 4 pairs; the fix-up takes their pieces from heavy-tree nodes
    pts, logs, scalars = _instance("g1", 8, seed=1)
    k = scalars[3] or 12345
    pts2, logs2, sc2 = pts + [pts[1]] * 200, logs + [logs[1]] * 200, scalars + [k] * 200
    levels, launch = [], rt.launch

    def counting_launch(name, *args, **kw):
        if name == "g1_msm_heavy_tree":
            levels.append(args[2][4])
        return launch(name, *args, **kw)

    monkeypatch.setattr(rt, "launch", counting_launch)
    np.testing.assert_array_equal(_run(rt, "g1", pts2, sc2), _expected("g1", logs2, sc2))
    assert levels == [1, 2, 3, 4, 5]  # 208 pairs in a bucket at most: 52 slices, nodes of up to 2^5


@pytest.mark.parametrize("slice_len,tree_fold,fold", [(1, 2, 2), (3, 3, 4), (5, 4, 8), (64, 2, 2)])
def test_slice_tree_and_fold_sizes_do_not_change_the_sum(slice_len, tree_fold, fold):
    # heavy and light buckets, slices shorter and longer than the buckets, odd slice lengths
    rt = host_runtime.HostRuntime(host_runtime.build())
    rt.msm_slice, rt.msm_tree_fold, rt.msm_fold = slice_len, tree_fold, fold
    pts, logs, scalars = _instance("g1", 24, seed=slice_len)
    pts, logs, scalars = pts + [pts[2]] * 40, logs + [logs[2]] * 40, scalars + [7] * 40
    np.testing.assert_array_equal(_run(rt, "g1", pts, scalars, 5), _expected("g1", logs, scalars))


def test_exclusive_scan_across_several_block_levels(rt):
    # the host runtime scans 256 values per block: 70,000 values need three levels of blocks

    x = np.random.default_rng(1).integers(0, 5000, size=70_000).astype(np.uint32)
    out, cursor = np.empty(70_000, np.uint32), np.empty(70_000, np.uint32)
    cuda_msm._exclusive_scan(rt, x, len(x), out, cursor)
    want = (np.cumsum(x, dtype=np.uint64) - x).astype(np.uint32)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(cursor, want)


def test_phase_marks_cover_the_plan(rt):
    from cuzk.kernels.cuda_msm import MSM_PHASES

    pts, logs, scalars = _instance("g1", 16, seed=4)
    marks = []
    arr, sc = pyref.g1_to_array(pts), pyref.canon_limbs(scalars)
    got = cuda.run_msm(rt, "g1", arr.view(np.uint32), sc.view(np.uint32), 16, marks=marks)
    np.testing.assert_array_equal(got, _expected("g1", logs, scalars))
    assert [name for name, _ in marks] == ["start", *MSM_PHASES]
    assert all(rt.elapsed_ms(a, b) >= 0 for (_, a), (_, b) in zip(marks, marks[1:]))


def test_too_many_pairs_are_refused_before_any_launch(rt, monkeypatch):

    monkeypatch.setattr(rt, "launch", lambda *a, **k: pytest.fail("launched"))
    n = cuda_msm.MSM_MAX_POINTS + 1
    with pytest.raises(InputError, match="2\\^32 \\(bucket, point\\) pairs.*at most 268,435,455 points"):
        cuda.run_msm(rt, "g1", None, None, n)
    with pytest.raises(InputError, match="c=13"):
        cuda.run_msm(rt, "g1", None, None, (1 << 32) // 20 + 1, c=13)
    cuda_msm.check_msm_size(cuda_msm.MSM_MAX_POINTS)  # the limit itself is fine


def test_degenerate_sums(rt):
    pts, logs, _ = _instance("g1", 16, seed=2)
    zero = np.zeros((2, 6), np.uint64)
    np.testing.assert_array_equal(_run(rt, "g1", pts, [0] * 16), zero)  # all scalars zero
    np.testing.assert_array_equal(_run(rt, "g1", [None] * 4, [5, 6, 7, 8]), zero)  # all infinity
    p = pts[3]
    neg = (p[0], (-p[1]) % pyref.P)
    np.testing.assert_array_equal(_run(rt, "g1", [p, neg], [9, 9]), zero)  # P + (-P)
    np.testing.assert_array_equal(_run(rt, "g1", [p], [r - 1]), pyref.g1_to_array([neg])[0])  # -P
    np.testing.assert_array_equal(_run(rt, "g1", [], []), zero)  # empty MSM


@pytest.mark.parametrize("group", ["g1", "g2"])
def test_matches_cpu_backend_when_present(rt, group):
    cpu = pytest.importorskip("cuzk.curves").get("bls12_381").kernels
    pts, _, scalars = _instance(group, 64, seed=7)
    arr, sc = _GROUPS[group][3](pts), pyref.canon_limbs(scalars)
    try:
        want = getattr(cpu, f"msm_{group}")(arr, sc)
    except Exception as e:  # the CPU backend is someone else's work in progress
        pytest.skip(f"cuzk.kernels.cpu.msm_{group} is not usable here: {type(e).__name__}: {str(e)[:200]}")
    np.testing.assert_array_equal(_run(rt, group, pts, scalars), want)


def _signed_digits(k: int, c: int, nw: int):
    """Python reference of msm.cu's digits: (window, |d|, negative) for each non-zero digit."""
    out, carry, B = [], 0, 1 << (c - 1)
    for w in range(nw):
        d = ((k >> (w * c)) & ((1 << c) - 1)) + carry
        carry = int(d > B)
        if carry:
            d = (1 << c) - d
        if d:
            out.append((w, d, bool(carry)))
    return out


@pytest.mark.parametrize("c", [3, 8, 13])
def test_counting_sort_places_every_digit_once(rt, c):
    rng = random.Random(c)
    ks = [rng.randrange(r) for _ in range(40)] + [0, 1, r - 1, (1 << 254) - 1] + [12345] * 20
    n, nw, B = len(ks), 255 // c + 1, 1 << (c - 1)
    sc = pyref.canon_limbs(ks).view(np.uint32)
    counts = np.zeros(nw * B, np.uint32)
    rt.launch("msm_digit_count", 1, n, (sc, n, c, nw, counts))
    want = {}
    for i, k in enumerate(ks):
        assert sum((-1 if neg else 1) * d << (w * c) for w, d, neg in _signed_digits(k, c, nw)) == k
        for w, d, neg in _signed_digits(k, c, nw):
            want.setdefault(w * B + d - 1, []).append(i | (neg << 31))
    assert {b: int(v) for b, v in enumerate(counts) if v} == {b: len(v) for b, v in want.items()}
    starts = (np.cumsum(counts, dtype=np.int64) - counts).astype(np.uint32)
    out = np.full(int(counts.sum()), 0xFFFFFFFF, np.uint32)
    rt.launch("msm_digit_scatter", 1, n, (sc, n, c, nw, starts.copy(), out))
    for b, vals in want.items():
        assert sorted(out[starts[b] : starts[b] + counts[b]].tolist()) == sorted(vals)


# ---------------------------------------------------------------- BN254 (its own harness build)
@pytest.fixture(scope="module")
def bn_rt():
    return host_runtime.get_runtime(curve="bn254")


@pytest.mark.parametrize("group,n,c", [("g1", 64, None), ("g1", 40, 3), ("g1", 24, 13), ("g2", 48, None)])
def test_bn254_msm_matches_discrete_log_reference(bn_rt, group, n, c):
    # BN254's 4-limb Fq (8 words per coordinate) and 254-bit r, default and extreme window widths
    pts, logs, scalars = _instance(group, n, seed=n, curve="bn254")
    np.testing.assert_array_equal(_run(bn_rt, group, pts, scalars, c), _expected(group, logs, scalars, "bn254"))


def test_bn254_degenerate_sums(bn_rt):
    ref = pyref.get("bn254")
    pts, _, _ = _instance("g1", 8, seed=2, curve="bn254")
    zero = np.zeros((2, 4), np.uint64)
    p = pts[3]
    neg = (p[0], (-p[1]) % ref.P)
    np.testing.assert_array_equal(_run(bn_rt, "g1", [p, neg], [9, 9]), zero)  # P + (-P)
    np.testing.assert_array_equal(_run(bn_rt, "g1", [p], [ref.R - 1]), ref.g1_to_array([neg])[0])  # -P
    np.testing.assert_array_equal(_run(bn_rt, "g2", [None] * 3, [5, 6, 7]), np.zeros((2, 2, 4), np.uint64))
    np.testing.assert_array_equal(_run(bn_rt, "g1", [], []), zero)  # empty MSM


@pytest.mark.parametrize("group", ["g1", "g2"])
def test_bn254_matches_its_cpu_backend(bn_rt, group):
    pts, _, scalars = _instance(group, 32, seed=9, curve="bn254")
    arr, sc = _groups("bn254")[group][3](pts), pyref.canon_limbs(scalars)
    want = getattr(curves.get("bn254").kernels, f"msm_{group}")(arr, sc)
    np.testing.assert_array_equal(_run(bn_rt, group, pts, scalars), want)
