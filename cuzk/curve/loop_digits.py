"""Signed digits of a loop parameter: binary or NAF, for Miller loops and exponentiations by x.

A pairing's Miller loop doubles once per digit and adds ±Q per non-zero digit; an exponentiation
by the seed in the cyclotomic subgroup squares once per digit and multiplies by f or its
conjugate (the inverse there). A −1 digit is as cheap as a 1 in both, so the cheaper of the two
representations is used (``cuzk.curves.families`` derives the parameters; the generated pairing
modules call :func:`loop_digits` at import).

    >>> naf(7), loop_digits(15)                  # 7 = 8 − 1; 15 = 16 − 1 (NAF beats 1111)
    ([-1, 0, 0, 1], [0, 0, 0, -1])
"""

from __future__ import annotations

__all__ = ["naf", "loop_digits"]


def naf(n: int) -> list[int]:
    """Non-adjacent form of n >= 0, least significant digit first (digits in {−1, 0, 1}).

    >>> naf(12)
    [0, 0, -1, 0, 1]
    """
    if n < 0:
        raise ValueError(f"naf needs n >= 0, got {n}")
    out = []
    while n:
        if n & 1:
            d = 2 - (n & 3)  # 1 when n = 1 mod 4, −1 when n = 3 mod 4: the next bit becomes 0
            n -= d
        else:
            d = 0
        out.append(d)
        n >>= 1
    return out


def loop_digits(n: int) -> list[int]:
    """Digits of |n| below the leading one, most significant first, for a double-and-add loop.

    Binary or NAF, whichever costs fewer steps (one doubling per digit plus one addition per
    non-zero digit; binary on a tie, so BLS12-381's |x| keeps its 63 doublings + 5 additions).

    >>> loop_digits(0b1011), loop_digits(0b1111)  # 15 = 16 − 1: NAF is cheaper
    ([0, 1, 1], [0, 0, 0, -1])
    """
    n = abs(n)
    binary = [int(c) for c in bin(n)[3:]]
    signed = naf(n)[::-1][1:]

    def cost(d):
        return len(d) + sum(1 for v in d if v)

    return signed if cost(signed) < cost(binary) else binary
