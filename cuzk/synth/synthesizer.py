"""The :class:`Synthesizer`: trace once into a PCE, then per proof run the witness program and
three sparse mat-vecs in Numba (GIL released, so threads synthesize in parallel).

    >>> from cuzk.circuit import Circuit
    >>> class Cube(Circuit):
    ...     def define(self, cs, x, out):
    ...         x, out = cs.private(x), cs.public(out)
    ...         cs.assert_equal(x * x * x + x + 5, out)
    >>> synth = Synthesizer(Cube(), check=True)
    >>> w = synth.synthesize(x=3, out=35)
    >>> w.public_inputs, w.z.shape, w.digest == synth.r1cs.digest
    ([35], (5, 4), True)
    >>> Synthesizer(Cube(), curve="bn128").synthesize(x=3, out=35).curve   # circom's curve
    'bn254'
"""

from __future__ import annotations

import attrs
import numba
import numpy as np

from cuzk import curves
from cuzk.errors import InputError, UnsatisfiedConstraint
from cuzk.synth import kernels as K
from cuzk.synth.pce import load_pce, save_pce
from cuzk.synth.program import WitnessProgram, compile_circuit, flatten_inputs
from cuzk.synth.r1cs import R1CS

__all__ = ["Synthesizer", "Synthesized"]


@attrs.frozen(eq=False)
class Synthesized:
    """One synthesized witness: assignment and the three mat-vec results (Montgomery arrays of
    ``curve``'s Fr, L = its limbs: 4 for both BLS12-381 and BN254)."""

    z: np.ndarray  # (n_vars, L): [ONE, public..., private...]
    a: np.ndarray  # (n_constraints, 4) = A·z
    b: np.ndarray  # = B·z
    c: np.ndarray  # = C·z
    public_inputs: list  # canonical ints, without ONE
    digest: str  # the R1CS digest of the circuit
    job_id: object = None  # set by the pipeline with attrs.evolve
    curve: str = curves.DEFAULT  # canonical name of the curve whose Fr the arrays are in


def _check_threads(threads) -> int:
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise InputError(f"threads must be a positive int, got {threads!r}")
    return threads


class Synthesizer:
    """Pre-compiled constraint evaluator of one circuit.

    Args:
        circuit: a :class:`cuzk.circuit.Circuit`; traced once here (values are symbolic).
        curve: the curve whose Fr the circuit is over: ``"bls12_381"`` (default; alias
            ``"bls12381"``) or ``"bn254"`` (alias ``"bn128"``, circom's default). Keys set up
            from :attr:`r1cs` are over it.
        check: verify ``a·b = c`` on every row of every synthesis (raises
            :class:`cuzk.errors.UnsatisfiedConstraint` naming the first failing row).
        threads: Numba threads for the mat-vecs; 1 (default) keeps each synthesis on its
            calling thread so pipeline workers can share the cores.
        progress: compile progress: None (a bar on a terminal once compiling takes over 2 s),
            False (silent) or ``callable(stage, done, total)`` (:mod:`cuzk.synth.progress`).

    Raises:
        cuzk.errors.ValueDependentTraceError: ``define`` branched on an input value.
        cuzk.errors.CircuitError: the circuit misuses the DSL.
        cuzk.errors.UnsupportedCurveError: unknown curve.
    """

    def __init__(self, circuit, *, check: bool = False, threads: int = 1, curve: str | None = None, progress=None):
        r1cs, program = compile_circuit(circuit, curve, progress=progress)
        self._init(r1cs, program, check, threads)
        self.circuit = circuit

    def _init(self, r1cs: R1CS, program: WitnessProgram, check: bool, threads: int):
        _check_threads(threads)
        self.r1cs = r1cs
        self.program = program
        self.check = bool(check)
        self.threads = threads
        self.circuit = None
        # the curve's field and kernels are looked up per call, not kept: they hold modules, and a
        # Synthesizer is pickled into synthesis worker processes (cuzk/engine/executors.py)
        self.curve = r1cs.curve

    @classmethod
    def from_parts(cls, r1cs: R1CS, program: WitnessProgram, *, check: bool = False, threads: int = 1):
        """A Synthesizer from an already compiled R1CS and witness program (used by :meth:`load`)."""
        self = cls.__new__(cls)
        self._init(r1cs, program, check, threads)
        return self

    @property
    def field(self):
        """The curve's Fr (:class:`cuzk.field.PrimeField`) the witness is in."""
        return curves.get(self.curve).Fr

    @property
    def input_names(self) -> tuple:
        return self.program.input_names

    def save(self, path) -> None:
        """Write the PCE file (see :mod:`cuzk.synth.pce`); atomic (temp file + rename)."""
        save_pce(path, self.r1cs, self.program)

    @classmethod
    def load(cls, path, *, check: bool = False, threads: int = 1) -> "Synthesizer":
        """Read a PCE file written by :meth:`save`.

        Raises:
            cuzk.errors.PceFormatError: truncated, corrupted or wrong-version file.
        """
        r1cs, program = load_pce(path)
        return cls.from_parts(r1cs, program, check=check, threads=threads)

    def synthesize(self, **inputs) -> Synthesized:
        """Witness and ``A·z, B·z, C·z`` for these inputs (names/shapes as in ``define``).

        Raises:
            cuzk.errors.InputError: missing, extra, malformed or out-of-range inputs.
            cuzk.errors.UnsatisfiedConstraint: with ``check=True``, the first failing row.
        """
        return self.synthesize_inputs(inputs)

    def synthesize_inputs(self, inputs: dict, *, check: bool | None = None, threads: int | None = None):
        """:meth:`synthesize` with the inputs as a dict and per-call ``check``/``threads``."""
        p, r = self.program, self.r1cs
        k, fr = K.for_curve(self.curve), curves.get(self.curve).Fr
        flat = flatten_inputs(p.inputs, inputs, r.curve)
        inp = fr.from_ints(flat) if flat else np.zeros((0, fr.limbs), np.uint64)
        threads = self.threads if threads is None else _check_threads(threads)
        if threads == 1:
            z, a, b, c = k.synthesize_serial(
                p.code, p.consts, inp, p.n_slots, p.var_slot,
                r.a.indptr, r.a.indices, r.a.data, r.b.indptr, r.b.indices, r.b.data,
                r.c.indptr, r.c.indices, r.c.data,
            )
        else:
            z = k.gather(k.run_witness(p.code, p.consts, inp, p.n_slots), p.var_slot)
            prev = numba.get_num_threads()
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
            try:
                a, b, c = (k.csr_matvec_parallel(m.indptr, m.indices, m.data, z) for m in (r.a, r.b, r.c))
            finally:
                numba.set_num_threads(prev)
        if self.check if check is None else check:
            bad = k.first_unsatisfied(a, b, c)
            if bad >= 0:
                name = r.names[bad]
                raise UnsatisfiedConstraint(
                    f"constraint {bad}{f' ({name})' if name else ''} is not satisfied: A·z * B·z != C·z",
                    index=bad, name=name,
                )
        return Synthesized(
            z=z, a=a, b=b, c=c,
            public_inputs=fr.to_ints(z[1:1 + r.n_public]) if r.n_public else [],
            digest=r.digest, curve=r.curve,
        )
