"""cuzk: a Groth16 proving SDK for BLS12-381.

Synthesis runs as Numba-JIT kernels on the CPU; MSM and NTT run as CUDA kernels through
CuPy on a GPU, with Numba kernels as the fallback; a :class:`Pipeline` overlaps the two
stages and a :class:`Timeline` records what happened so hosts can query utilization.

    >>> import cuzk
    >>> from cuzk import Circuit, Synthesizer, GpuProver, Pipeline, Timeline
    >>> class Cube(Circuit):              # proves knowledge of x with x³ + x + 5 = out
    ...     def define(self, cs, x, out):
    ...         x, out = cs.private(x), cs.public(out)
    ...         cs.assert_equal(x * x * x + x + 5, out)
    >>> synth = Synthesizer(Cube())
    >>> pk, vk = cuzk.groth16.setup(synth.r1cs)
    >>> w = synth.synthesize(x=3, out=35)
    >>> proof = GpuProver(pk, device="cpu").prove(w)
    >>> cuzk.groth16.verify(vk, w.public_inputs, proof)
    True

Public names load on first use, so ``import cuzk`` stays quick.
"""

import importlib

from cuzk._version import __version__
from cuzk._numba_loads import install as _install_fast_cache_loads
from cuzk._runtime import configure_numba as _configure_numba

# Before any kernel module is imported: pick a threading layer that allows concurrent
# parallel regions and a cache directory stamped with the kernel sources.
_configure_numba()
# Cached kernels load without importing Numba's compiler registries (~0.5 s per process;
# cuzk/_numba_loads.py says why that is safe).
_install_fast_cache_loads()

_EXPORTS = {
    "Circuit": "cuzk.circuit",
    "ConstraintSystem": "cuzk.circuit",
    "Synthesizer": "cuzk.synth",
    "Synthesized": "cuzk.synth",
    "GpuProver": "cuzk.prover",
    "Pipeline": "cuzk.pipeline",
    "Priority": "cuzk.pipeline",
    "ProofFuture": "cuzk.pipeline",
    "Timeline": "cuzk.timeline",
    "Engine": "cuzk.engine.engine",
}
_SUBMODULES = ("errors", "field", "curve", "circuit", "circuits", "synth", "groth16", "formats",
               "kernels", "prover", "pipeline", "timeline", "reference", "engine")

__all__ = ["__version__", *_EXPORTS, *_SUBMODULES]


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"cuzk.{name}")
    else:
        raise AttributeError(f"module 'cuzk' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(__all__)
