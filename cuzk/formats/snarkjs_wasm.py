"""Run circom's WASM witness calculator in-process (``wasmtime``, the optional ``circom`` extra).

:func:`synthesizer_from_circom` pairs a circom ``.r1cs`` with its ``.wasm`` so circom circuits
synthesize without Node: inputs go in through the calculator's exports as circom's own
``witness_calculator.js`` passes them (FNV-1a hash of the signal name, little-endian 32-bit
words in the shared memory), the witness comes back wire by wire, then A·z, B·z, C·z run in
Numba like any cuzk synthesis.

GIL: wasmtime-py calls WASM through ``ctypes``, which releases the GIL for the duration of
each call, but the calculator is driven by one call per input value and per wire, so the
Python between calls holds it: two threads run slower than one (docs/perf/snarkjs.md), so
synthesize circom circuits on one thread or in separate processes.

    >>> synth = synthesizer_from_circom("chain.r1cs", "chain_js/chain.wasm")   # doctest: +SKIP
    >>> w = synth.synthesize(x=3, k=7); w.public_inputs                        # doctest: +SKIP
"""

from __future__ import annotations

import os

import numpy as np

from cuzk import curves
from cuzk.errors import InputError, SnarkjsFormatError, UnsatisfiedConstraint, UnsupportedCurveError
from cuzk.formats.snarkjs import read_r1cs
from cuzk.groth16.keys import check_same_curve
from cuzk.synth.binfile import check_prime
from cuzk.synth.kernels import for_curve
from cuzk.synth.synthesizer import Synthesized

__all__ = ["CircomWitnessCalculator", "CircomSynthesizer", "synthesizer_from_circom", "fnv1a64"]

_ERRORS = {1: "signal not found", 2: "too many signals set", 3: "signal already set", 4: "assert failed",
           5: "not enough memory", 6: "input signal array access exceeds the size", 7: "out of bounds array access"}


