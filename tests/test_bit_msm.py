"""The bit-aware MSMs: the CPU and CUDA (host shim, fake CuPy) sums, the prover option (the split
scan and its check: tests/test_bit_split.py).

Points are multiples t_i·G of the generator with known t_i, so the expected MSM is one scalar
multiplication (Σ k_i·t_i)·G, independent of any bucket logic; the general MSM must give the
same limbs.
"""

import inspect
import pathlib
import sys

import numpy as np
import pytest

from cuzk import curves
from cuzk.errors import InputError
from cuzk.field.jit import readonly
from cuzk.kernels import bit_split, msm_bits, msm_cpu
from cuzk.curves import get as _get_curve
cpu = _get_curve("bls12_381").kernels  # BLS12-381's CPU kernels
from cuzk.kernels.bit_split import BitSplit, split_bits
from cuzk.kernels.msm_cost import IFMA_MIN_POINTS

CURVES = ("bls12_381", "bn254", "bls12_377")
MIXES = ("zeros", "ones", "none", "mixed", "r-1", "bits")


def _group(cv, group):
    k = cv.kernels
    return k.group(group)


def _scalars(cv, n: int, mix: str, rng) -> list[int]:
    r = cv.Fr.modulus
    if mix == "zeros":
        return [0] * n
    if mix == "ones":
        return [1] * n
    if mix == "none":  # no 0 or 1 at all
        return [int(rng.integers(2, 1 << 62)) ** 4 % (r - 2) + 2 for _ in range(n)]
    if mix == "r-1":
        return [[0, 1, r - 1][i % 3] for i in range(n)]
    if mix == "bits":
        return [int(rng.integers(0, 2)) for _ in range(n)]
    u = rng.random(n)  # "mixed": PoRep-like, ~90 % bits, the rest anything (small, large, 2^64)
    edges = [2, r - 1, 1 << 64, (1 << 128) - 1, r - 2]
    return [0 if x < 0.45 else 1 if x < 0.9 else edges[i % 5] if x < 0.95 else int(rng.integers(0, 1 << 62)) ** 4 % r
            for i, x in enumerate(u)]


