"""Poseidon as one parameter-set type, :class:`PoseidonSpec`, with three named variants.

A spec is pure data: the curve whose Fr it works over, the width t, R_F / R_P, the round
constants and MDS matrix (derived, never pasted), the capacity element that starts the state
(the *tag*), the index of the output element, and how the circuit gadget lays out its
constraints. The permutation is the same for every variant: R_F/2 full rounds, R_P partial
rounds (S-box x^5 on element 0 only), R_F/2 full rounds; each round adds its t constants,
applies the S-box, then multiplies by the MDS matrix. A hash of ``k <= t - 1`` inputs permutes
``[tag, inputs..., zero padding]`` and returns element ``output``.

Variants (:func:`poseidon_spec`):

``cuzk``
    BLS12-381 Fr, t = 3 or 9; the Grain instance with S-box field 0 and Grain-drawn Cauchy MDS
    (:mod:`~cuzk.circuit.gadgets.poseidon_params`); tag 0, output element 0; the compact
    gadget layout. ``porep_like`` uses it.
``neptune``
    Filecoin's hash (BLS12-381 Fr), arities 2, 4, 8, 11, 16, 24, 36 (t = arity + 1). Grain
    seeded with S-box field 1 and n = 255; MDS ``M[i][j] = 1/(i + j + t)``; tag
    ``2^arity - 1`` (MerkleTree) or ``length * 2^64`` (ConstantLength); output element 1;
    the "allocated" gadget layout, whose constraint counts are neptune's (311 for arity 2).
``circomlib``
    circomlib's ``poseidon.circom`` (BN254 Fr), t = 2..17; Grain with S-box field 0 and
    n = 254, Grain-drawn Cauchy MDS; tag 0, output element 0; R_P per t from circomlib's table.

    >>> s = poseidon_spec("neptune", 3)
    >>> (s.curve, s.t, s.r_f, s.r_p, s.output, s.tag)
    ('bls12_381', 3, 8, 55, 1, 3)
    >>> hex(s.hash([0, 1]))
    '0x396508d75e76a56b739e0fd902efe161a6fba9339d05a69d2e203c369a02e7ff'
"""

from __future__ import annotations

import functools
import operator

import attrs

from cuzk.circuit.gadgets.poseidon_grain import GrainStream, cauchy_points
from cuzk.errors import CircuitError

__all__ = [
    "PoseidonSpec", "poseidon_spec", "VARIANTS", "LAYOUTS",
    "NEPTUNE_PARTIAL_ROUNDS", "CIRCOMLIB_PARTIAL_ROUNDS", "neptune_tag",
]

ALPHA = 5  # S-box x^5 in every variant (gcd(5, r - 1) = 1 for both curves' Fr)

#: gadget layouts: "compact" feeds combinations straight into the S-box (3 rows each);
#: "allocated" first allocates each S-box input that is not already a variable (one more row),
#: as neptune's circuit does, so constraint counts equal rust-fil-proofs'
LAYOUTS = ("compact", "allocated")

#: neptune's Standard-strength partial rounds by arity (R_F = 8 throughout)
NEPTUNE_PARTIAL_ROUNDS = {2: 55, 4: 56, 8: 57, 11: 57, 16: 59, 24: 59, 36: 60}
#: circomlib's partial rounds for t = 2..17 (poseidon.circom's N_ROUNDS_P, R_F = 8)
CIRCOMLIB_PARTIAL_ROUNDS = dict(zip(range(2, 18), (56, 57, 56, 60, 60, 63, 64, 63, 60, 66, 60, 65, 70, 60, 64, 68)))
# the cuzk variant's rounds, as the 2019 reference script chooses them for x^5 over 255 bits
_CUZK_ROUNDS = {3: (8, 57), 9: (8, 63)}


@attrs.frozen(eq=False)
class PoseidonSpec:
    """One Poseidon parameter set (Python ints); see the module docstring."""

    variant: str  # "cuzk" | "neptune" | "circomlib"
    curve: str  # canonical curve name (cuzk.curves) whose Fr this works over
    modulus: int  # that Fr's modulus
    t: int  # width
    r_f: int  # full rounds (half before, half after the partial rounds)
    r_p: int  # partial rounds
    round_constants: tuple  # (r_f + r_p) * t ints, t per round
    mds: tuple  # t rows of t ints: new_state[i] = sum_j mds[i][j] * state[j]
    tag: int  # capacity element 0 of the initial state for the default hash
    output: int  # index of the state element a hash returns
    layout: str  # gadget layout, one of LAYOUTS

    @property
    def arity(self) -> int:
        """Inputs per hash (t - 1)."""
        return self.t - 1

    def permute(self, state) -> list[int]:
        """The permutation on ``t`` canonical ints (pure Python; the reference for the kernels).

        >>> poseidon_spec("circomlib", 3).permute([0, 1, 2])[0] == poseidon_spec("circomlib", 3).hash([1, 2])
        True
        """
        r, t = self.modulus, self.t
        s = [_canonical(x, r) for x in state]
        if len(s) != t:
            raise CircuitError(f"Poseidon permutation of width {t} got {len(s)} elements")
        half, k = self.r_f // 2, 0
        for rnd in range(self.r_f + self.r_p):
            s = [(x + self.round_constants[k + i]) % r for i, x in enumerate(s)]
            k += t
            if rnd < half or rnd >= half + self.r_p:
                s = [pow(x, ALPHA, r) for x in s]
            else:
                s[0] = pow(s[0], ALPHA, r)
            s = [sum(m * x for m, x in zip(row, s)) % r for row in self.mds]
        return s

    def hash(self, inputs, tag: int | None = None) -> int:
        """Element ``output`` of the permutation of ``[tag, inputs..., 0...]`` (1 to t-1 inputs)."""
        inputs = list(inputs)
        if not 1 <= len(inputs) <= self.arity:
            raise CircuitError(f"{self.variant} Poseidon of width {self.t} hashes 1 to {self.arity} inputs, got {len(inputs)}")
        state = [self.tag if tag is None else tag, *inputs] + [0] * (self.arity - len(inputs))
        return self.permute(state)[self.output]


