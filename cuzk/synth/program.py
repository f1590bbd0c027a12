"""Compiling a traced circuit into a PCE: R1CS in CSR form plus a flat witness program.

    >>> from cuzk.circuit import Circuit
    >>> class Sq(Circuit):
    ...     def define(self, cs, x, y):
    ...         cs.assert_equal(cs.private(x) * cs.private(x), cs.public(y))
    >>> r1cs, prog = compile_circuit(Sq())
    >>> prog.input_names, r1cs.n_constraints
    (('x', 'y'), 2)
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Mapping, Sequence

import numpy as np

from cuzk.circuit import Circuit, ConstraintSystem
from cuzk import curves
from cuzk.errors import CircuitError, InputError
from cuzk.synth import gc_pause
from cuzk.synth.placement import compile_system
from cuzk.synth.progress import Progress
from cuzk.synth.r1cs import R1CS
from cuzk.synth.witness_program import WitnessProgram

__all__ = ["WitnessProgram", "compile_circuit", "trace", "flatten_inputs"]


def _placeholders(cs, label, shape):
    if not shape:
        return cs.input_placeholder(label)
    return [_placeholders(cs, f"{label}[{i}]", shape[1:]) for i in range(shape[0])]


def _dims(shape):
    """A shape (an int or a sequence of ints, numpy ones included) as a tuple, or None if malformed."""
    items = shape if isinstance(shape, (tuple, list)) else (shape,)
    if any(isinstance(d, bool) for d in items):
        return None
    try:
        dims = tuple(operator.index(d) for d in items)
    except TypeError:
        return None
    return dims if all(d >= 1 for d in dims) else None


def _check_shapes(shapes) -> tuple:
    if not isinstance(shapes, Mapping):
        raise CircuitError(f"input_shapes() must return a dict of name -> shape, got {type(shapes).__name__}")
    out = []
    for name, shape in shapes.items():
        dims = _dims(shape)
        if dims is None:
            raise CircuitError(f"input {name!r}: shape must be a tuple of positive ints, got {shape!r}")
        out.append((str(name), dims))
    return tuple(out)


def trace(circuit, curve: str | None = None, progress: Progress | None = None) -> tuple[ConstraintSystem, tuple]:
    """Run ``circuit.define`` once on symbolic inputs over ``curve``'s Fr (default BLS12-381);
    returns the recorder and input spec."""
    if not callable(getattr(circuit, "define", None)):
        raise CircuitError(f"{type(circuit).__name__} is not a circuit: it has no define(cs, **inputs)")
    shapes = circuit.input_shapes() if isinstance(circuit, Circuit) else Circuit.input_shapes(circuit)
    spec = _check_shapes(shapes)
    cs = ConstraintSystem(curve)
    if progress is not None:
        progress.stage("trace", None)
        cs._progress = progress
    args = {name: _placeholders(cs, name, shape) for name, shape in spec}
    try:
        inspect.signature(circuit.define).bind(cs, **args)
    except TypeError as e:  # input_shapes() and define() disagree on the input names
        raise CircuitError(f"define() does not take the inputs {list(args)} that input_shapes() names: {e}") from None
    except ValueError:  # no introspectable signature: let the call itself decide
        pass
    circuit.define(cs, **args)
    cs._progress = None
    return cs, spec


def compile_circuit(circuit, curve: str | None = None, *, progress=None) -> tuple[R1CS, WitnessProgram]:
    """Trace ``circuit`` over ``curve``'s Fr (a name or alias; default BLS12-381) and build its
    R1CS (CSR, renumbered ONE/public/private, ``r1cs.curve`` set) and program; blocks of
    ``cs.repeat`` are placed with numpy (:mod:`cuzk.synth.placement`).

    ``progress``: None (a bar on a terminal after 2 s), False, or ``callable(stage, done,
    total)`` (:mod:`cuzk.synth.progress`).

    Raises:
        cuzk.errors.UnsupportedCurveError: unknown curve.
    """
    rep = Progress.of(progress)
    try:
        with gc_pause.paused():  # millions of live containers: the collector would only walk them
            cs, spec = trace(circuit, curve, rep)
            return compile_system(cs, spec, rep)
    finally:
        rep.close()


def _flatten(name, value, shape, out, field):  # field: (modulus, "BN254 Fr")
    if not shape:
        try:
            v = operator.index(value)
        except TypeError:
            raise InputError(f"input {name}: expected an integer, got {type(value).__name__}") from None
        if isinstance(value, bool):
            raise InputError(f"input {name}: expected an integer, got bool")
        if not 0 <= v < field[0]:
            raise InputError(f"input {name}: {v} is out of range [0, r) of {field[1]}")
        out.append(v)
        return
    if isinstance(value, np.ndarray):
        value = value.tolist()
    # only ordered sequences: a set or dict has a length and iterates, but in an order the caller
    # did not choose, which would silently prove a permuted statement
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InputError(f"input {name}: expected a sequence (list, tuple, array) of shape {shape}, got {type(value).__name__}")
    if len(value) != shape[0]:
        raise InputError(f"input {name}: expected length {shape[0]} (shape {shape}), got {len(value)}")
    for i, v in enumerate(value):
        _flatten(f"{name}[{i}]", v, shape[1:], out, field)


def flatten_inputs(spec, inputs: dict, curve: str | None = None) -> list[int]:
    """Check names, shapes and ranges of ``inputs`` against ``spec``; the flat list of ints.

    The values must lie in ``curve``'s Fr (a name or alias; default BLS12-381).

    Raises:
        InputError: a missing, extra, wrongly shaped, non-integer or out-of-range input.
    """
    if not isinstance(inputs, Mapping):
        raise InputError(f"inputs must be a mapping of input name -> value, got {type(inputs).__name__}")
    names = [n for n, _ in spec]
    missing = [n for n in names if n not in inputs]
    extra = sorted(set(inputs) - set(names), key=repr)  # keys may be of mixed, unorderable types
    if missing or extra:
        raise InputError(
            "inputs do not match the circuit: "
            + "; ".join(p for p in (missing and f"missing {missing}", extra and f"unexpected {extra}") if p)
            + f" (expected {names})"
        )
    fr = curves.resolve(curves.canonical(curve))
    field = (fr.fr.modulus, f"{fr.title} Fr")
    out: list[int] = []
    for name, shape in spec:
        _flatten(name, inputs[name], shape, out, field)
    return out
