"""``[[circuits]]`` entries: any circuit the Engine takes, proved from JSON inputs or a circom
``.wtns`` through the CircuitProver extension service, answered in snarkjs' JSON.

* ``params`` + ``circuit = "module:attr"``: a bellperson ``.params`` and the cuzk circuit it was set
  up for; ``attr`` is a :class:`cuzk.Circuit` instance, a Circuit class (made with no arguments)
  or a function returning one.
* ``zkey`` + ``r1cs`` (+ ``wasm``): a snarkjs key and its circom ``.r1cs``; with the ``.wasm``
  the inputs may be JSON (circom's calculator runs in the daemon), always a ``.wtns``.

:class:`RecordingSynthesizer` keeps each job's public inputs (a proof alone does not carry them,
and public.json needs them): the RPC layer passes a token with the inputs and takes the values
back when the proof is done.

    >>> parse_inputs('{"x": 3, "out": "35", "ys": ["0x10", [1, 2]]}')
    {'x': 3, 'out': 35, 'ys': [16, [1, 2]]}
"""

from __future__ import annotations

import importlib
import json
import os
import tempfile
import threading
from typing import NamedTuple

from cuzk.errors import InputError, UnsupportedCurveError
from cuzk.serve.validate import invalid

__all__ = ["RecordingSynthesizer", "WitnessSynthesizer", "load_entry", "parse_inputs", "answer_texts", "CircuitAnswer", "TOKEN"]


class CircuitAnswer(NamedTuple):
    """What a ProveCircuit answer carries for a finished proof (an extension job's outcome)."""

    proof_json: str  #: snarkjs's proof.json
    public_json: str  #: snarkjs's public.json
    proof_bytes: bytes  #: bellperson's layout; empty on a curve without it (BN254)


def answer_texts(proof, public) -> CircuitAnswer:
    """The :class:`CircuitAnswer` of a finished proof and its public inputs. The daemon writes it
    on the prover's thread as the proof ends, with the texts written in one step each
    (cuzk/formats/snarkjs_json.py, ``proof_json_text``): right after a proof the interpreter's
    caches are cold, and every call and object made here costs several times its warm price."""
    from cuzk.formats.snarkjs_json import proof_json_text, public_json_text

    try:
        raw = proof.to_bytes()
    except UnsupportedCurveError:  # no bellperson bytes on this curve (Proof.to_bytes checks first)
        raw = b""
    return CircuitAnswer(proof_json_text(proof), public_json_text(public or []), raw)


TOKEN = "_cuzk_serve_job"  #: the keyword that carries a job's token to RecordingSynthesizer
_MAX_DEPTH = 16  # nesting of input arrays: circom signals are at most a few dimensions
_MAX_VALUES = 1 << 22


def _number(v, path: str):
    if isinstance(v, bool) or v is None or isinstance(v, float):
        raise invalid("inputs_json", f"{path}: {v!r} is not an integer (or a decimal / 0x string)")
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        t = v.strip()
        try:
            if len(t) > 200:
                raise ValueError
            return int(t, 16) if t.lower().startswith(("0x", "-0x")) else int(t, 10)
        except ValueError:
            raise invalid("inputs_json", f"{path}: {v[:40]!r} is not an integer") from None
    raise invalid("inputs_json", f"{path}: unexpected {type(v).__name__}")


def _values(v, path: str, depth: int, count: list):
    if isinstance(v, list):
        if depth >= _MAX_DEPTH:
            raise invalid("inputs_json", f"{path}: arrays nested deeper than {_MAX_DEPTH}")
        return [_values(x, f"{path}[{i}]", depth + 1, count) for i, x in enumerate(v)]
    count[0] += 1
    if count[0] > _MAX_VALUES:
        raise invalid("inputs_json", f"more than {_MAX_VALUES} values")
    return _number(v, path)


def parse_inputs(text: str) -> dict:
    """A JSON object of synthesize() keyword arguments; strings become ints (decimal or 0x).

    Raises:
        RequestError: INVALID_ARGUMENT naming ``inputs_json`` and the bad value's path.
    """
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise invalid("inputs_json", f"is not JSON: {e}") from None
    if not isinstance(doc, dict):
        raise invalid("inputs_json", f"must be a JSON object of inputs, got {type(doc).__name__}")
    count = [0]
    out = {}
    for k, v in doc.items():
        if not k.isidentifier() or k == TOKEN:
            raise invalid("inputs_json", f"{k[:40]!r} is not an input name")
        out[k] = _values(v, k, 0, count)
    return out


