"""What keeps a first proof's Numba compile short (docs/perf/cold-start.md):
wrapper-less in-JIT kernels, one specialization per kernel (no literal-int or writable/read-only
twins), and the background warm-up, which leaves a proof nothing to compile."""

import pickle
import sys
import threading

import numpy as np
import pytest
from numba import njit
from numba.core import event
from test_groth16_support import CubeTag, keys_for

from cuzk import curves
from cuzk.circuit import Circuit
from cuzk.curve import G1
from cuzk.field import Fr
from cuzk.curves.bls12_381 import fq, fq2
from cuzk.field.jit import JitKernel, jit_kernel, readonly
from cuzk.groth16 import create_proof, setup, verify
from cuzk.groth16.warmup import start_warm_up, warm_up
from cuzk.kernels import msm_cpu
from cuzk.curves import get as _get_curve
cpu = _get_curve("bls12_381").kernels  # BLS12-381's CPU kernels
from cuzk.prover import GpuProver
from cuzk.synth import Synthesizer

R_BLIND, S_BLIND = 0x1234567, 0x7654321


@pytest.fixture(scope="module")
def cube():
    synth, pk = keys_for(CubeTag)
    return synth, pk, synth.synthesize(x=3, out=35, tag=777)


class _Compiles(event.Listener):
    def __init__(self):
        self.names = []

    def on_start(self, ev):
        pass

    def on_end(self, ev):
        d = ev.data["dispatcher"]
        self.names.append(f"{d.py_func.__module__}.{d.py_func.__qualname__}")


def _compiled_during(fn):
    rec = _Compiles()
    event.register("numba:compile", rec)
    try:
        out = fn()
    finally:
        event.unregister("numba:compile", rec)
    return out, rec.names


def test_jit_kernel_is_called_from_numba_and_from_python():
    @njit
    def through_numba(a, b):
        return fq2.mul(a, b)

    one, two = fq.from_u64(np.uint64(1)), fq.from_u64(np.uint64(2))
    x = tuple(np.uint64(v) for v in one), tuple(np.uint64(v) for v in two)
    assert isinstance(fq2.mul, JitKernel)
    assert fq2.mul.targetoptions["no_cpython_wrapper"] and fq2.mul.targetoptions["nogil"]
    by_numba, by_python = through_numba(x, x), fq2.mul(x, x)  # Python: a separate wrapped copy
    assert [list(map(int, c)) for c in by_numba] == [list(map(int, c)) for c in by_python]
    assert pickle.loads(pickle.dumps(fq2.mul)) is fq2.mul


def test_jit_kernel_options_pass_through():
    k = jit_kernel(nogil=True)(lambda x: x + np.uint64(1))
    assert k.targetoptions["nogil"] and k.targetoptions["no_cfunc_wrapper"]
    assert int(k(np.uint64(41))) == 42


def test_readonly_is_a_view_and_idempotent():
    a = np.arange(4, dtype=np.uint64)
    v = readonly(a)
    assert not v.flags.writeable and a.flags.writeable and np.shares_memory(a, v) and readonly(v) is v


def test_one_specialization_whatever_the_arrays_flags():
    from cuzk.curves.bls12_381 import g1
    from cuzk.curves.bls12_381 import fr_array
    from cuzk.curves.bls12_381 import msm_kernels_g1

    g = G1.generator()
    pts = np.stack([g, G1.mul(g, 2), G1.mul(g, 3)])
    sc = np.array([[5, 0, 0, 0], [7, 0, 0, 0], [9, 0, 0, 0]], np.uint64)
    want = G1.mul(g, 5 + 14 + 27)
    frozen = pts.copy()
    frozen.flags.writeable = False
    kernels = (msm_kernels_g1.window_into, g1.add_many, fr_array.vmul)

    def run(p):
        for endo in (True, False):  # the split's fresh points, then the caller's own
            assert G1.eq(cpu.msm("g1", p, sc, 1, endo=endo), want)
        assert G1.eq(G1.add(p[0], p[1]), G1.mul(g, 3))
        x = Fr.from_ints([3])
        if p is frozen:
            x.flags.writeable = False
        assert (Fr.mul(x, Fr.from_ints([4])) == Fr.from_ints([12])).all()
        return [len(k.signatures) for k in kernels]

    # other tests in this process may have added specializations: only growth is compared
    writable = run(pts)
    assert run(frozen) == writable  # read-only inputs reuse the writable inputs' code


