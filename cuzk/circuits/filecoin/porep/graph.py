"""The Stacked-DRG graph of Filecoin's PoRep: 6 DRG parents and 8 expander parents per node.

The DRG (``BucketGraph``, degree 6) draws each node's parents by bucket sampling from a
ChaCha8 stream seeded with ``sha256("Filecoin_DRSample" || porep_id)[:28] || node as u32 LE``;
one parent is always the node's predecessor ``node - 1`` (first under API 1.1 / 1.2, last
under 1.0), nodes 0 and 1 have all-zero parents. The expander (degree 8) maps the edge slots
``node * 8 + i`` through a Feistel permutation of ``[0, nodes * 8)`` keyed by
``sha256("Filecoin_Feistel" || porep_id)`` (:mod:`~cuzk.circuits.filecoin.porep.feistel`) and
divides by 8 (truncating the slot to 32 bits first under API 1.0). The parent cache file is the
14 parents of every node as u32 little-endian, node after node.

    >>> from cuzk.circuits.filecoin.porep.registered import porep_id
    >>> p = parents(64, porep_id(5), "1.1")
    >>> p.shape, p[0].tolist() == [0] * 6 + p[0, 6:].tolist(), int(p[10, 0])
    ((64, 14), True, 9)
    >>> parent_cache_id(64, porep_id(5))[:24]
    'v28-sdr-parent-494d91dc8'
"""

from __future__ import annotations

import hashlib
import operator
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from cuzk.circuits.filecoin.porep.chacha import SIGMA_WORDS, chacha_block_into
from cuzk.circuits.filecoin.porep.feistel import precompute, round_tables, swapped_keys, table_permute
from cuzk.errors import InputError

__all__ = [
    "BASE_DEGREE", "EXP_DEGREE", "DEGREE", "PARENT_CACHE_VERSION",
    "drg_seed", "feistel_keys", "parents", "parent_cache", "parent_cache_id", "check_porep_id",
]

BASE_DEGREE = 6  # DRG parents, the predecessor included
EXP_DEGREE = 8  # expander parents
DEGREE = BASE_DEGREE + EXP_DEGREE
PARENT_CACHE_VERSION = 28  # rust-fil-proofs' parameter_cache VERSION, part of the cache file name
_TREE_HASHER = "poseidon_hasher"  # the tree hasher's name, hashed into the cache file name

_U = np.uint64
_CHUNK = 1 << 16  # nodes per thread task: big enough to amortise the call, small enough to balance


def check_porep_id(porep_id) -> bytes:
    if not isinstance(porep_id, (bytes, bytearray, memoryview)) or len(porep_id) != 32:
        raise InputError(f"porep_id must be 32 bytes, got {porep_id!r:.80}")
    return bytes(porep_id)


def _legacy(api_version) -> bool:
    """True for API 1.0 (predecessor last, 32-bit expander slots); False for 1.1 and 1.2."""
    v = str(api_version)
    if v in ("1.0", "1.0.0"):
        return True
    if v in ("1.1", "1.1.0", "1.2", "1.2.0"):
        return False
    raise InputError(f"api_version must be one of 1.0.0, 1.1.0, 1.2.0, got {api_version!r}")


def _check_nodes(nodes) -> int:
    try:
        n = operator.index(nodes)
    except TypeError:
        raise InputError(f"nodes must be an int, got {type(nodes).__name__}") from None
    # Parents are u32 and the expander's slots (n * 8) must keep its 32-bit half masks.
    if not 2 <= n <= 1 << 31:
        raise InputError(f"nodes must be in [2, 2^31], got {n}")
    return n


def _int_or(x, default: int, what: str) -> int:
    if x is None:
        return default
    try:
        return operator.index(x)
    except TypeError:
        raise InputError(f"{what} must be an int, got {type(x).__name__}") from None


def drg_seed(porep_id: bytes) -> bytes:
    """The DRG's 28-byte seed: ``sha256("Filecoin_DRSample" || porep_id)[:28]``."""
    return hashlib.sha256(b"Filecoin_DRSample" + check_porep_id(porep_id)).digest()[:28]


def feistel_keys(porep_id: bytes) -> tuple:
    """The expander's four Feistel keys: ``sha256("Filecoin_Feistel" || porep_id)`` as 4 u64 LE
    (the permutation uses the first three)."""
    d = hashlib.sha256(b"Filecoin_Feistel" + check_porep_id(porep_id)).digest()
    return tuple(int.from_bytes(d[8 * i:8 * i + 8], "little") for i in range(4))


@njit(cache=True, nogil=True, inline="always")
def _rng_u64(words, k):
    # rand_chacha's next_u64: two consecutive keystream words, the first one low.
    return _U(words[2 * k]) | (_U(words[2 * k + 1]) << _U(32))


