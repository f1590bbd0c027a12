"""PoRep challenge derivation: interactive, synthetic and non-interactive, as rust-fil-proofs.

Every challenge is a 256-bit little-endian integer ``x`` reduced to ``x mod (nodes - 1) + 1``,
so node 0 is never challenged. Challenge ``j = partition * count + i`` of a partition hashes:

- interactive: ``sha256(replica_id || seed || j as u32 LE)``;
- non-interactive: ``sha256("filecoin.io|PoRep|1|NonInteractive|1" || replica_id || comm_r || j as u32 LE)``;
- synthetic: the sector first draws ``num_synth`` challenges, 32 bytes each, from the ChaCha20
  stream keyed with ``BLAKE2b-256(key="filecoin.io|PoRep|1|Synthetic|1|Generation",
  replica_id || comm_r)`` (nonce ``"synth-porep\\0"``); the proof's challenges are the synthetic
  ones at the indices read, as u32 LE modulo ``num_synth``, from the ChaCha20 stream keyed with
  ``BLAKE2b-256(key="...|Synthetic|1|Selection", replica_id || randomness)`` from byte ``4 j``.

Field elements (``replica_id``, ``comm_r``) are ints (canonical Fr) or their 32 little-endian
bytes; ``seed`` and ``randomness`` are 32 bytes.

    >>> synthetic_challenges(1 << 10, 55, 101, 5)
    [178, 297, 869, 211, 875]
    >>> ni_challenges(64, 5, 7, 2, partition=1) == ni_challenges(64, 5, 7, 4)[2:]
    True
"""

from __future__ import annotations

import hashlib
import operator

import numpy as np
from numba import njit

from cuzk.circuits.filecoin.porep.chacha import chacha_blocks, keystream
from cuzk.circuits.filecoin.porep.registered import DEFAULT_SYNTH_CHALLENGES, NON_INTERACTIVE, SYNTHETIC
from cuzk.errors import InputError
from cuzk.field import FR

__all__ = [
    "interactive_challenges", "ni_challenges", "synthetic_challenges", "synthetic_porep_challenges",
    "synthetic_indexes", "partition_challenges", "NI_TAG",
]

NI_TAG = b"filecoin.io|PoRep|1|NonInteractive|1"
_GEN_KEY = b"filecoin.io|PoRep|1|Synthetic|1|Generation"
_SELECT_KEY = b"filecoin.io|PoRep|1|Synthetic|1|Selection"
_NONCE = b"synth-porep\x00"  # 12 bytes: RFC 8439 ChaCha20 with a 32-bit block counter
_SYNTH_SIZE = 32  # keystream bytes per synthetic challenge
_INDEX_SIZE = 4  # keystream bytes per selected index


def _int(x, what: str) -> int:
    try:
        return operator.index(x)
    except TypeError:
        raise InputError(f"{what} must be an int, got {type(x).__name__}") from None


def _nodes(nodes) -> int:
    n = _int(nodes, "nodes")
    if not 2 <= n < 1 << 32:
        raise InputError(f"nodes must be in [2, 2^32), got {n}")
    return n


def _fr_bytes(x, what: str) -> bytes:
    """A field element as its 32 canonical little-endian bytes."""
    if isinstance(x, (bytes, bytearray, memoryview)):
        if len(x) != 32:
            raise InputError(f"{what} must be 32 bytes or an int, got {len(x)} bytes")
        v = int.from_bytes(x, "little")
    else:
        v = _int(x, what)
    if not 0 <= v < FR.modulus:
        raise InputError(f"{what} must be a canonical BLS12-381 Fr element (0 <= x < r), got {v}")
    return v.to_bytes(32, "little")


def _bytes32(x, what: str) -> bytes:
    if not isinstance(x, (bytes, bytearray, memoryview)) or len(x) != 32:
        raise InputError(f"{what} must be 32 bytes, got {x!r:.80}")
    return bytes(x)


def _range(count, partition) -> range:
    c, k = _int(count, "count"), _int(partition, "partition")
    if c < 0:
        raise InputError(f"count must be >= 0, got {c}")
    if k < 0 or (k + 1) * c > 1 << 32:
        raise InputError(f"partition {k} with {c} challenges each runs past the u32 challenge index")
    return range(k * c, (k + 1) * c)


def _challenge(digest: bytes, nodes: int) -> int:
    return int.from_bytes(digest, "little") % (nodes - 1) + 1


def interactive_challenges(nodes, replica_id, seed, count, partition=0) -> list:
    """The interactive PoRep challenges of ``partition`` (``count`` of them), from the seed.

    Raises:
        InputError: nodes outside [2, 2^32), a non-canonical replica_id, a seed not 32 bytes, a
            negative count or a partition past the u32 challenge index.
    """
    n, rid, s = _nodes(nodes), _fr_bytes(replica_id, "replica_id"), _bytes32(seed, "seed")
    return [_challenge(hashlib.sha256(rid + s + j.to_bytes(4, "little")).digest(), n) for j in _range(count, partition)]


