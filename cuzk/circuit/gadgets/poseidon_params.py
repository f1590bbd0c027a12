"""Poseidon parameters for BLS12-381 Fr, derived from the reference Grain LFSR, and a native hash.

The instance is the Poseidon paper's reference procedure (``generate_parameters_grain.sage``
of the hadeshash repository): an 80-bit Grain LFSR seeded with (field type, S-box type,
field bits, width, R_F, R_P) produces first the round constants (255-bit draws, rejected
while >= r) and then the 2t points x_i, y_j of a Cauchy MDS matrix ``M[i][j] = 1/(x_i + y_j)``
(draws reduced mod r, redrawn on duplicates). For width 3 this reproduces the published
``poseidonperm_x5_255_3`` test vector, which ``tests/test_poseidon.py`` carries. The
reference script additionally re-draws the MDS matrix when its (Sage-only) invariant
subspace checks fail; we do not run those checks, so for widths other than 3 the matrix is
the first Cauchy draw. Filecoin's neptune uses a different MDS construction and round
numbers: this is not neptune-compatible.

Hashing convention (circomlib's): the state is ``[0, m_1, ..., m_{t-1}]`` (capacity lane
0 holds zero), the digest is lane 0 of the permuted state.

    >>> poseidon_permutation([0, 1, 2])[0] == 0x28CE19420FC246A05553AD1E8C98F5C9D67166BE2C18E9E4CB4B4E317DD2A78A
    True
    >>> poseidon_hash([1, 2]) == poseidon_permutation([0, 1, 2])[0]
    True
"""

from __future__ import annotations

import functools
import operator

import attrs

from cuzk.errors import CircuitError
from cuzk.field.params import FR

__all__ = ["PoseidonParams", "poseidon_params", "poseidon_permutation", "poseidon_hash", "ROUNDS"]

_R = FR.modulus
_N_BITS = 255  # field size in bits, as the reference script takes it
ALPHA = 5  # S-box x^5 (gcd(5, r - 1) = 1 for BLS12-381 Fr)
# Full and partial round numbers for x^5 at 128-bit security over a 255-bit prime, as the 2019
# reference script chooses them (hadeshash poseidonperm_x5_255_3 uses 8/57; width 9 gets 8/63,
# the same numbers circomlib's table lists for these widths).
ROUNDS = {3: (8, 57), 9: (8, 63)}


class _Grain:
    """The reference self-shrinking Grain LFSR over an 80-bit state (bit 0 = oldest)."""

    def __init__(self, field: int, sbox: int, n: int, t: int, r_f: int, r_p: int):
        bits = []
        for value, width in ((field, 2), (sbox, 4), (n, 12), (t, 12), (r_f, 10), (r_p, 10)):
            bits += [(value >> (width - 1 - i)) & 1 for i in range(width)]
        bits += [1] * 30
        self._s = bits
        for _ in range(160):  # discard the first 160 output bits, as the reference does
            self._step()

    def _step(self) -> int:
        s = self._s
        b = s[62] ^ s[51] ^ s[38] ^ s[23] ^ s[13] ^ s[0]
        del s[0]
        s.append(b)
        return b

    def bit(self) -> int:
        # Self-shrinking: pairs (b1, b2); output b2 when b1 is 1, discard the pair otherwise.
        while True:
            b1 = self._step()
            b2 = self._step()
            if b1:
                return b2

    def bits(self, n: int) -> int:
        v = 0
        for _ in range(n):
            v = (v << 1) | self.bit()  # most significant bit first
        return v


@attrs.frozen
class PoseidonParams:
    """One Poseidon instance over Fr: width ``t``, rounds, constants and MDS matrix (Python ints)."""

    t: int
    r_f: int
    r_p: int
    round_constants: tuple  # (r_f + r_p) * t ints, consumed t per round
    mds: tuple  # t rows of t ints


@functools.cache
def poseidon_params(t: int) -> PoseidonParams:
    """The Grain-derived instance of width ``t`` (3 or 9), computed once per process.

    >>> p = poseidon_params(3); (p.t, p.r_f, p.r_p, len(p.round_constants))
    (3, 8, 57, 195)
    """
    if t not in ROUNDS:
        raise CircuitError(f"Poseidon width must be one of {sorted(ROUNDS)}, got {t}")
    r_f, r_p = ROUNDS[t]
    g = _Grain(1, 0, _N_BITS, t, r_f, r_p)  # field type 1 = prime field, S-box 0 = x^alpha
    rc = []
    while len(rc) < (r_f + r_p) * t:
        v = g.bits(_N_BITS)
        if v < _R:
            rc.append(v)
    while True:
        pts = [g.bits(_N_BITS) % _R for _ in range(2 * t)]
        if len(set(pts)) != 2 * t:
            continue
        xs, ys = pts[:t], pts[t:]
        if any((x + y) % _R == 0 for x in xs for y in ys):
            continue
        mds = tuple(tuple(pow(x + y, -1, _R) for y in ys) for x in xs)
        return PoseidonParams(t=t, r_f=r_f, r_p=r_p, round_constants=tuple(rc), mds=mds)


def _index(x):
    """An integer (numpy ones too) as an int; anything else is left for check_canonical to reject."""
    try:
        return operator.index(x)
    except TypeError:
        return x


def poseidon_permutation(state) -> list[int]:
    """The Poseidon permutation on a list of ``t`` canonical Fr ints (t = 3 or 9).

    >>> len(poseidon_permutation([0] * 9))
    9
    """
    t = len(state)
    p = poseidon_params(t)
    # no int(): it would truncate 1.5 and parse '1', hashing a value the caller never had
    s = [FR.check_canonical(_index(x)) for x in state]
    k = 0
    half = p.r_f // 2
    for rnd in range(p.r_f + p.r_p):
        s = [(x + p.round_constants[k + i]) % _R for i, x in enumerate(s)]
        k += t
        if rnd < half or rnd >= half + p.r_p:
            s = [pow(x, ALPHA, _R) for x in s]
        else:
            s[0] = pow(s[0], ALPHA, _R)  # partial round: one S-box, on lane 0
        s = [sum(m * x for m, x in zip(row, s)) % _R for row in p.mds]
    return s


def poseidon_hash(inputs) -> int:
    """Hash 2 (width 3) or 8 (width 9) Fr ints: lane 0 of the permutation of ``[0, *inputs]``.

    >>> poseidon_hash([0, 0]) == poseidon_permutation([0, 0, 0])[0]
    True
    """
    inputs = list(inputs)
    if len(inputs) + 1 not in ROUNDS:
        raise CircuitError(f"poseidon_hash takes 2 or 8 inputs, got {len(inputs)}")
    return poseidon_permutation([0, *inputs])[0]