@njit(cache=True, nogil=True)
def _drg_parents(node, state, x, words, legacy, row):
    """The 6 DRG parents of ``node`` (>= 2) into ``row[0:6]``; ``state`` holds the seed words."""
    state[11] = np.uint32(node)
    state[12] = np.uint32(0)
    chacha_block_into(state, 8, x, words, 0)
    state[12] = np.uint32(1)
    chacha_block_into(state, 8, x, words, 16)  # 5 parents draw 10 u64 = 20 words
    m_prime = _U(BASE_DEGREE - 1)
    meta = _U(node) * m_prime
    # ceil(log2(meta)) as rust-fil-proofs takes it through f64: meta = 5 * node is never a power
    # of two and stays below 2^34, far from f64 rounding, so it is meta's bit length.
    n_buckets = _U(0)
    t = meta
    while t:
        n_buckets += _U(1)
        t >>= _U(1)
    first = 0 if legacy else 1
    for k in range(BASE_DEGREE - 1):
        bucket = _rng_u64(words, 2 * k) % n_buckets + _U(1)
        largest = min(meta, _U(1) << bucket)
        smallest = max(_U(2), largest >> _U(1))
        distance = smallest + _rng_u64(words, 2 * k + 1) % (largest - smallest + _U(1))
        parent = (meta - distance) // m_prime
        row[first + k] = np.uint32(node - 1) if parent == _U(node) else np.uint32(parent)
    row[BASE_DEGREE - 1 if legacy else 0] = np.uint32(node - 1)


@njit(cache=True, nogil=True)
def _parents_kernel(nodes, start, seed_words, tables, left_mask, right_mask, half_bits, legacy, out):
    """Rows ``start .. start + len(out) - 1`` of the parents table into ``out``."""
    n_slots = _U(nodes) * _U(EXP_DEGREE)
    m32 = _U(0xFFFFFFFF)
    state = np.zeros(16, dtype=np.uint32)
    state[:4] = SIGMA_WORDS
    state[4:11] = seed_words
    x = np.empty(16, dtype=np.uint64)
    words = np.empty(32, dtype=np.uint32)
    for node in range(start, start + out.shape[0]):
        row = out[node - start]
        if node < 2:
            for k in range(BASE_DEGREE):
                row[k] = np.uint32(0)
        else:
            _drg_parents(node, state, x, words, legacy, row)
        for i in range(EXP_DEGREE):
            slot = table_permute(n_slots, _U(node) * _U(EXP_DEGREE) + _U(i), tables, left_mask, right_mask, half_bits)
            if legacy:
                slot &= m32  # API 1.0 cast the slot to u32 before dividing
            row[BASE_DEGREE + i] = np.uint32(slot // _U(EXP_DEGREE))


def parents(nodes: int, porep_id: bytes, api_version, start: int = 0, stop: int | None = None, *, threads: int | None = None) -> np.ndarray:
    """The 14 parents of nodes ``start .. stop - 1`` (default all): ``(stop - start, 14)``
    uint32, the 6 DRG parents then the 8 expander ones.

    Args:
        nodes: the sector's node count (sector size / 32).
        porep_id: the 32-byte PoRep id (:func:`~cuzk.circuits.filecoin.porep.registered.porep_id`).
        api_version: ``"1.0.0"``, ``"1.1.0"`` or ``"1.2.0"`` (``"1.0"`` etc. also accepted).
        start, stop: the node range, for a sector too large to hold whole.
        threads: worker threads (default: the CPU count); the kernel releases the GIL.

    Raises:
        InputError: nodes outside [2, 2^31], a porep_id not 32 bytes, an unknown API version,
            a range outside [0, nodes].
    """
    n = _check_nodes(nodes)
    lo, hi = _int_or(start, 0, "start"), _int_or(stop, n, "stop")
    if not 0 <= lo <= hi <= n:
        raise InputError(f"node range [{lo}, {hi}) must lie within [0, {n}]")
    legacy = _legacy(api_version)
    seed_words = np.frombuffer(drg_seed(porep_id), dtype="<u4").astype(np.uint32)
    lm, rm, hb = precompute(n * EXP_DEGREE)
    out = np.empty((hi - lo, DEGREE), dtype=np.uint32)
    tables = round_tables(swapped_keys(feistel_keys(porep_id)), hb)
    consts = (seed_words, tables, _U(lm), _U(rm), _U(hb), legacy)

    def run(a: int) -> None:
        b = min(hi, a + _CHUNK)
        _parents_kernel(np.int64(n), np.int64(a), *consts, out[a - lo:b - lo])

    starts = range(lo, hi, _CHUNK)
    workers = min(len(starts), threads or os.cpu_count() or 1)
    if workers <= 1:
        for a in starts:
            run(a)
    else:
        with ThreadPoolExecutor(workers, thread_name_prefix="cuzk-porep-graph") as pool:
            list(pool.map(run, starts))
    return out


def parent_cache(nodes: int, porep_id: bytes, api_version) -> bytes:
    """The parent cache file's bytes as rust-fil-proofs writes them: per node 14 u32 LE.

    Raises:
        InputError: as :func:`parents`.
    """
    return parents(nodes, porep_id, api_version).astype("<u4", copy=False).tobytes()


def parent_cache_id(nodes: int, porep_id: bytes) -> str:
    """The cache file's name stem, ``v28-sdr-parent-<hex>``: the hex is the sha256 of the tree
    hasher's name, the stacked graph's identifier string, the four Feistel keys (u64 LE) and the
    node count (u32 LE). The API version is not part of it."""
    n = _check_nodes(nodes)
    identifier = (
        f"stacked_graph::StackedGraph{{expansion_degree: {EXP_DEGREE} base_graph: "
        f"drgraph::BucketGraph{{size: {n}; degree: {BASE_DEGREE}; hasher: {_TREE_HASHER}}} }}"
    )
    h = hashlib.sha256(_TREE_HASHER.encode() + identifier.encode())
    for k in feistel_keys(porep_id):
        h.update(k.to_bytes(8, "little"))
    h.update(n.to_bytes(4, "little"))
    return f"v{PARENT_CACHE_VERSION}-sdr-parent-{h.hexdigest()}"