def ni_challenges(nodes, replica_id, comm_r, count, partition=0) -> list:
    """The non-interactive PoRep challenges of ``partition``, from comm_r (no seed).

    Raises:
        InputError: as :func:`interactive_challenges`, comm_r for seed.
    """
    n = _nodes(nodes)
    h = hashlib.sha256(NI_TAG + _fr_bytes(replica_id, "replica_id") + _fr_bytes(comm_r, "comm_r"))
    out = []
    for j in _range(count, partition):
        hj = h.copy()
        hj.update(j.to_bytes(4, "little"))
        out.append(_challenge(hj.digest(), n))
    return out


def _num_synth(nodes: int, num_synth) -> int:
    if num_synth is None:
        return min(nodes, DEFAULT_SYNTH_CHALLENGES)
    k = _int(num_synth, "num_synth")
    if not 1 <= k < 1 << 32:
        raise InputError(f"num_synth must be in [1, 2^32), got {k}")
    return k


def _gen_key(replica_id, comm_r) -> bytes:
    rid, cr = _fr_bytes(replica_id, "replica_id"), _fr_bytes(comm_r, "comm_r")
    return hashlib.blake2b(rid + cr, digest_size=32, key=_GEN_KEY).digest()


@njit(cache=True, nogil=True)
def _reduce_rows(words, m, out):
    # Each row is a 256-bit integer in 8 u32 LE words; r < m < 2^32 keeps r * 2^32 + w in a u64.
    for i in range(out.shape[0]):
        r = np.uint64(0)
        for k in range(7, -1, -1):
            r = ((r << np.uint64(32)) | np.uint64(words[i, k])) % m
        out[i] = np.int64(r) + 1


def synthetic_challenges(nodes, replica_id, comm_r, num_synth=None) -> list:
    """The sector's synthetic challenges (``num_synth`` of them; default ``min(nodes, 2^18)``).

    Raises:
        InputError: nodes outside [2, 2^32), a non-canonical replica_id or comm_r, num_synth
            outside [1, 2^32).
    """
    n = _nodes(nodes)
    k = _num_synth(n, num_synth)
    blocks = (k * _SYNTH_SIZE + 63) // 64
    words = chacha_blocks(_gen_key(replica_id, comm_r), 20, 0, blocks, _NONCE)[: k * 8].reshape(k, 8)
    out = np.empty(k, dtype=np.int64)
    _reduce_rows(words, np.uint64(n - 1), out)
    return out.tolist()


def synthetic_indexes(nodes, replica_id, num_synth, count, randomness, partition=0) -> list:
    """The indices into the synthetic challenges that ``partition``'s PoRep challenges take.

    Raises:
        InputError: as :func:`synthetic_porep_challenges`.
    """
    k = _num_synth(_nodes(nodes), num_synth)
    js = _range(count, partition)
    key = hashlib.blake2b(_fr_bytes(replica_id, "replica_id") + _bytes32(randomness, "randomness"),
                          digest_size=32, key=_SELECT_KEY).digest()
    raw = keystream(key, 20, len(js) * _INDEX_SIZE, nonce=_NONCE, offset=js.start * _INDEX_SIZE)
    return [int(x) % k for x in np.frombuffer(raw, dtype="<u4")]


def synthetic_porep_challenges(nodes, replica_id, comm_r, num_synth, count, randomness, partition=0) -> list:
    """The synthetic PoRep's challenges of ``partition``: the synthetic challenges selected by
    ``randomness`` (``num_synth`` None means the default count).

    Raises:
        InputError: as :func:`synthetic_challenges`, and a randomness not 32 bytes, a negative
            count or a partition past the u32 challenge index.
    """
    n = _nodes(nodes)
    k = _num_synth(n, num_synth)
    key = _gen_key(replica_id, comm_r)
    out = []
    for i in synthetic_indexes(n, replica_id, k, count, randomness, partition):
        # Only the selected challenges' 32 bytes of the generation stream are computed.
        out.append(_challenge(keystream(key, 20, _SYNTH_SIZE, nonce=_NONCE, offset=i * _SYNTH_SIZE), n))
    return out


def partition_challenges(proof, replica_id: bytes, seed: bytes, comm_r: bytes, partition: int) -> list:
    """The challenged nodes of ``partition`` of a sector sealed with registered ``proof``
    (a :class:`~cuzk.circuits.filecoin.porep.registered.SealProof`), as rust-fil-proofs derives them:
    interactive from ``seed``; non-interactive from ``comm_r``; synthetic: the synthetic
    challenges ``seed`` selects.

    >>> from cuzk.circuits.filecoin.porep.registered import registered_seal_proof
    >>> partition_challenges(registered_seal_proof(5), bytes(32), bytes(32), bytes(32), 0)
    [35, 25]
    """
    count, n = proof.challenges_per_partition, proof.nodes
    if proof.feature == NON_INTERACTIVE:
        return ni_challenges(n, replica_id, comm_r, count, partition)
    if proof.feature == SYNTHETIC:
        return synthetic_porep_challenges(n, replica_id, comm_r, proof.synthetic_challenges, count, seed, partition)
    return interactive_challenges(n, replica_id, seed, count, partition)
