"""The witness program a PCE runs per proof: the output of the compile
(:func:`cuzk.synth.placement.compile_system`), the input of the interpreter
(:mod:`cuzk.synth.kernels`) and of the PCE files (:mod:`cuzk.synth.pce`).

    >>> import numpy as np
    >>> p = WitnessProgram(code=np.zeros(0, np.int32), consts=np.zeros((1, 4), np.uint64), n_slots=1,
    ...                    var_slot=np.zeros(1, np.int64), inputs=(("x", ()), ("ys", (3,))))
    >>> p.input_names, p.n_inputs
    (('x', 'ys'), 4)
"""

from __future__ import annotations

import attrs
import numpy as np

__all__ = ["WitnessProgram"]


@attrs.frozen(eq=False)
class WitnessProgram:
    """What the interpreter runs per proof (see :mod:`cuzk.circuit.ops` for the op layout)."""

    code: np.ndarray  # flat ops: int32 when every register/constant/input index fits, else int64
    consts: np.ndarray  # (k, L) uint64 Montgomery of the curve's Fr; consts[0] = one
    n_slots: int  # registers
    var_slot: np.ndarray  # int64 (n_vars,): register of each variable, final numbering
    inputs: tuple  # ((name, shape), ...) in flattening order

    @property
    def input_names(self) -> tuple:
        return tuple(n for n, _ in self.inputs)

    @property
    def n_inputs(self) -> int:
        return sum(int(np.prod(s, dtype=np.int64)) for _, s in self.inputs)
