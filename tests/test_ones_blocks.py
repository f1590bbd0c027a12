"""Block sums of a query's points (cuzk.kernels.ones_blocks): the bit-aware MSM with them is the
same group element as without, the plan adds exactly the ones, and a table that is not of the
points is refused."""

import numba
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from cuzk import curves
from cuzk.errors import InputError
from cuzk.field.jit import readonly
from cuzk.kernels import msm_bits, ones_blocks as ob
from cuzk.kernels.bit_split import split_bits

CURVES = ("bls12_381", "bn254", "bls12_377")


def _points(curve: str, group: str, logs):
    cv = curves.get(curve)
    G = cv.G1 if group == "g1" else cv.G2
    bm = cv.kernels.batch_mul_g1 if group == "g1" else cv.kernels.batch_mul_g2
    return readonly(bm(G.generator(), cv.Fr.ints_to_limbs([x % cv.Fr.modulus for x in logs]), threads=1)), G


def _scalar_rows(cv, ks):
    return readonly(cv.Fr.ints_to_limbs([k % cv.Fr.modulus for k in ks]))


def _coefficients(n: int, block: int, src: np.ndarray) -> np.ndarray:
    """What the sources add, per row: +1 for a row, +1 for each row of a block sum, -1 for a negated row."""
    coef = np.zeros(n, np.int64)
    for r in src.tolist():
        if r < 0:
            coef[-1 - r] -= 1
        elif r >= n:
            coef[(r - n) * block:(r - n + 1) * block] += 1
        else:
            coef[r] += 1
    return coef


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0, 1, 1, 1, 2]), min_size=0, max_size=300), st.sampled_from(ob.BLOCK_SIZES),
       st.integers(1, 3))