def _canonical(x, r: int) -> int:
    from cuzk.errors import FieldValueError

    try:
        v = operator.index(x)  # no int(): it would truncate 1.5 and parse '1'
    except TypeError:
        raise FieldValueError(f"a Poseidon input must be an int, got {type(x).__name__} {x!r:.40}") from None
    if not 0 <= v < r:
        raise FieldValueError(f"a Poseidon input must be a canonical field element in [0, r), got {v}")
    return v


def neptune_tag(hash_type: str, arity: int, length: int | None = None) -> int:
    """neptune's domain tag (Standard strength): MerkleTree 2^arity - 1, ConstantLength L * 2^64.

    >>> neptune_tag("merkle_tree", 8), neptune_tag("constant_length", 8, 3) == 3 << 64
    (255, True)
    """
    if hash_type == "merkle_tree":
        return (1 << arity) - 1
    if hash_type == "constant_length":
        if length is None or not 1 <= length <= arity:
            raise CircuitError(f"constant-length tag needs 1 <= length <= {arity}, got {length!r}")
        return length << 64
    raise CircuitError(f"hash_type must be 'merkle_tree' or 'constant_length', got {hash_type!r}")


#: The field each published parameter set is defined over: part of a variant's identity, like its
#: round numbers (its constants are drawn for that prime), so the one place in circuit/ that
#: names curves (tests/test_curve_sweep.py allows exactly this table).
VARIANT_CURVES = {"cuzk": "bls12_381", "neptune": "bls12_381", "circomlib": "bn254"}


def _modulus(curve: str) -> int:
    from cuzk import curves  # DESIGN §8: circuit -> curves, to resolve a curve name

    return curves.resolve(curve).fr.modulus


def _grain(*, sbox: int, n: int, t: int, r_f: int, r_p: int, modulus: int):
    g = GrainStream(field=1, sbox=sbox, n=n, t=t, r_f=r_f, r_p=r_p)
    return g, tuple(g.round_constants((r_f + r_p) * t, modulus))


def _cauchy(xs, ys, modulus: int) -> tuple:
    return tuple(tuple(pow((x + y) % modulus, -1, modulus) for y in ys) for x in xs)


def _cuzk(t: int) -> PoseidonSpec:
    if t not in _CUZK_ROUNDS:
        raise CircuitError(f"the cuzk Poseidon's width must be one of {sorted(_CUZK_ROUNDS)}, got {t}")
    r_f, r_p = _CUZK_ROUNDS[t]
    curve = VARIANT_CURVES["cuzk"]
    r = _modulus(curve)
    g, rc = _grain(sbox=0, n=r.bit_length(), t=t, r_f=r_f, r_p=r_p, modulus=r)
    xs, ys = cauchy_points(g, t, r)
    return PoseidonSpec("cuzk", curve, r, t, r_f, r_p, rc, _cauchy(xs, ys, r), 0, 0, "compact")


def _neptune(t: int) -> PoseidonSpec:
    arity = t - 1
    if arity not in NEPTUNE_PARTIAL_ROUNDS:
        raise CircuitError(f"neptune's arity must be one of {sorted(NEPTUNE_PARTIAL_ROUNDS)}, got {arity}")
    r_f, r_p = 8, NEPTUNE_PARTIAL_ROUNDS[arity]
    curve = VARIANT_CURVES["neptune"]
    r = _modulus(curve)
    # sbox=1 in the seed although the S-box is x^5: neptune's choice, kept for its constants
    _, rc = _grain(sbox=1, n=r.bit_length(), t=t, r_f=r_f, r_p=r_p, modulus=r)
    mds = _cauchy(range(t), range(t, 2 * t), r)  # x_i = i, y_j = t + j
    return PoseidonSpec("neptune", curve, r, t, r_f, r_p, rc, mds, (1 << arity) - 1, 1, "allocated")


def _circomlib(t: int) -> PoseidonSpec:
    if t not in CIRCOMLIB_PARTIAL_ROUNDS:
        raise CircuitError(f"circomlib's Poseidon width must be in 2..17, got {t}")
    r_f, r_p = 8, CIRCOMLIB_PARTIAL_ROUNDS[t]
    curve = VARIANT_CURVES["circomlib"]
    r = _modulus(curve)
    g, rc = _grain(sbox=0, n=r.bit_length(), t=t, r_f=r_f, r_p=r_p, modulus=r)
    xs, ys = cauchy_points(g, t, r)
    return PoseidonSpec("circomlib", curve, r, t, r_f, r_p, rc, _cauchy(xs, ys, r), 0, 0, "compact")


VARIANTS = {"cuzk": _cuzk, "neptune": _neptune, "circomlib": _circomlib}


@functools.cache
def poseidon_spec(variant: str, t: int) -> PoseidonSpec:
    """The ``variant`` parameter set of width ``t``, derived once per process.

    Raises:
        CircuitError: unknown variant, or a width the variant does not define.

    >>> poseidon_spec("cuzk", 3).r_p, poseidon_spec("circomlib", 3).r_p
    (57, 57)
    """
    make = VARIANTS.get(variant)
    if make is None:
        raise CircuitError(f"unknown Poseidon variant {variant!r}; known: {sorted(VARIANTS)}")
    if not isinstance(t, int) or isinstance(t, bool):
        raise CircuitError(f"Poseidon width must be an int, got {t!r}")
    return make(t)
