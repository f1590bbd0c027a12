"""The device's whole-operation PTX blocks (mont_asm_<curve>.h) compute what the host chains do, per curve.

The blocks only run on a GPU, so their text is executed by a small PTX interpreter
(tests/cuda_host/ptx_sim.py) on edge and random operands and compared with Python ints and with
the host build of field.cuh's named chains (the same operands through arith.cu on the shim):
identical limbs, not merely equal values. nvcc/NVRTC compile the blocks in test_cuda_compile.py.
"""

import random
import sys

import numpy as np
import pytest

from cuda_host import host_runtime, ptx_sim, pyref
from cuzk.curves import CURVES
from cuzk.field import FQ
from cuzk.kernels import cuda
from cuzk.kernels.cuda import ArithOp

sys.path.insert(0, str(cuda.CU_DIR.parents[2] / "scripts"))
import gen_cuda_asm  # noqa: E402

_FIELDS = ("fr", "fq")
CURVE_NAMES = sorted(CURVES)


def _field(curve: str, role: str):
    return getattr(CURVES[curve], role)


def _host(curve: str):
    return host_runtime.get_runtime(curve=curve)
_REF = {
    "add": lambda a, b, p, R: (a + b) % p,
    "sub": lambda a, b, p, R: (a - b) % p,
    "mul": lambda a, b, p, R: a * b * pow(R, -1, p) % p,
    "sqr": lambda a, b, p, R: a * a * pow(R, -1, p) % p,
}


def _words(values, n):
    raw = b"".join(v.to_bytes(4 * n, "little") for v in values)
    return np.frombuffer(raw, dtype=np.uint32).reshape(-1, n)


def _ints(words):
    return [int.from_bytes(np.ascontiguousarray(row).tobytes(), "little") for row in words]


def _operands(p: int, seed: int, n_random: int = 300):
    """Limb-boundary and top-of-range values (carries ripple furthest), all pairs, plus random."""
    edges = [0, 1, 2, p - 1, p - 2, (p - 1) // 2, (p + 1) // 2]
    edges += [(1 << k) - 1 for k in (32, 64, 128, 224, 254) if (1 << k) < p] + [1 << 31, 1 << 32]
    rng = random.Random(seed)
    a = [x for x in edges for _ in edges] + [rng.randrange(p) for _ in range(n_random)]
    b = [y for _ in edges for y in edges] + [rng.randrange(p) for _ in range(n_random)]
    return a, b


@pytest.mark.parametrize("curve", CURVE_NAMES)
def test_header_matches_a_fresh_generation(curve):
    assert gen_cuda_asm.output(curve) == ptx_sim.header(curve)
    assert ptx_sim.header(curve).read_text() == gen_cuda_asm.render(curve), "run: python3 scripts/generate.py"


@pytest.mark.parametrize("curve", CURVE_NAMES)
def test_every_block_is_parsed_and_only_known_instructions_are_used(curve):
    blocks = ptx_sim.load_blocks(curve=curve)
    assert set(blocks) == {f"{f}_{op}" for f in _FIELDS for op in gen_cuda_asm.OPS}


@pytest.mark.parametrize("op", gen_cuda_asm.OPS)
@pytest.mark.parametrize("field", _FIELDS)
@pytest.mark.parametrize("curve", CURVE_NAMES)
def test_ptx_block_matches_python_ints(curve, field, op):
    f = _field(curve, field)
    p, n, R = f.modulus, f.limbs * 2, 1 << (64 * f.limbs)
    a, b = _operands(p, seed=len(op) + n)
    fn = ptx_sim.load_blocks(curve=curve)[f"{field}_{op}"]
    args = (_words(a, n), _words(b, n)) if op != "sqr" else (_words(a, n),)
    got = _ints(fn(*args))
    assert got == [_REF[op](x, y, p, R) for x, y in zip(a, b)]


@pytest.mark.skipif(not host_runtime.shutil.which("g++"), reason="g++ is needed for the host shim")
@pytest.mark.parametrize("op", gen_cuda_asm.OPS)
@pytest.mark.parametrize("field", _FIELDS)
@pytest.mark.parametrize("curve", CURVE_NAMES)
def test_ptx_block_and_host_chain_give_identical_limbs(curve, field, op):
    # the same Montgomery operands through both versions of the operation
    f = _field(curve, field)
    p, n = f.modulus, f.limbs * 2
    a, b = _operands(p, seed=7, n_random=100)
    A, B = pyref.to_mont_limbs(a, f), pyref.to_mont_limbs(b, f)
    chain = cuda.field_op(_host(curve), field, ArithOp[op.upper()], A, B).view(np.uint32)
    fn = ptx_sim.load_blocks(curve=curve)[f"{field}_{op}"]
    block = fn(A.view(np.uint32), B.view(np.uint32)) if op != "sqr" else fn(A.view(np.uint32))
    np.testing.assert_array_equal(block, chain.reshape(-1, n))


def test_a_dropped_carry_in_the_ptx_is_caught():
    # the check above can fail: drop the carry-in of one multiply-add in the Fq product
    text = ptx_sim.HEADER.read_text()
    i = text.index("void fq_mul_asm")
    j = text.index("madc.lo.cc.u32", i + text[i:].index("row b[5]"))
    broken = text[:j] + "mad.lo.cc.u32 " + text[j + len("madc.lo.cc.u32 "):]
    fn = ptx_sim.load_blocks(broken)["fq_mul"]
    p, R = FQ.modulus, 1 << 384
    a, b = _operands(p, seed=1, n_random=50)
    got = _ints(fn(_words(a, 12), _words(b, 12)))
    assert got != [x * y * pow(R, -1, p) % p for x, y in zip(a, b)]


def test_interpreter_refuses_what_it_does_not_model():
    with pytest.raises(ValueError, match="not modelled"):
        ptx_sim._run(ptx_sim.parse_block(".reg .u32 t<1>;\nmov.u32 t0, 0;\nmul.hi.u32 t0, t0, t0;"), {}, 1)
    with pytest.raises(ValueError, match="not declared"):
        ptx_sim.parse_block("mov.u32 t0, 0;")
