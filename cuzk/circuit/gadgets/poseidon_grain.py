"""The Poseidon paper's Grain LFSR: round constants and Cauchy MDS points for any prime field.

The reference procedure (``generate_parameters_grain.sage`` of the hadeshash repository, which
circomlib's and neptune's constants also follow): an 80-bit LFSR seeded with the bits of
(field type: 2 bits, S-box type: 4, field size n: 12, width t: 12, R_F: 10, R_P: 10) followed by
30 ones, updated as ``b[i+80] = b[i+62] ^ b[i+51] ^ b[i+38] ^ b[i+23] ^ b[i+13] ^ b[i]``; the
first 160 bits are discarded, then bits are taken in pairs and the second bit of a pair is kept
only when the first is 1 (self-shrinking). A field element is ``n`` kept bits read most
significant first.

The LFSR's smallest tap distance is 18 (80 - 62), so 18 new bits depend only on the previous
80: the stream is produced 18 bits per step with Python int shifts, then shrunk with numpy.

    >>> g = GrainStream(field=1, sbox=0, n=255, t=3, r_f=8, r_p=57)
    >>> rc = g.round_constants(3 * 65, 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001)
    >>> hex(rc[0])[:10]
    '0x6c4ffa72'
"""

from __future__ import annotations

import numpy as np

__all__ = ["GrainStream", "cauchy_points"]

_STEP = 18  # bits produced per LFSR step (80 - 62: no new bit depends on another new bit)
_MASK = (1 << _STEP) - 1


def _seed(fields) -> int:
    """The 80-bit initial state as an int whose bit j is b_j (b_0 first in the stream)."""
    bits = []
    for value, width in fields:
        if not 0 <= value < (1 << width):
            raise ValueError(f"Grain seed field {value} does not fit in {width} bits")
        bits += [(value >> (width - 1 - i)) & 1 for i in range(width)]
    bits += [1] * 30
    return sum(b << j for j, b in enumerate(bits))


class GrainStream:
    """The self-shrunk output bits of one seeded Grain LFSR, consumed front to back."""

    def __init__(self, *, field: int, sbox: int, n: int, t: int, r_f: int, r_p: int):
        self.n = n
        self._state = _seed(((field, 2), (sbox, 4), (n, 12), (t, 12), (r_f, 10), (r_p, 10)))
        self._skip = 160  # raw bits still to discard
        self._out = np.zeros(0, dtype=np.uint8)  # shrunk bits not yet consumed
        self._pending = np.zeros(0, dtype=np.uint8)  # raw bits not yet paired

    def _more(self, steps: int = 4096) -> None:
        s, words = self._state, []
        for _ in range(steps):
            new = ((s >> 62) ^ (s >> 51) ^ (s >> 38) ^ (s >> 23) ^ (s >> 13) ^ s) & _MASK
            s = (s >> _STEP) | (new << 62)
            words.append(new)
        self._state = s
        w = np.array(words, dtype=np.uint32)
        raw = ((w[:, None] >> np.arange(_STEP, dtype=np.uint32)) & 1).astype(np.uint8).ravel()
        if self._skip:
            k = min(self._skip, raw.shape[0])
            raw, self._skip = raw[k:], self._skip - k
        raw = np.concatenate([self._pending, raw])
        even = raw.shape[0] & ~1
        pairs, self._pending = raw[:even].reshape(-1, 2), raw[even:]
        self._out = np.concatenate([self._out, pairs[pairs[:, 0] == 1, 1]])

    def bits(self, count: int) -> np.ndarray:
        """The next ``count`` output bits (uint8 0/1)."""
        while self._out.shape[0] < count:
            self._more()
        out, self._out = self._out[:count], self._out[count:]
        return out

    def element(self) -> int:
        """The next ``n``-bit integer, most significant bit first (not reduced)."""
        return int("".join("1" if b else "0" for b in self.bits(self.n).tolist()), 2)

    def round_constants(self, count: int, modulus: int) -> list[int]:
        """``count`` constants: n-bit draws, each rejected while >= modulus."""
        out = []
        while len(out) < count:
            v = self.element()
            if v < modulus:
                out.append(v)
        return out


def cauchy_points(stream: GrainStream, t: int, modulus: int) -> tuple[list[int], list[int]]:
    """The reference script's MDS draw: 2t n-bit draws reduced mod p, drawn again while any two
    coincide or some x_i + y_j is 0; returns (xs, ys) for ``M[i][j] = 1 / (x_i + y_j)``."""
    while True:
        pts = [stream.element() % modulus for _ in range(2 * t)]
        if len(set(pts)) != 2 * t:
            continue
        xs, ys = pts[:t], pts[t:]
        if any((x + y) % modulus == 0 for x in xs for y in ys):
            continue
        return xs, ys
