"""field.cuh / ec.cuh on the CPU through the host shim, against Python ints and py_ecc, for
BLS12-381 and BN254 (the harness built with each curve's -DCUZK_CURVE_<NAME>).

The kernels in cuzk/kernels/cu/arith.cu run exactly as on a GPU except that the carry-chain
instructions are emulated (tests/cuda_shim.h).
"""

import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from py_ecc import optimized_bls12_381, optimized_bn128

from cuda_host import host_runtime, pyref
from cuzk.field import FQ, FR
from cuzk.errors import InputError
from cuzk.kernels import cuda, cuda_runtime
from cuzk.kernels.cuda import ArithOp, EcOp

pytestmark = pytest.mark.skipif(not host_runtime.shutil.which("g++"), reason="g++ is needed for the host shim")
CURVES = ("bls12_381", "bn254")
_ECC = {"bls12_381": optimized_bls12_381, "bn254": optimized_bn128}  # py_ecc's optimized curve of each

_REF = {
    ArithOp.ADD: lambda a, b, p: (a + b) % p,
    ArithOp.SUB: lambda a, b, p: (a - b) % p,
    ArithOp.MUL: lambda a, b, p: a * b % p,
    ArithOp.SQR: lambda a, b, p: a * a % p,
    ArithOp.NEG: lambda a, b, p: -a % p,
    ArithOp.DBL: lambda a, b, p: 2 * a % p,
}