_ONE_PROOF = r"""
import json, sys
from numba import types
from numba.core.dispatcher import Dispatcher
import cuzk
from cuzk.circuits import Cube
from cuzk.field.jit import JitKernel
synth = cuzk.Synthesizer(Cube())
pk, vk = cuzk.groth16.setup(synth.r1cs)
w = synth.synthesize(x=3, out=35)
assert cuzk.groth16.verify(vk, w.public_inputs, cuzk.GpuProver(pk, device="cpu").prove(w))
literal, twins = [], []
for name, mod in list(sys.modules.items()):
    if mod is None or not name.startswith("cuzk."):
        continue
    for obj in list(vars(mod).values()):
        d = obj.dispatcher if isinstance(obj, JitKernel) else obj if isinstance(obj, Dispatcher) else None
        if d is not None:
            literal += [f"{name}.{d.py_func.__name__}{sig}" for sig in d.signatures
                        if any(isinstance(a, types.Literal) for a in sig)]
        if isinstance(obj, JitKernel) and obj._python is not None:
            twins.append(f"{name}.{obj.__name__}")
print(json.dumps({"literal": sorted(set(literal)), "twins": sorted(set(twins))}))
"""


def test_a_proof_specializes_no_kernel_on_a_literal_int(tmp_path):
    # a fresh process with an empty kernel cache: its kernels' signatures are exactly what setup
    # + one proof compile. A warm cache hides a literal: a caller loaded from the cache types no
    # call, so the callee's literal specialization never shows (two such slipped through once)
    import json
    import os
    import subprocess

    env = dict(os.environ, CUZK_NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    out = subprocess.run([sys.executable, "-c", _ONE_PROOF], capture_output=True, text=True, timeout=1800, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["literal"] == []  # each literal value would be a specialization of its own
    assert got["twins"] == []  # no kernel called from Python on this path (an uncached copy each run)


def test_warm_up_leaves_a_proof_nothing_to_compile(cube):
    _, pk, w = cube
    want = create_proof(pk, w, R_BLIND, S_BLIND)
    assert warm_up(pk) >= 0
    proof, names = _compiled_during(lambda: GpuProver(pk, device="cpu").prove(w, R_BLIND, S_BLIND))
    assert proof == want and names == []


def test_warm_up_with_bit_msm_leaves_a_bit_aware_proof_nothing_to_compile(cube):
    _, pk, w = cube
    want = create_proof(pk, w, R_BLIND, S_BLIND)
    assert warm_up(pk, bit_msm=True) >= 0
    proof, names = _compiled_during(lambda: GpuProver(pk, device="cpu", bit_msm=True).prove(w, R_BLIND, S_BLIND))
    assert proof == want and names == []


class _Squares(Circuit):
    """x_{i+1} = x_i² for 2,500 steps: MSMs of ~2,500 points, where the model picks method
    "ifma" on an AVX-512 IFMA CPU (a few points, as the warm-up's own, pick XYZZ)."""

    def define(self, cs, x, out):
        v = cs.private(x)
        for _ in range(2500):
            v = v * v
        cs.assert_equal(v, cs.public(out))


@pytest.mark.skipif(msm_cpu.VEC_METHODS[0] not in msm_cpu.AVAILABLE, reason="this CPU has no AVX-512 IFMA")
def test_warm_up_also_readies_the_ifma_msm_of_a_large_key():
    synth = Synthesizer(_Squares(), curve="bn254")
    pk, vk = setup(synth.r1cs, rng=np.random.default_rng(4))
    w = synth.synthesize(x=3, out=pow(3, 2**2500, curves.get("bn254").Fr.modulus))
    assert msm_cpu.choose_msm(pk.a.shape[0], 254, methods=msm_cpu.AVAILABLE)[0] == "ifma"
    assert warm_up(pk) >= 0
    proof, names = _compiled_during(lambda: GpuProver(pk, device="cpu").prove(w))
    assert verify(vk, w.public_inputs, proof) and names == []


def test_background_warm_up_runs_beside_a_proof(cube):
    _, pk, w = cube
    prover = GpuProver(pk, device="cpu", warm_up=True)
    fut = prover.warm_up_future
    assert fut is not None
    proof = prover.prove(w, R_BLIND, S_BLIND)  # while the thread may still run: no deadlock
    assert proof == create_proof(pk, w, R_BLIND, S_BLIND)
    assert fut.result(timeout=600) >= 0
    assert not any(t.name == "cuzk-warmup" and t.is_alive() for t in threading.enumerate())
    assert GpuProver(pk, device="cpu").warm_up_future is None  # off by default


def test_start_warm_up_reports_a_failure_through_its_future():
    class Broken:
        curve = "bls12_381"
        domain_size = 4
        convention = "bellperson"

    fut = start_warm_up(Broken(), verify=False)
    with pytest.raises(AttributeError):
        fut.result(timeout=600)