def test_the_plan_adds_each_one_once_with_no_more_additions_than_the_ones(classes, block, threads):
    n = len(classes)
    sc = np.zeros((n, 4), np.uint64)
    cls = np.array(classes, np.int64)
    sc[cls == 1, 0] = 1
    sc[cls == 2, 0] = 5
    split = split_bits(sc, 1)
    fake = ob.OnesBlocks(None, block, n, np.zeros((n // block, 2, 6), np.uint64))
    src = ob.planned_sources(fake, split, threads)
    np.testing.assert_array_equal(_coefficients(n, block, src), (cls == 1).astype(np.int64))
    want = 0  # the module doc's count: min(ones, 1 + zeros) for a block of 0s and 1s only
    for b in range(0, n - n % block, block):
        blk = cls[b:b + block]
        k1, k0 = int((blk == 1).sum()), int((blk == 0).sum())
        want += 1 + k0 if k1 + k0 == block and 1 + k0 < k1 else k1
    want += int((cls[n - n % block:] == 1).sum())
    assert len(src) == want <= len(split.ones)


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("group", ["g1", "g2"])
@pytest.mark.parametrize("block", ob.BLOCK_SIZES)
def test_the_bit_aware_msm_with_block_sums_is_the_general_msm(curve, group, block):
    # mostly ones (blocks taken as sums less zeros), some other values, a partial last block, and
    # points that make the sums meet their edge cases: identities, a point twice (a block sum
    # doubles), a point and its negation (a block sums to the identity)
    cv = curves.get(curve)
    rng = np.random.default_rng(block)
    n = 4 * 613 + 3
    logs = [int(x) for x in rng.integers(1, 1 << 62, n)]
    for i in range(0, n, 29):
        logs[i] = 0
    for i in range(5, n - 1, 37):
        logs[i + 1] = logs[i]
    for i in range(7, n - 1, 41):
        logs[i + 1] = -logs[i]
    pts, G = _points(curve, group, logs)
    u = rng.random(n)
    ks = [1 if x < 0.75 else 0 if x < 0.95 else int(rng.integers(2, 1 << 62)) for x in u]
    sc = _scalar_rows(cv, ks)
    kern = cv.kernels
    bits, general = getattr(kern, f"msm_bits_{group}"), getattr(kern, f"msm_{group}")
    blocks = kern.ones_blocks(group, pts, block, threads=2)
    assert blocks.sums.shape == (n // block, 2) + kern.group(group).coord and not blocks.sums.flags.writeable
    got = bits(pts, sc, 2, blocks=blocks)
    np.testing.assert_array_equal(got, general(pts, sc, 2))
    assert G.eq(got, G.mul(G.generator(), sum(a * b for a, b in zip(logs, ks)) % cv.Fr.modulus))
    # the plan did use block sums, and negated points where a block may hold a zero (not in pairs)
    src = ob.planned_sources(blocks, split_bits(sc, 1), 1)
    assert (src >= n).any() and ((src < 0).any() or block == 2)


@pytest.mark.parametrize("group", ["g1", "g2"])
def test_the_ifma_gather_reads_rows_block_sums_and_negated_rows(group):
    cv = curves.get("bls12_381")
    logs = list(range(1, 13))
    pts, G = _points("bls12_381", group, logs)
    blocks = cv.kernels.ones_blocks(group, pts, 4)
    src = readonly(np.array([3, 12 + 1, -1 - 5, 11], np.int64))  # row 3, block 1's sum, -row 5, row 11
    out = np.zeros((4, 2) + cv.kernels.group(group).coord, np.uint64)
    cv.kernels.group(group).kernels.gather_sources(pts, blocks.sums, src, 0, 4, out)
    for got, k in zip(out, [4, 5 + 6 + 7 + 8, -6, 12]):
        assert G.eq(got, G.mul(G.generator(), k % cv.Fr.modulus))


def test_a_table_that_is_not_of_the_points_is_refused():
    cv = curves.get("bls12_381")
    kern = cv.kernels
    pts, _ = _points("bls12_381", "g1", range(1, 101))
    other, _ = _points("bls12_381", "g1", range(2, 102))
    sc = _scalar_rows(cv, [1] * 100)
    with pytest.raises(InputError, match=r"not of these points \(block 0 differs\)"):
        kern.msm_bits_g1(pts, sc, blocks=kern.ones_blocks("g1", other, 4))
    with pytest.raises(InputError, match="of 99 points, the MSM has 100"):
        kern.msm_bits_g1(pts, sc, blocks=kern.ones_blocks("g1", other[:99], 4))
    g2pts, _ = _points("bls12_381", "g2", range(1, 101))
    with pytest.raises(InputError, match="are of G2, the MSM of G1"):
        kern.msm_bits_g1(pts, sc, blocks=kern.ones_blocks("g2", g2pts, 4))
    with pytest.raises(InputError, match="must be a cuzk.kernels.ones_blocks.OnesBlocks"):
        kern.msm_bits_g1(pts, sc, blocks=pts)
    for bad in (3, 0, True, 4.0, "4"):
        with pytest.raises(InputError, match="block must be one of"):
            kern.ones_blocks("g1", pts, bad)
    with pytest.raises(InputError, match="points must be an"):
        kern.ones_blocks("g1", g2pts, 4)
    # a sum changed where the check samples it (the first and the last block always are)
    good = kern.ones_blocks("g1", pts, 4)
    sums = good.sums.copy()
    sums[-1] = sums[0]
    with pytest.raises(InputError, match=r"block 24 differs"):
        kern.msm_bits_g1(pts, sc, blocks=ob.OnesBlocks(good.group, 4, 100, readonly(sums)))


def test_the_prover_keeps_block_sums_and_proves_the_same_bytes(monkeypatch):
    import cuzk
    from cuzk.groth16 import bit_msm, create_proof, setup, verify
    from test_bit_msm import _bits_circuit

    xs = [3, 2**64 - 1, 12345678901234, 1, 0, 77, 2**63, 5]
    synth = cuzk.Synthesizer(_bits_circuit(len(xs)), curve="bn254")
    pk, vk = setup(synth.r1cs, rng=np.random.default_rng(3))
    w = synth.synthesize(xs=xs, out=sum(xs))
    want = create_proof(pk, w, 5, 6, backend="cpu")
    monkeypatch.setattr(bit_msm, "AUTO_MIN_POINTS", 0)  # the key's queries are a few hundred rows
    used = []
    real = msm_bits.msm_bits
    monkeypatch.setattr(msm_bits, "msm_bits", lambda *a, **k: (used.append(k.get("blocks")), real(*a, **k))[1])
    prover = cuzk.GpuProver(pk, device="cpu", bit_msm=True, ones_blocks=2)
    assert set(prover.blocks) == {"a", "b_g1", "b_g2", "l"}
    assert prover.ones_blocks_bytes == sum(b.nbytes for b in prover.blocks.values()) > 0
    assert "ones_blocks=" in repr(prover)
    proof = prover.prove(w, r=5, s=6)
    assert proof == want and verify(vk, [sum(xs)], proof)
    assert len(used) == 4 and all(isinstance(b, ob.OnesBlocks) for b in used)
    with pytest.raises(InputError, match="ones_blocks needs bit_msm"):
        cuzk.GpuProver(pk, device="cpu", ones_blocks=4)
    with pytest.raises(InputError, match="block must be one of"):
        cuzk.GpuProver(pk, device="cpu", bit_msm="auto", ones_blocks=5)


def test_an_engine_keeps_block_sums_counted_with_the_key(monkeypatch):
    import cuzk
    from cuzk.groth16 import bit_msm, setup, verify
    from test_bit_msm import _bits_circuit

    monkeypatch.setattr(bit_msm, "AUTO_MIN_POINTS", 0)  # the key's queries are a few hundred rows
    xs = [3, 2**64 - 1, 12345678901234, 1, 0, 77, 2**63, 5]
    synth = cuzk.Synthesizer(_bits_circuit(len(xs)), curve="bn254")
    pk, vk = setup(synth.r1cs, rng=np.random.default_rng(3))
    with cuzk.Engine(device="cpu", memory_budget=None) as e:
        e.register("bits", synth, pk, ones_blocks=4)
        route = e._route("bits")
        want = sum(getattr(pk, q)[:1].nbytes * (getattr(pk, q).shape[0] // 4) for q in bit_msm.BIT_QUERIES)
        assert route.blocks_bytes() == want > 0
        proof = e.submit("bits", {"xs": xs, "out": sum(xs)}).result(timeout=120)
        assert verify(vk, [sum(xs)], proof)
        (prover,) = route._provers.values()
        assert prover.ones_blocks_bytes == want and set(prover.blocks) == set(bit_msm.BIT_QUERIES)
        held = route.key_bytes_reserved
        assert held == route.estimated_key_bytes()
        assert route.evict() == want and route.key_bytes_reserved == held - want  # the key stays the host's
        assert verify(vk, [sum(xs)], e.submit("bits", {"xs": xs, "out": sum(xs)}).result(timeout=120))
        assert route.key_bytes_reserved == held  # reserved again with the sums rebuilt
        for bad in (3, "4", True):
            with pytest.raises(InputError, match="circuit 'b2': ones_blocks: block must be one of"):
                e.register("b2", synth, pk, ones_blocks=bad)

        class Echo:
            def prove(self, w):
                return w

        with pytest.raises(InputError, match="ones_blocks needs a proving key"):
            e.register("b3", synth, Echo(), ones_blocks=4)
        assert e.circuits() == ("bits",)


@pytest.mark.skipif(__import__("platform").machine().lower() not in ("x86_64", "amd64"), reason="x86 mnemonics")
def test_the_ones_sum_hints_its_next_points_into_the_cache():
    # the sources skip rows at random, where the hardware prefetcher cannot follow: sum_rows asks
    # for each point PREFETCH_AHEAD sources ahead (a hint: no value depends on it, so only the code shows it)
    cv = curves.get("bls12_381")
    g = cv.kernels.group("g1")
    pts, _ = _points("bls12_381", "g1", range(1, 9))
    fresh = numba.njit(nogil=True)(g.kernels.sum_rows.py_func)  # a cached kernel keeps no assembly to show
    sums = np.zeros((2, 4) + g.coord, np.uint64)
    rows = readonly(np.arange(8, dtype=np.int64))
    for k, kernel in enumerate((fresh, g.kernels.sum_rows)):
        kernel(pts, msm_bits._NO_BLOCKS(g), rows, np.int64(0), np.int64(8), sums, np.int64(k))
    np.testing.assert_array_equal(sums[0], sums[1])
    assert "prefetcht0" in fresh.inspect_asm(fresh.signatures[0])