def _instance(curve: str, group: str, n: int, mix: str, seed: int):
    """(points, logs, scalar ints): n multiples of the generator, a few identities and duplicates."""
    cv = curves.get(curve)
    G = cv.G1 if group == "g1" else cv.G2
    rng = np.random.default_rng(seed)
    logs = [int(x) for x in rng.integers(1, 1 << 62, n)]
    for i in rng.choice(n, max(1, n // 16), replace=False):  # identities
        logs[i] = 0
    for i in rng.choice(n, max(2, n // 8), replace=False):  # duplicates of one point
        logs[i] = logs[0]
    bm = cv.kernels.batch_mul_g1 if group == "g1" else cv.kernels.batch_mul_g2
    pts = bm(G.generator(), cv.Fr.ints_to_limbs(logs), threads=1)
    return pts, logs, _scalars(cv, n, mix, rng)


def _expected(curve: str, group: str, logs, ks):
    cv = curves.get(curve)
    G = cv.G1 if group == "g1" else cv.G2
    return G.mul(G.generator(), sum(a * b for a, b in zip(logs, ks)) % cv.Fr.modulus)


# ----------------------------------------------------------------------------- split

# ----------------------------------------------------------------------------- CPU

@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("group", ["g1", "g2"])
@pytest.mark.parametrize("mix", MIXES)
def test_cpu_bit_msm_equals_the_general_msm_and_the_reference(curve, group, mix):
    cv = curves.get(curve)
    pts, logs, ks = _instance(curve, group, 160, mix, seed=hash((curve, group, mix)) % 1000)
    g = _group(cv, group)
    sc = cv.Fr.ints_to_limbs(ks)
    got = msm_bits.msm_bits(g, pts, sc, threads=1)
    np.testing.assert_array_equal(got, msm_cpu.msm(g, pts, sc, threads=1))
    G = cv.G1 if group == "g1" else cv.G2
    assert G.eq(got, _expected(curve, group, logs, ks))


def test_cpu_bit_msm_over_many_slices_and_threads(monkeypatch):
    # tasks of 64 ones on 2 threads: every task's sum and their XYZZ combination are exercised
    monkeypatch.setattr(msm_bits, "_ONES_PER_TASK", 64)
    monkeypatch.setattr(msm_bits, "_ONES_SLICE", 64)  # the same on an IFMA host
    pts, logs, ks = _instance("bls12_381", "g1", 1000, "bits", seed=3)
    sc = curves.get("bls12_381").Fr.ints_to_limbs(ks)
    assert msm_bits.ones_sum(cpu.group("g1"), pts, split_bits(sc).ones, 2).shape[0] > 2
    np.testing.assert_array_equal(cpu.msm_bits_g1(pts, sc, threads=2), cpu.msm_g1(pts, sc, threads=2))


def _multiples(curve: str, group: str, logs):
    cv = curves.get(curve)
    G = cv.G1 if group == "g1" else cv.G2
    bm = cv.kernels.batch_mul_g1 if group == "g1" else cv.kernels.batch_mul_g2
    return bm(G.generator(), cv.Fr.ints_to_limbs([x % cv.Fr.modulus for x in logs]), threads=1), G


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("group", ["g1", "g2"])
def test_sum_rows_over_several_steps_with_doublings_cancellations_and_identities(curve, group):
    # 2·CHUNK + 300 rows: accumulator j meets rows j, j + CHUNK, j + 2·CHUNK. Row j + CHUNK
    # repeats row j's point (the accumulator doubles), or is its negation (P + (−P): the
    # accumulator becomes the identity and row j + 2·CHUNK sets it again), or is the identity.
    cv = curves.get(curve)
    g = _group(cv, group)
    chunk = int(g.kernels.CHUNK)
    rng = np.random.default_rng(5)
    n = 2 * chunk + 300
    logs = [int(x) for x in rng.integers(1, 1 << 62, n)]
    for j in range(0, chunk, 7):
        logs[j + chunk] = logs[j]
    for j in range(3, chunk, 11):
        logs[j + chunk] = -logs[j]
    for j in range(5, n, 13):
        logs[j] = 0
    pts, G = _multiples(curve, group, logs)
    rows = msm_bits._rows(np.arange(n))
    none = readonly(np.empty((0, 2) + g.coord, np.uint64))  # no block sums: the rows themselves
    sums = np.zeros((2, 4) + g.coord, np.uint64)
    g.kernels.sum_rows(pts, none, rows, 0, n - 100, sums, 0)  # an uneven cut: a short last step
    g.kernels.sum_rows(pts, none, rows, n - 100, n, sums, 1)
    assert G.eq(g.kernels.combine_slices(sums, 0, 2), G.mul(G.generator(), sum(logs) % cv.Fr.modulus))
    g.kernels.sum_rows(pts, none, rows, 7, 7, sums, 0)  # no rows: the identity
    assert not g.kernels.combine_slices(sums[:1], 0, 1).any()


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("group", ["g1", "g2"])
def test_repeated_other_values_are_summed_per_value_before_their_msm(curve, group):
    # 600 rows, mostly bits. Others: every 3rd row of the first 180 takes one of 5 values (groups
    # of 12), and pairs of rows share a value with a point twice (the group sum doubles it), a
    # point and its negation (the group sums to the identity), an identity point, and two values
    # with the same low limb (5 and 2^64 + 5: separate groups)
    cv = curves.get(curve)
    g = _group(cv, group)
    r = cv.Fr.modulus
    rng = np.random.default_rng(8)
    ks = [int(x) for x in rng.integers(0, 2, 600)]
    logs = [int(x) for x in rng.integers(1, 1 << 62, 600)]
    common = [r - 1, 1 << 200, 12345678901234567890123, 3, r // 3]
    for i in range(0, 180, 3):
        ks[i] = common[(i // 3) % 5]
    pairs = {(301, 302): r - 2, (304, 305): 2, (307, 308): 7, (310, 311): 5, (313, 314): (1 << 64) + 5}
    for (i, j), v in pairs.items():
        ks[i] = ks[j] = v
    logs[302] = logs[301]  # P + P
    logs[305] = -logs[304]  # P + (−P)
    logs[308] = 0  # the identity
    pts, G = _multiples(curve, group, logs)
    sc = cv.Fr.ints_to_limbs(ks)
    s = split_bits(sc)
    rows, start, vals = msm_bits.group_others(sc, s.others)
    assert len(s.others) == 70 and len(vals) == 10
    bounds = list(start) + [len(rows)]
    assert sorted(rows.tolist()) == s.others.tolist()
    for b in range(len(vals)):  # every group holds the rows of its value, and only those
        assert (sc[rows[bounds[b]:bounds[b + 1]]] == vals[b]).all()
    got = msm_bits.msm_bits(g, pts, sc, threads=2)
    np.testing.assert_array_equal(got, msm_cpu.msm(g, pts, sc, threads=1))
    assert G.eq(got, G.mul(G.generator(), sum(a * b for a, b in zip(logs, ks)) % r))
    table = cv.kernels.precompute(group, pts, cv.kernels.FixedBasePlan(c=6, t=10))
    np.testing.assert_array_equal(msm_bits.msm_bits(g, table, sc, threads=1), got)  # grouped bases, not the table


def test_others_without_repeats_or_with_few_keep_the_table():
    # no repeated value: the others run as they are (over their table rows where there is a
    # table); a few repeats do not beat a table either (msm_bits._TABLE_GROUPED)
    pts, logs, ks = _instance("bls12_381", "g1", 300, "none", seed=4)
    cv = curves.get("bls12_381")
    ks[1], ks[2] = ks[0], ks[0]
    sc = cv.Fr.ints_to_limbs(ks)
    table = cpu.precompute("g1", pts, cpu.FixedBasePlan(c=6, t=10))
    want = cpu.msm_g1(pts, sc, threads=1)
    np.testing.assert_array_equal(cpu.msm_bits_g1(table, sc, threads=1), want)
    np.testing.assert_array_equal(cpu.msm_bits_g1(pts, sc, threads=1), want)
    distinct = cv.Fr.ints_to_limbs(list(range(2, 302)))
    np.testing.assert_array_equal(cpu.msm_bits_g1(pts, distinct, threads=1), cpu.msm_g1(pts, distinct, threads=1))


@pytest.mark.parametrize("curve,group", [("bn254", "g1"), ("bls12_381", "g2")])
def test_enough_ones_take_the_ifma_sum_where_the_cpu_has_it(curve, group):
    # from IFMA_MIN_POINTS ones the sum runs 8 additions at a time (AVX-512 IFMA only;
    # elsewhere this is the scalar path again, still checked)
    cv = curves.get(curve)
    pts, _, ks = _instance(curve, group, 2 * IFMA_MIN_POINTS + 300, "bits", seed=9)
    sc = cv.Fr.ints_to_limbs(ks)
    g = _group(cv, group)
    assert len(split_bits(sc).ones) >= IFMA_MIN_POINTS
    np.testing.assert_array_equal(msm_bits.msm_bits(g, pts, sc, threads=2), msm_cpu.msm(g, pts, sc, threads=2))


def test_the_kernel_functions_take_a_split_made_earlier_on_every_curve():
    for curve in ("bls12_381", "bn254"):
        cv = curves.get(curve)
        k = cv.kernels
        for group, msm, bits in (("g1", k.msm_g1, k.msm_bits_g1), ("g2", k.msm_g2, k.msm_bits_g2)):
            pts, _, ks = _instance(curve, group, 64, "mixed", seed=11)
            sc = cv.Fr.ints_to_limbs(ks)
            s = k.split_bits(sc)
            np.testing.assert_array_equal(bits(pts, sc, split=s), msm(pts, sc))


def test_a_precomputed_table_serves_the_ones_and_its_rows_the_others():
    pts, _, ks = _instance("bls12_381", "g1", 200, "mixed", seed=5)
    sc = curves.get("bls12_381").Fr.ints_to_limbs(ks)
    table = cpu.precompute("g1", pts, cpu.FixedBasePlan(c=6, t=10))
    np.testing.assert_array_equal(cpu.msm_bits_g1(table, sc, threads=1), cpu.msm_g1(pts, sc, threads=1))
    with pytest.raises(InputError, match="table is of G1"):
        cpu.msm_bits_g2(table, sc)


def test_bad_splits_and_inputs_are_refused():
    pts, _, ks = _instance("bls12_381", "g1", 16, "mixed", seed=2)
    sc = curves.get("bls12_381").Fr.ints_to_limbs(ks)
    s = split_bits(sc)
    with pytest.raises(InputError, match="BitSplit"):
        cpu.msm_bits_g1(pts, sc, split=(s.zeros, s.ones, s.others))
    with pytest.raises(InputError, match="split is of 16 scalars, the MSM has 15"):
        cpu.msm_bits_g1(pts[:15], sc[:15], split=s)
    other = sc.copy()
    other[s.others[0]] = [1, 0, 0, 0]  # same length, other values: the split's "other" row is fine ...
    cpu.msm_bits_g1(pts, other, split=s)
    other[s.ones[0]] = [5, 0, 0, 0]  # ... but a "one" row that is not 1 would sum wrongly
    with pytest.raises(InputError, match=f"row {s.ones[0]}"):
        cpu.msm_bits_g1(pts, other, split=s)
    dup = BitSplit(16, s.zeros, np.concatenate([s.ones[:1], s.ones[:-1]]), s.others)  # a repeated index
    with pytest.raises(InputError, match="does not match"):
        cpu.msm_bits_g1(pts, sc, split=dup)
    with pytest.raises(InputError, match="one scalar per point"):
        cpu.msm_bits_g1(pts[:3], sc)
    big = sc.copy()
    big[0] = bit_split.np.array([2**64 - 1] * 4, np.uint64)
    with pytest.raises(ValueError, match="not reduced"):
        cpu.msm_bits_g1(pts, big)
    with pytest.raises(InputError):
        cpu.msm_bits_g1(pts.astype(np.int64), sc)


def test_the_range_check_on_threads_names_the_first_unreduced_row(monkeypatch):
    # checks on two threads (both MSMs pass theirs): chunks of 1,000 rows, bad rows in the
    # second and fourth chunk: the first one is named, as on one thread
    from cuzk.errors import FieldValueError
    from cuzk.kernels import checks

    monkeypatch.setattr(checks, "_CHECK_CHUNK", 1000)
    r = curves.get("bls12_381").Fr.modulus
    sc = np.zeros((4000, 4), np.uint64)
    sc[3500] = [(r >> (64 * k)) & (2**64 - 1) for k in range(4)]  # r itself
    sc[1700, 3] = 2**64 - 1
    for threads in (1, 2):
        with pytest.raises(FieldValueError, match=r"scalars\[1700\]"):
            checks.check_field_rows(sc, "scalars", (4,), r, threads)
    assert checks.check_field_rows(sc[:1500], "scalars", (4,), r, 2).shape == (1500, 4)


def test_cpu_and_cuda_bit_msms_have_the_same_signature():
    cuda = pytest.importorskip("cuzk.kernels.cuda")
    for name in ("msm_bits_g1", "msm_bits_g2"):
        ours = [(p.name, p.kind, p.default) for p in inspect.signature(getattr(cpu, name)).parameters.values()]
        for other in (getattr(cuda.kernels_for(curves.get("bls12_381").cuda), name), getattr(cuda.CudaKernels, name)):
            params = list(inspect.signature(other).parameters.values())
            params = params[1:] if params[0].name == "self" else params
            assert [(p.name, p.kind, p.default) for p in params] == ours, (name, other)


# ----------------------------------------------------------------------------- prover

def _bits_circuit(k: int):
    from cuzk.circuit import Circuit
    from cuzk.circuit.gadgets import to_bits

    class Bits(Circuit):
        """k private 64-bit values decomposed into bits; public: their sum."""

        def define(self, cs, xs, out):
            acc = 0
            for x in xs:
                v = cs.private(x)
                to_bits(cs, v, 64)
                acc = acc + v
            cs.assert_equal(acc, cs.public(out))

        def input_shapes(self):
            return {"xs": (k,), "out": ()}

        def public_inputs(self, inputs):
            return [inputs["out"]]

    return Bits()


@pytest.fixture(scope="module")
def bits_key():
    import cuzk
    from cuzk.groth16 import setup

    xs = [3, 2**64 - 1, 12345678901234, 1, 0, 77, 2**63, 5]
    synth = cuzk.Synthesizer(_bits_circuit(len(xs)), curve="bn254")
    pk, vk = setup(synth.r1cs, rng=np.random.default_rng(3))
    return pk, vk, synth.synthesize(xs=xs, out=sum(xs)), sum(xs)


def test_the_prover_option_gives_the_same_proof_bytes(bits_key, monkeypatch):
    import cuzk
    from cuzk.groth16 import bit_msm, create_proof, verify

    pk, vk, w, out = bits_key
    want = create_proof(pk, w, 5, 6, backend="cpu")
    sc = bit_msm.splits_for(True, cpu, (np.zeros((3, 4), np.uint64),))
    assert isinstance(sc[0], BitSplit)
    monkeypatch.setattr(bit_msm, "AUTO_MIN_POINTS", 0)  # the key's queries are a few hundred rows
    used = []
    real = curves.get("bn254").kernels.msm_bits_g1
    monkeypatch.setattr(type(curves.get("bn254").kernels), "msm_bits_g1",
                        lambda self, *a, **k: (used.append(1), real(*a, **k))[1])
    for mode in (True, "auto"):
        used.clear()
        proof = cuzk.GpuProver(pk, device="cpu", bit_msm=mode).prove(w, r=5, s=6)
        assert proof == want and verify(vk, [out], proof) and not verify(vk, [out + 1], proof)
        assert len(used) == 3, mode  # A, B1 and L: the witness is mostly bits
    used.clear()
    assert cuzk.GpuProver(pk, device="cpu", bit_msm=False).prove(w, r=5, s=6) == want and not used
    assert "bit_msm='auto'" in repr(cuzk.GpuProver(pk, device="cpu", bit_msm="auto"))


def test_auto_leaves_queries_that_are_not_mostly_bits_to_the_general_msm():
    from cuzk.groth16 import bit_msm

    rng = np.random.default_rng(1)
    few = np.zeros((4096, 4), np.uint64)
    few[:, 0] = rng.integers(2, 1 << 60, 4096)
    few[:100, 0] = 1
    many = few.copy()
    many[:3000, 0] = 0
    got = bit_msm.splits_for("auto", cpu, (few, many, many[:10]), threads=1)
    assert got[0] is None and isinstance(got[1], BitSplit) and got[2] is None
    assert all(s is None for s in bit_msm.splits_for(False, cpu, (many,)))


def test_auto_stays_general_on_a_backend_that_says_so():
    from cuzk.groth16 import bit_msm
    from cuzk.kernels import cuda

    many = np.zeros((4096, 4), np.uint64)
    many[::2, 0] = 1

    class NoAuto:  # the CPU kernels with the CUDA backend's rule for "auto"
        AUTO_BIT_MSM = False

        def __getattr__(self, name):
            return getattr(cpu, name)

    assert cuda.AUTO_BIT_MSM is False and cuda.kernels_for(curves.get("bn254").cuda).AUTO_BIT_MSM is False
    assert bit_msm.splits_for("auto", NoAuto(), (many, many)) == (None, None)
    assert isinstance(bit_msm.splits_for(True, NoAuto(), (many,))[0], BitSplit)
    assert isinstance(bit_msm.splits_for("auto", cpu, (many,))[0], BitSplit)


def test_bad_modes_and_backends_are_refused(bits_key):
    import cuzk
    from cuzk.groth16 import create_proof

    pk, _, w, _ = bits_key
    for bad in ("yes", 1, None, "AUTO"):
        with pytest.raises(InputError, match="bit_msm must be"):
            cuzk.GpuProver(pk, device="cpu", bit_msm=bad)

    class Plain:  # a kernel object with the general MSMs only
        def __getattr__(self, name):
            if name.startswith("msm_bits"):
                raise AttributeError(name)
            return getattr(curves.get("bn254").kernels, name)

    with pytest.raises(InputError, match="no msm_bits_g1/g2"):
        create_proof(pk, w, 5, 6, backend=Plain(), bit_msm=True)
    assert create_proof(pk, w, 5, 6, backend=Plain(), bit_msm="auto") == create_proof(pk, w, 5, 6)


# ----------------------------------------------------------------------------- CUDA (host shim)

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from cuda_host import fake_cupy, host_runtime  # noqa: E402

needs_gpp = pytest.mark.skipif(not host_runtime.shutil.which("g++"), reason="g++ is needed for the host shim")


@needs_gpp
@pytest.mark.parametrize("curve", ["bls12_381", "bn254"])
@pytest.mark.parametrize("group", ["g1", "g2"])
@pytest.mark.parametrize("mix", ["mixed", "ones", "zeros", "none"])
def test_cuda_bit_msm_on_the_host_shim_equals_the_cpu(curve, group, mix, monkeypatch):
    from cuzk.kernels import cuda_bits

    rt = host_runtime.get_runtime(curve=curve)
    monkeypatch.setattr(rt, "bits_block", 2, raising=False)  # few threads per block: several blocks ...
    monkeypatch.setattr(cuda_bits, "_HOST_ROWS", 2)  # ... and tree levels over their partial sums
    cv = curves.get(curve)
    pts, _, ks = _instance(curve, group, 150, mix, seed=17)
    sc = cv.Fr.ints_to_limbs(ks)
    s = split_bits(sc)
    if mix == "mixed":
        assert cuda_bits.sum_launches(len(s.ones), 2)[1:], "the sum should need a tree level"
    got = cuda_bits.run_msm_bits(rt, group, rt.asarray(np.ascontiguousarray(pts).view(np.uint32)), s, sc)
    np.testing.assert_array_equal(got, msm_cpu.msm(_group(cv, group), pts, sc, threads=1))


def test_sum_launches_reduce_to_a_few_host_rows():
    from cuzk.kernels import cuda_bits

    assert cuda_bits.sum_launches(0) == []
    assert cuda_bits.sum_launches(1) == [1]
    assert cuda_bits.sum_launches(1 << 22, 128) == [4096, 4]
    assert cuda_bits.sum_launches(1000, 2) == [63]  # 1000 / (2 threads x 8) -> 63 <= 64 host rows
    with pytest.raises(ValueError, match="power-of-two"):
        cuda_bits._check_block(96)


@pytest.fixture
def fake_gpu(monkeypatch):
    from cuzk.kernels import cuda, cuda_runtime
    from cuzk.kernels.cuda_staging import PinnedRing

    fake = fake_cupy.make_fake_cupy(host_runtime.get_runtime(curve="bn254"))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(cuda_runtime, "_compile_cubin",
                        lambda arch, defines=(), curve="bls12_381": pathlib.Path(f"/nonexistent/cuzk_sm{arch}_{curve}.cubin"))
    monkeypatch.setattr(cuda_runtime, "_RUNTIMES", {})
    rt = cuda.get_runtime(0, curves.get("bn254").cuda)
    rt.ntt_max_stages, rt.ntt_columns = 4, 2
    rt.pinned = PinnedRing(bytearray, chunk=128, count=2)
    yield fake
    import gc

    gc.collect()
    assert fake.hazards == [], fake.hazards


@needs_gpp
def test_a_bit_aware_proof_through_the_cuda_code_path_equals_the_cpu_backend(bits_key, fake_gpu, monkeypatch):
    import cuzk
    from cuzk.groth16 import create_proof, verify
    from cuzk.kernels import cuda_bits

    pk, vk, w, out = bits_key
    from cuzk.kernels import cuda_kernels

    launched = []
    real = cuda_bits.run_msm_bits
    monkeypatch.setattr(cuda_kernels, "run_msm_bits", lambda *a: (launched.append(a[1]), real(*a))[1])
    want = create_proof(pk, w, 5, 6, backend="cpu")
    prover = cuzk.GpuProver(pk, device="cuda", bit_msm=True)
    launched.clear()  # the warm-up ran the plan once per group
    proof = prover.prove(w, r=5, s=6)
    assert proof == want and verify(vk, [out], proof)
    assert launched == ["g1", "g1", "g2", "g1"]  # A, B1, B2, L
    beside = cuzk.GpuProver(pk, device="cuda", bit_msm=True, g2_msm="cpu")  # MSM_B2 bit-aware on the CPU
    assert beside.prove(w, r=5, s=6) == want
    with pytest.raises(InputError, match="on the host"):
        prover._backend.msm_bits_g1(prover._bases.a, prover._backend.stage(np.zeros((len(pk.a), 4), np.uint64))[0])
