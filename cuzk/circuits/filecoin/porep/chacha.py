"""The ChaCha block function in Numba: ChaCha8 for the DRG's per-node RNG, ChaCha20 for synthetic
PoRep challenges.

A block is 16 little-endian u32 words: the four "expand 32-byte k" constants, eight key words and
four words the caller picks (``tail``). rand_chacha's ``ChaCha8Rng::from_seed`` puts a 64-bit
block counter then a 64-bit stream id (0) there; RFC 8439's ChaCha20 a 32-bit counter then a
96-bit nonce. The keystream is the blocks of counter 0, 1, 2... serialized in order.

    >>> keystream(bytes(32), 8, 64).hex()[:32]  # ChaCha8, zero key and nonce
    '3e00ef2f895f40d67f5bb8e81f09a5a1'
    >>> block = keystream(bytes(range(32)), 20, 64, counter=1, nonce=bytes.fromhex("000000090000004a00000000"))
    >>> block.hex()[:32]  # RFC 8439 section 2.3.2
    '10f1e7e4d13b5915500fdd1fa32071c4'
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cuzk.errors import InputError

__all__ = ["keystream", "chacha_blocks", "SIGMA_WORDS"]

#: "expand 32-byte k" as four little-endian u32 words
SIGMA_WORDS = np.array([0x61707865, 0x3320646E, 0x79622D32, 0x6B206574], dtype=np.uint32)
SIGMA_WORDS.setflags(write=False)

_M32 = np.uint64(0xFFFFFFFF)


@njit(cache=True, nogil=True, inline="always")
def _rotl32(x, n):
    return ((x << np.uint64(n)) | (x >> np.uint64(32 - n))) & _M32


@njit(cache=True, nogil=True, inline="always")
def _quarter(x, a, b, c, d):
    x[a] = (x[a] + x[b]) & _M32
    x[d] = _rotl32(x[d] ^ x[a], 16)
    x[c] = (x[c] + x[d]) & _M32
    x[b] = _rotl32(x[b] ^ x[c], 12)
    x[a] = (x[a] + x[b]) & _M32
    x[d] = _rotl32(x[d] ^ x[a], 8)
    x[c] = (x[c] + x[d]) & _M32
    x[b] = _rotl32(x[b] ^ x[c], 7)


@njit(cache=True, nogil=True)
def chacha_block_into(state, rounds, x, out, at):
    """One block: ``out[at:at + 16]`` = ChaCha``rounds``(``state``), ``state`` 16 u32 words.

    ``x`` is a 16-word uint64 scratch array (the caller keeps one per thread, so a kernel that
    runs millions of blocks allocates nothing per block).
    """
    for i in range(16):
        x[i] = np.uint64(state[i])
    for _ in range(rounds // 2):
        _quarter(x, 0, 4, 8, 12)  # column round
        _quarter(x, 1, 5, 9, 13)
        _quarter(x, 2, 6, 10, 14)
        _quarter(x, 3, 7, 11, 15)
        _quarter(x, 0, 5, 10, 15)  # diagonal round
        _quarter(x, 1, 6, 11, 12)
        _quarter(x, 2, 7, 8, 13)
        _quarter(x, 3, 4, 9, 14)
    for i in range(16):
        out[at + i] = np.uint32((x[i] + np.uint64(state[i])) & _M32)


@njit(cache=True, nogil=True)
def _blocks(state, rounds, first, count, out):
    x = np.empty(16, dtype=np.uint64)
    s = state.copy()
    for j in range(count):
        s[12] = np.uint32((np.uint64(first) + np.uint64(j)) & _M32)
        chacha_block_into(s, rounds, x, out, 16 * j)


def _state(key: bytes, nonce: bytes) -> np.ndarray:
    if len(key) != 32:
        raise InputError(f"ChaCha key must be 32 bytes, got {len(key)}")
    if len(nonce) not in (8, 12):
        raise InputError(f"ChaCha nonce must be 8 or 12 bytes, got {len(nonce)}")
    s = np.zeros(16, dtype=np.uint32)
    s[:4] = SIGMA_WORDS
    s[4:12] = np.frombuffer(key, dtype="<u4")
    # 8-byte nonce: a 64-bit counter in words 12-13 (rand_chacha, DJB); 12-byte: RFC 8439's
    # 32-bit counter in word 12 only.
    s[16 - len(nonce) // 4:] = np.frombuffer(nonce, dtype="<u4")
    return s


def chacha_blocks(key: bytes, rounds: int, first: int, count: int, nonce: bytes = bytes(8)) -> np.ndarray:
    """Blocks ``first .. first + count - 1`` of the ChaCha``rounds`` keystream as (count * 16) u32 words.

    The counter is word 12 only (the high counter word of an 8-byte nonce stays 0): enough for
    the 2^32 blocks (256 GiB) of keystream any caller here reads.

    Raises:
        InputError: a key that is not 32 bytes, a nonce not 8 or 12 bytes, blocks past 2^32.
    """
    if rounds not in (8, 12, 20):
        raise InputError(f"ChaCha rounds must be 8, 12 or 20, got {rounds}")
    if first < 0 or count < 0 or first + count > 1 << 32:
        raise InputError(f"ChaCha blocks {first}..{first + count} fall outside the 32-bit block counter")
    out = np.empty(16 * count, dtype=np.uint32)
    _blocks(_state(bytes(key), bytes(nonce)), np.int64(rounds), np.int64(first), np.int64(count), out)
    return out


def keystream(key: bytes, rounds: int, length: int, *, counter: int = 0, nonce: bytes = bytes(8), offset: int = 0) -> bytes:
    """``length`` keystream bytes from byte ``offset`` of the stream whose first block is ``counter``.

    Raises:
        InputError: as :func:`chacha_blocks`.
    """
    start = counter * 64 + offset
    first, skip = divmod(start, 64)
    count = (skip + length + 63) // 64
    return chacha_blocks(key, rounds, first, count, nonce).tobytes()[skip:skip + length]