def _edge_values(p: int) -> list[int]:
    # limb-boundary values and the top of the range, where carries ripple furthest
    edges = [0, 1, 2, p - 1, p - 2, (p - 1) // 2, (p + 1) // 2]
    edges += [(1 << k) - 1 for k in (32, 64, 128, 192, 224, 254) if (1 << k) < p]
    edges += [1 << k for k in (31, 32, 63, 64, 255) if (1 << k) < p]
    # values whose Montgomery form is p-1 or 1 (all-ones-heavy limbs inside the kernel)
    rinv = pow(2, -64 * (p.bit_length() // 64 + 1), p)
    edges += [(p - 1) * rinv % p, rinv]
    return edges


def _operands(p: int, n: int, seed: int) -> tuple[list[int], list[int]]:
    rng = random.Random(seed)
    e = _edge_values(p)
    a = [x for x in e for _ in e] + [rng.randrange(p) for _ in range(n)]
    b = [y for _ in e for y in e] + [rng.randrange(p) for _ in range(n)]
    return a, b


@pytest.fixture(scope="module")
def rt():
    return host_runtime.get_runtime()


@pytest.mark.parametrize("op", list(ArithOp))
@pytest.mark.parametrize("role", ["fr", "fq"])
@pytest.mark.parametrize("curve", CURVES)
def test_prime_field_ops_match_python_ints(curve, role, op):
    rt = host_runtime.get_runtime(curve=curve)
    field = getattr(rt.curve, role)
    p = field.modulus
    a, b = _operands(p, 2000, seed=op.value)
    got = cuda.field_op(rt, field.name, op, pyref.to_mont_limbs(a, field), pyref.to_mont_limbs(b, field))
    assert pyref.from_mont_limbs(got, field) == [_REF[op](x, y, p) for x, y in zip(a, b)]


@given(st.data())
def test_field_ops_property(data):
    # hypothesis drives the curve and operand values (shrinking to a minimal failing pair) on
    # top of the fixed random/edge batches above
    rt = host_runtime.get_runtime(curve=data.draw(st.sampled_from(CURVES)))
    field = data.draw(st.sampled_from([rt.curve.fr, rt.curve.fq]))
    op = data.draw(st.sampled_from(list(ArithOp)))
    p = field.modulus
    pairs = data.draw(st.lists(st.tuples(st.integers(0, p - 1), st.integers(0, p - 1)), min_size=1, max_size=32))
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    got = cuda.field_op(rt, field.name, op, pyref.to_mont_limbs(a, field), pyref.to_mont_limbs(b, field))
    assert pyref.from_mont_limbs(got, field) == [_REF[op](x, y, p) for x, y in pairs]


def _fq2_ref(ref, op, a, b):
    if op is ArithOp.MUL:
        return ref.fq2_mul(a, b)
    if op is ArithOp.SQR:
        return ref.fq2_mul(a, a)
    return tuple(_REF[op](x, y, ref.P) for x, y in zip(a, b))


@pytest.mark.parametrize("op", list(ArithOp))
@pytest.mark.parametrize("curve", CURVES)
def test_fq2_ops_match_python_ints(curve, op):
    rt, ref = host_runtime.get_runtime(curve=curve), pyref.get(curve)
    fq = rt.curve.fq
    a0, a1 = _operands(fq.modulus, 600, seed=10 + op.value)
    b1, b0 = _operands(fq.modulus, 600, seed=20 + op.value)
    a, b = list(zip(a0, a1)), list(zip(b0, b1))
    ga = pyref.to_mont_limbs([c for x in a for c in x], fq).reshape(-1, 2, fq.limbs)
    gb = pyref.to_mont_limbs([c for x in b for c in x], fq).reshape(-1, 2, fq.limbs)
    flat = pyref.from_mont_limbs(cuda.field_op(rt, "fq2", op, ga, gb), fq)
    assert list(zip(flat[0::2], flat[1::2])) == [_fq2_ref(ref, op, x, y) for x, y in zip(a, b)]


def _ecc_affine(ecc, r, k, gen):
    k %= r  # py_ecc recurses forever on negative scalars
    return None if k == 0 else ecc.normalize(ecc.multiply(gen, k))


def _as_ints(pt):
    if pt is None:
        return None
    if hasattr(pt[0], "coeffs"):
        return tuple((int(c.coeffs[0]), int(c.coeffs[1])) for c in pt)
    return (int(pt[0]), int(pt[1]))


def _pairs(r: int) -> list[tuple[int, int]]:
    # (k_p, k_q) pairs: generic, P = Q (doubling inside the addition), P = -Q, infinities
    return [(3, 5), (7, 7), (11, r - 11), (0, 9), (9, 0), (0, 0), (123456789, 987654321), (2, 2)]


@pytest.mark.parametrize("group", ["g1", "g2"])
@pytest.mark.parametrize("op", list(EcOp))
@pytest.mark.parametrize("curve", CURVES)
def test_curve_ops_match_py_ecc(curve, group, op):
    rt, ref, ecc = host_runtime.get_runtime(curve=curve), pyref.get(curve), _ECC[curve]
    r = ref.R
    gen = ecc.G1 if group == "g1" else ecc.G2
    to_array = ref.g1_to_array if group == "g1" else ref.g2_to_array
    pairs = _pairs(r)
    ps = [_as_ints(_ecc_affine(ecc, r, kp, gen)) for kp, _ in pairs]
    qs = [_as_ints(_ecc_affine(ecc, r, kq, gen)) for _, kq in pairs]
    sign = {EcOp.ADD_MIXED: 1, EcOp.SUB_MIXED: -1, EcOp.ADD: 1, EcOp.DBL: 0}[op]
    want = [_as_ints(_ecc_affine(ecc, r, kp + sign * kq if op is not EcOp.DBL else 2 * kp, gen)) for kp, kq in pairs]
    got = cuda.ec_op(rt, group, op, to_array(ps), to_array(qs))
    np.testing.assert_array_equal(np.stack(got), to_array(want))


def test_every_kernel_declares_launch_bounds_and_is_registered_in_the_harness(rt):
    texts = [(cuda.CU_DIR / f).read_text() for f in cuda.KERNEL_FILES]
    # a __global__ without __launch_bounds__ would be missing from launch_bounds(): count both
    assert sum(t.count("__global__") for t in texts) == sum(len(cuda_runtime._KERNEL_DECL.findall(t)) for t in texts)
    assert set(cuda_runtime.launch_bounds()) == set(rt.kernel_names())
    assert cuda.BLOCK["BLOCK_NTT"] == 1 << (cuda.BLOCK["NTT_MAX_STAGES"] - 1)


def test_a_launch_the_device_would_refuse_is_refused_by_name(rt):
    x = np.zeros((16, 8), dtype=np.uint32)
    with pytest.raises(InputError, match="ntt_stages: 1024 threads per block.*1..512"):
        rt.launch("ntt_stages", 1, 1024, (x, x, x, 4, 0, 4, 1), smem=1024 * 64)
    with pytest.raises(InputError, match="48 KiB"):
        rt.launch("ntt_stages", 1, 256, (x, x, x, 4, 0, 4, 1), smem=64 << 10)
    with pytest.raises(InputError, match="no CUDA kernel named 'ntt_bitrev'"):
        rt.launch("ntt_bitrev", 1, 32, (x,))


@pytest.mark.xfail(strict=True, reason="a dropped carry (CUZK_BREAK_CARRY) must be caught by the field tests")
def test_dropped_carry_is_detected():
    broken = host_runtime.get_runtime(("CUZK_BREAK_CARRY", "CUZK_HARNESS_ARITH_ONLY"))
    for field in (FR, FQ):
        a, b = _operands(field.modulus, 200, seed=99)
        got = cuda.field_op(broken, field.name, ArithOp.MUL, pyref.to_mont_limbs(a, field), pyref.to_mont_limbs(b, field))
        assert pyref.from_mont_limbs(got, field) == [x * y % field.modulus for x, y in zip(a, b)]
