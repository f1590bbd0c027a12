"""The ``cuzk`` Poseidon variant (BLS12-381 Fr, widths 3 and 9) and its native hash.

A facade over :func:`~cuzk.circuit.gadgets.poseidon_spec.poseidon_spec` ``("cuzk", t)``: the
Poseidon paper's reference Grain instance (``generate_parameters_grain.sage`` of the hadeshash
repository, S-box field 0, n = 255) with round constants and then a Grain-drawn Cauchy MDS
matrix ``M[i][j] = 1/(x_i + y_j)``. For width 3 this reproduces the published
``poseidonperm_x5_255_3`` test vector, which ``tests/test_poseidon.py`` carries. The reference
script additionally re-draws the MDS matrix when its (Sage-only) invariant subspace checks
fail; we do not run those checks, so the matrix is the first Cauchy draw (circomlib's variant,
drawn the same way, matches circomlib's published matrices for every width it has). Filecoin's
hash is the ``neptune`` variant.

Hashing convention (circomlib's): the state is ``[0, m_1, ..., m_{t-1}]`` (capacity lane
0 holds zero), the digest is lane 0 of the permuted state.

    >>> poseidon_permutation([0, 1, 2])[0] == 0x28CE19420FC246A05553AD1E8C98F5C9D67166BE2C18E9E4CB4B4E317DD2A78A
    True
    >>> poseidon_hash([1, 2]) == poseidon_permutation([0, 1, 2])[0]
    True
"""

from __future__ import annotations

import attrs

from cuzk.circuit.gadgets.poseidon_spec import poseidon_spec
from cuzk.errors import CircuitError

__all__ = ["PoseidonParams", "poseidon_params", "poseidon_permutation", "poseidon_hash", "ROUNDS"]

# Full and partial round numbers for x^5 at 128-bit security over a 255-bit prime, as the 2019
# reference script chooses them (hadeshash poseidonperm_x5_255_3 uses 8/57; width 9 gets 8/63,
# the same numbers circomlib's table lists for these widths).
ROUNDS = {3: (8, 57), 9: (8, 63)}


@attrs.frozen
class PoseidonParams:
    """One Poseidon instance over Fr: width ``t``, rounds, constants and MDS matrix (Python ints)."""

    t: int
    r_f: int
    r_p: int
    round_constants: tuple  # (r_f + r_p) * t ints, consumed t per round
    mds: tuple  # t rows of t ints


def _width(t) -> int:
    if t not in ROUNDS:
        raise CircuitError(f"Poseidon width must be one of {sorted(ROUNDS)}, got {t}")
    return t


def poseidon_params(t: int) -> PoseidonParams:
    """The cuzk variant's instance of width ``t`` (3 or 9), derived once per process.

    >>> p = poseidon_params(3); (p.t, p.r_f, p.r_p, len(p.round_constants))
    (3, 8, 57, 195)
    """
    s = poseidon_spec("cuzk", _width(t))
    return PoseidonParams(t=s.t, r_f=s.r_f, r_p=s.r_p, round_constants=s.round_constants, mds=s.mds)


def poseidon_permutation(state) -> list[int]:
    """The Poseidon permutation on a list of ``t`` canonical Fr ints (t = 3 or 9).

    >>> len(poseidon_permutation([0] * 9))
    9
    """
    state = list(state)
    return poseidon_spec("cuzk", _width(len(state))).permute(state)


def poseidon_hash(inputs) -> int:
    """Hash 2 (width 3) or 8 (width 9) Fr ints: lane 0 of the permutation of ``[0, *inputs]``.

    >>> poseidon_hash([0, 0]) == poseidon_permutation([0, 0, 0])[0]
    True
    """
    inputs = list(inputs)
    if len(inputs) + 1 not in ROUNDS:
        raise CircuitError(f"poseidon_hash takes 2 or 8 inputs, got {len(inputs)}")
    return poseidon_permutation([0, *inputs])[0]
