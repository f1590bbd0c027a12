"""Fallback PoSt challenge derivation, as rust-fil-proofs' ``generate_leaf_challenge``.

A challenge is ``sha256(randomness ‖ sector_id ‖ challenge_index)``, with the randomness as its
32-byte little-endian Fr representation and the two integers as u64 little-endian; the first 8
bytes of the digest, read as a u64 little-endian, modulo the sector's leaf count. The challenge
index is ``n`` under API version 1.2 and ``sector_index * challenge_count + n`` under 1.0 / 1.1
(``sector_index`` counted across partitions).

    >>> import hashlib
    >>> d = hashlib.sha256((5).to_bytes(32, "little") + (7).to_bytes(8, "little") + (1).to_bytes(8, "little")).digest()
    >>> leaf_challenge(5, 7, 1, 64) == int.from_bytes(d[:8], "little") % 64
    True
    >>> challenge_index("1.0", sector_index=2, challenge_count=5, n=1), challenge_index("1.2", 2, 5, 1)
    (11, 1)
"""

from __future__ import annotations

import hashlib
import operator

from cuzk.errors import InputError
from cuzk.field import FR

__all__ = ["leaf_challenge", "challenge_index", "API_VERSIONS", "check_u64", "check_randomness"]

API_VERSIONS = ("1.0", "1.1", "1.2")


def check_u64(x, what: str) -> int:
    try:
        v = operator.index(x)
    except TypeError:
        raise InputError(f"{what} must be an int, got {type(x).__name__}") from None
    if not 0 <= v < 1 << 64:
        raise InputError(f"{what} must fit in a u64, got {v}")
    return v


def check_randomness(randomness) -> int:
    try:
        v = operator.index(randomness)
    except TypeError:
        raise InputError(f"randomness must be an int (a canonical Fr element), got {type(randomness).__name__}") from None
    if not 0 <= v < FR.modulus:
        raise InputError(f"randomness must be a canonical BLS12-381 Fr element (0 <= x < r), got {v}")
    return v


def check_api_version(api_version) -> str:
    if api_version not in API_VERSIONS:
        raise InputError(f"api_version must be one of {API_VERSIONS}, got {api_version!r}")
    return api_version


def challenge_index(api_version: str, sector_index: int, challenge_count: int, n: int) -> int:
    """The index hashed for challenge ``n`` of the sector at ``sector_index``."""
    if check_api_version(api_version) == "1.2":
        return n
    return sector_index * challenge_count + n


def leaf_challenge(randomness: int, sector_id: int, index: int, leaves: int) -> int:
    """The challenged leaf for ``index`` of sector ``sector_id`` (see the module docstring)."""
    msg = (
        check_randomness(randomness).to_bytes(32, "little")
        + check_u64(sector_id, "sector_id").to_bytes(8, "little")
        + check_u64(index, "challenge index").to_bytes(8, "little")
    )
    return int.from_bytes(hashlib.sha256(msg).digest()[:8], "little") % leaves