class WitnessSynthesizer:
    """A circom circuit's synthesizer from a ``.wtns`` (bytes): z from the file, then A·z, B·z, C·z
    from the ``.r1cs``, as :class:`~cuzk.formats.snarkjs_wasm.CircomSynthesizer` does after its
    calculator. With ``calculator`` (a ``.wasm``), JSON inputs work too."""

    def __init__(self, r1cs, calculator=None):
        self.r1cs = r1cs
        self.calculator = calculator
        self._inner = None
        if calculator is not None:
            from cuzk.formats.snarkjs_wasm import CircomSynthesizer

            self._inner = CircomSynthesizer(r1cs, calculator)

    def synthesize(self, wtns: bytes | None = None, **inputs):
        if wtns is None:
            if self._inner is None:
                raise InputError("this circuit has no .wasm witness calculator: send a .wtns (field wtns)")
            return self._inner.synthesize(**inputs)
        if inputs:
            raise InputError("send either a .wtns or JSON inputs, not both")
        return self._from_wtns(wtns)

    def _from_wtns(self, data: bytes):
        from cuzk.formats.snarkjs import read_wtns
        from cuzk.synth.kernels import for_curve
        from cuzk.synth.synthesizer import Synthesized

        r = self.r1cs
        fd, path = tempfile.mkstemp(prefix="cuzk-serve-", suffix=".wtns")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            z = read_wtns(path, curve=r.curve)
        finally:
            os.unlink(path)
        if z.shape[0] != r.n_vars:
            raise InputError(f"the .wtns has {z.shape[0]} values, the circuit has {r.n_vars} wires")
        k = for_curve(r.curve)
        a, b, c = (k.csr_matvec(m.indptr, m.indices, m.data, z) for m in (r.a, r.b, r.c))
        bad = k.first_unsatisfied(a, b, c)
        if bad >= 0:
            from cuzk.errors import UnsatisfiedConstraint

            raise UnsatisfiedConstraint(f"the .wtns does not satisfy constraint {bad}", index=bad)
        fr = r.field
        return Synthesized(z=z, a=a, b=b, c=c, public_inputs=fr.to_ints(z[1:1 + r.n_public]) if r.n_public else [],
                           digest=r.digest, curve=r.curve)


class RecordingSynthesizer:
    """``inner`` with each job's public inputs kept under the token its inputs carry."""

    def __init__(self, inner):
        self.inner = inner
        self._lock = threading.Lock()
        self._public: dict = {}

    @property
    def r1cs(self):
        return self.inner.r1cs

    @property
    def program(self):
        return getattr(self.inner, "program", None)

    @property
    def curve(self) -> str:
        return getattr(self.inner.r1cs, "curve", "bls12_381")

    def synthesize(self, **inputs):
        token = inputs.pop(TOKEN, None)
        w = self.inner.synthesize(**inputs)
        if token is not None:
            with self._lock:
                self._public[token] = [int(x) for x in w.public_inputs]
        return w

    def take(self, token):
        """The public inputs recorded for ``token`` (None if its synthesis never ran), forgotten after."""
        with self._lock:
            return self._public.pop(token, None)


def _resolve(spec: str):
    module, _, attr = spec.partition(":")
    try:
        obj = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise InputError(f"circuit {spec!r} cannot be imported: {e}") from None
    return obj


def _circuit_object(spec: str):
    from cuzk.circuit import Circuit

    obj = _resolve(spec)
    if isinstance(obj, type):
        obj = obj()
    elif callable(obj) and not isinstance(obj, Circuit):
        obj = obj()
    if not isinstance(obj, Circuit):
        raise InputError(f"circuit {spec!r} is a {type(obj).__name__}, not a cuzk Circuit (or a class or "
                         "function making one)")
    return obj


def load_entry(entry):
    """``(RecordingSynthesizer, key path)`` of a :class:`~cuzk.serve.config.CircuitConfig`.

    Raises:
        InputError (or the readers' format errors): a file that is missing or not of its kind,
        a circuit path that does not import.
    """
    if entry.params is not None:
        from cuzk.synth import Synthesizer

        if not entry.params.is_file():
            raise InputError(f"[[circuits]] {entry.name!r}: params file {entry.params} does not exist")
        return RecordingSynthesizer(Synthesizer(_circuit_object(entry.circuit))), entry.params
    from cuzk.formats.snarkjs import read_r1cs

    for what, path in (("zkey", entry.zkey), ("r1cs", entry.r1cs), ("wasm", entry.wasm)):
        if path is not None and not path.is_file():
            raise InputError(f"[[circuits]] {entry.name!r}: {what} file {path} does not exist")
    calculator = None
    if entry.wasm is not None:
        from cuzk.formats.snarkjs_wasm import CircomWitnessCalculator

        calculator = CircomWitnessCalculator(entry.wasm)
    return RecordingSynthesizer(WitnessSynthesizer(read_r1cs(entry.r1cs), calculator)), entry.zkey
