"""Synthesis: trace a circuit once into a PCE (CSR R1CS + witness program), then per proof
run the Numba witness interpreter and three sparse mat-vecs.

    >>> from cuzk.synth import Synthesizer, R1CS, Synthesized
"""

from cuzk.synth.pce import load_pce, save_pce
from cuzk.synth.program import WitnessProgram, compile_circuit
from cuzk.synth.pyeval import python_synthesize
from cuzk.synth.r1cs import R1CS, CsrMatrix, read_r1cs
from cuzk.synth.synthesizer import Synthesized, Synthesizer

__all__ = [
    "Synthesizer", "Synthesized", "R1CS", "CsrMatrix", "WitnessProgram", "compile_circuit",
    "read_r1cs", "save_pce", "load_pce", "python_synthesize",
]