def fnv1a64(name: str) -> int:
    """circom's signal-name hash (64-bit FNV-1a over the characters).

    >>> hex(fnv1a64("a"))          # the FNV reference test vector
    '0xaf63dc4c8601ec8c'
    """
    h = 0xCBF29CE484222325
    for ch in name:
        h = ((h ^ ord(ch)) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def _flatten(v) -> list:
    if isinstance(v, (list, tuple, np.ndarray)):
        return [x for item in v for x in _flatten(item)]
    return [v]


class CircomWitnessCalculator:
    """One instance of a circom 2 witness-calculator module.

    Raises:
        ImportError: ``wasmtime`` is not installed (``pip install 'cuzk[circom]'``).
        SnarkjsFormatError: the module is not a circom 2 calculator, or for a prime of neither
            curve (BLS12-381: ``--prime bls12381``; BN254: circom's default prime).
    """

    def __init__(self, wasm_path):
        try:
            import wasmtime
        except ImportError as e:
            raise ImportError("synthesizing circom circuits in-process needs wasmtime: pip install 'cuzk[circom]'") from e
        self._wt = wasmtime
        self.where = os.fspath(wasm_path)
        self._store = wasmtime.Store(wasmtime.Engine())
        try:
            module = wasmtime.Module.from_file(self._store.engine, self.where)
        except wasmtime.WasmtimeError as e:
            raise SnarkjsFormatError(f"{self.where}: not a WASM module ({str(e).splitlines()[0]})") from None
        self._errors: list[str] = []
        i32 = wasmtime.ValType.i32()
        host = {"exceptionHandler": (wasmtime.FuncType([i32], []), self._exception),
                "printErrorMessage": (wasmtime.FuncType([], []), lambda: self._errors.append(self._message())),
                "writeBufferMessage": (wasmtime.FuncType([], []), lambda: self._message()),
                "showSharedRWMemory": (wasmtime.FuncType([], []), lambda: None)}
        imports = []
        for imp in module.imports:
            if imp.module != "runtime" or imp.name not in host:
                raise SnarkjsFormatError(f"{self.where}: unexpected import {imp.module}.{imp.name} (not a circom 2 witness calculator)")
            ty, fn = host[imp.name]
            imports.append(wasmtime.Func(self._store, ty, fn))
        instance = wasmtime.Instance(self._store, module, imports)
        self._x = {e.name: instance.exports(self._store)[e.name] for e in module.exports}
        for need in ("memory", "init", "getFieldNumLen32", "getRawPrime", "getSharedRWMemoryStart", "setInputSignal",
                     "getInputSignalSize", "getWitnessSize", "getWitness", "getInputSize"):
            if need not in self._x:
                raise SnarkjsFormatError(f"{self.where}: missing export {need!r} (not a circom 2 witness calculator)")
        self._mem = self._x["memory"]
        self.n32 = self._call("getFieldNumLen32")
        self._call("getRawPrime")
        self.curve = check_prime(int.from_bytes(self._shared(), "little"), "r", self.where)
        self._fr = curves.get(self.curve).Fr
        self.witness_size = self._call("getWitnessSize")

    def _call(self, name, *args):
        return self._x[name](self._store, *args)

    def _exception(self, code):
        detail = "; ".join(e for e in self._errors if e)
        self._errors.clear()
        raise RuntimeError(f"circom witness calculator: {_ERRORS.get(code, 'unknown error')}" + (f" ({detail})" if detail else ""))

    def _message(self) -> str:
        chars = []
        c = self._call("getMessageChar") if "getMessageChar" in self._x else 0
        while c:
            chars.append(chr(c))
            c = self._call("getMessageChar")
        return "".join(chars)

    def _shared(self) -> bytes:
        start = self._call("getSharedRWMemoryStart")
        return bytes(self._mem.read(self._store, start, start + 4 * self.n32))

    def calculate(self, inputs: dict) -> np.ndarray:
        """The full witness (wire order) for ``inputs`` ({signal name: int or nested list}),
        as a ``(witness_size, 4)`` Montgomery array of the circuit's curve's Fr (:attr:`curve`).

        Raises:
            InputError: an unknown signal, a wrong number of values, an unset input, a value
                outside [0, r), or a failing ``assert`` in the circuit.
        """
        self._call("init", 0)
        start = self._call("getSharedRWMemoryStart")
        nbytes = 4 * self.n32
        count = 0
        for name, value in inputs.items():
            h = fnv1a64(name)
            msb, lsb = h >> 32, h & 0xFFFFFFFF
            size = self._call("getInputSignalSize", _i32(msb), _i32(lsb))
            flat = _flatten(value)
            if size <= 0:  # circom 2 answers 0 (older versions -1) for a name it does not know
                raise InputError(f"the circuit has no input signal {name!r}")
            if len(flat) != size:
                raise InputError(f"input signal {name!r} takes {size} values, got {len(flat)}")
            for i, v in enumerate(flat):
                if isinstance(v, bool) or not isinstance(v, (int, np.integer, str)):
                    raise InputError(f"input {name}[{i}] must be an int, got {type(v).__name__}")
                x = int(v)
                r = self._fr.modulus
                if not -r < x < r:
                    raise InputError(f"input {name}[{i}] = {x} is outside (-r, r)")
                self._mem.write(self._store, (x % r).to_bytes(nbytes, "little"), start)
                self._run("setInputSignal", _i32(msb), _i32(lsb), i)
                count += 1
        expected = self._call("getInputSize")
        if count < expected:
            raise InputError(f"only {count} of the circuit's {expected} input values were given")
        out = bytearray(self.witness_size * 32)
        for i in range(self.witness_size):
            self._run("getWitness", i)
            out[32 * i:32 * i + 32] = self._mem.read(self._store, start, start + 32)
        limbs = np.frombuffer(bytes(out), dtype="<u8").astype(np.uint64).reshape(-1, 4)
        return self._fr.to_mont(limbs)

    def _run(self, name, *args):
        try:
            return self._call(name, *args)
        except self._wt.Trap as e:
            raise InputError(f"circom witness calculator failed in {name}: {str(e).splitlines()[0]}") from None
        except self._wt.WasmtimeError as e:  # a host-function exception (assert failed, ...)
            msg = str(e)
            cause = next((line for line in msg.splitlines() if "circom witness calculator" in line), msg.splitlines()[0])
            raise InputError(cause.strip()) from None


def _i32(x: int) -> int:
    return x - (1 << 32) if x >= 1 << 31 else x


class CircomSynthesizer:
    """A circom circuit behind cuzk's synthesizer interface (``.r1cs``, ``.synthesize(**inputs)``)."""

    def __init__(self, r1cs, calculator: CircomWitnessCalculator, *, check: bool = False):
        check_same_curve("the .r1cs", r1cs.curve, calculator.where, calculator.curve, error=UnsupportedCurveError)
        if calculator.witness_size != r1cs.n_vars:
            raise SnarkjsFormatError(
                f"{calculator.where} computes {calculator.witness_size} wires but the .r1cs has {r1cs.n_vars}"
            )
        self.r1cs = r1cs
        self.calculator = calculator
        self.check = check

    def synthesize(self, **inputs) -> Synthesized:
        """Witness (WASM) and A·z, B·z, C·z (Numba) for circom inputs given by signal name.

        Raises:
            InputError: bad inputs or a failing circuit ``assert``.
            UnsatisfiedConstraint: with ``check=True``, the first row with a·b ≠ c.
        """
        r = self.r1cs
        k = for_curve(r.curve)
        z = self.calculator.calculate(inputs)
        a, b, c = (k.csr_matvec(m.indptr, m.indices, m.data, z) for m in (r.a, r.b, r.c))
        if self.check:
            bad = k.first_unsatisfied(a, b, c)
            if bad >= 0:
                raise UnsatisfiedConstraint(f"constraint {bad} is not satisfied: A·z * B·z != C·z", index=bad)
        fr = r.field
        return Synthesized(z=z, a=a, b=b, c=c, public_inputs=fr.to_ints(z[1:1 + r.n_public]) if r.n_public else [],
                           digest=r.digest, curve=r.curve)


def synthesizer_from_circom(r1cs_path, wasm_path, *, check: bool = False) -> CircomSynthesizer:
    """A synthesizer for a circom circuit: its ``.r1cs`` plus its ``.wasm`` witness calculator.

    Args:
        r1cs_path: circom's ``.r1cs``: circom's default prime (bn128) or ``--prime bls12381``.
        wasm_path: the ``<name>_js/<name>.wasm`` circom wrote next to it.
        check: verify every row after each synthesis.

    >>> synth = synthesizer_from_circom("c.r1cs", "c_js/c.wasm")                 # doctest: +SKIP
    >>> pk = read_zkey("c.zkey", r1cs=synth.r1cs); GpuProver(pk).prove(synth.synthesize(x=3, k=7))   # doctest: +SKIP
    """
    return CircomSynthesizer(read_r1cs(r1cs_path), CircomWitnessCalculator(wasm_path), check=check)
