"""The sealer's Merkle trees: tree D (binary SHA-256 over the data) and the Poseidon trees C and R.

Tree D is rust-fil-proofs' ``BinaryMerkleTree<Sha256Hasher>``: its leaves are the sector's
32-byte nodes themselves (no leaf hash) and each parent is ``trim(SHA-256(left || right))``,
the digest with the two top bits of byte 31 cleared; its root is comm_d. Its levels are kept
as ``(m, 32)`` uint8 arrays, leaves first; written to a file they are concatenated in that
order, the layout of rust-fil-proofs' tree-D store (``sc-02-data-tree-d.dat``).

Trees C and R_last are Filecoin Poseidon trees of the sector's shape
(:class:`~cuzk.circuits.filecoin.tree.FilecoinTree`, base trees side by side in leaf order, the
same split into sub-trees as rust-fil-proofs' per-sub-tree stores). :func:`poseidon_tree` builds
one from Montgomery leaves on several threads (the hash kernels release the GIL) and equals
:func:`~cuzk.circuits.filecoin.tree.build_tree`; :func:`column_hashes` hashes each node's column
of labels (Poseidon of arity = layers), the leaves of tree C.

    >>> import hashlib
    >>> t = TreeD.build(np.zeros((4, 32), np.uint8))
    >>> [level.shape[0] for level in t.levels]
    [4, 2, 1]
    >>> h = bytearray(hashlib.sha256(bytes(64)).digest()); h[31] &= 0x3F
    >>> t.levels[1][0].tobytes() == bytes(h), t.path(2) == [bytes(32), bytes(h)]
    (True, True)
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs
import numpy as np

from cuzk.circuits.filecoin.porep.sha_kernels import hash_pairs
from cuzk.circuits.filecoin.poseidon import hash_nodes, neptune_spec
from cuzk.circuits.filecoin.shapes import TreeShape
from cuzk.circuits.filecoin.tree import FilecoinTree, check_challenge
from cuzk.errors import InputError
from cuzk.field import Fr

__all__ = ["TreeD", "poseidon_tree", "column_hashes", "tree_d_file", "resolve_threads"]

_ROWS_PER_TASK = 1 << 14  # hashes per thread task: large enough to hide the call overhead


def tree_d_file(out_dir) -> Path:
    """The file holding tree D's levels (rust-fil-proofs' store name for it)."""
    return Path(out_dir) / "sc-02-data-tree-d.dat"


def resolve_threads(threads) -> int:
    """``threads`` as a positive int; None = every core this process may run on."""
    if threads is None:
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # not Linux
            return max(1, os.cpu_count() or 1)
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InputError(f"threads must be a positive int or None, got {threads!r}")
    return threads


def _split(n: int, threads: int, minimum: int = _ROWS_PER_TASK) -> list[tuple[int, int]]:
    step = max(minimum, -(-n // max(1, threads)))
    return [(s, min(n, s + step)) for s in range(0, n, step)]


def _run(tasks, threads: int) -> list:
    """Run ``(fn, args)`` tasks on up to ``threads`` threads; results in task order."""
    if threads <= 1 or len(tasks) <= 1:
        return [fn(*args) for fn, args in tasks]
    with ThreadPoolExecutor(max_workers=min(threads, len(tasks)), thread_name_prefix="cuzk-seal") as ex:
        return list(ex.map(lambda t: t[0](*t[1]), tasks))


@attrs.frozen(eq=False)
class TreeD:
    """Tree D: ``levels[0]`` the data nodes, ``levels[-1]`` the root, each (m, 32) uint8."""

    levels: tuple

    @classmethod
    def build(cls, data: np.ndarray, *, out_dir=None, threads=None) -> "TreeD":
        """Tree D over ``data`` ((n, 32) uint8, n a power of two >= 2).

        With ``out_dir``, all levels sit in one memory-mapped file (:func:`tree_d_file`).

        Raises:
            InputError: a node count that is not a power of two >= 2.
        """
        n = int(data.shape[0])
        if n < 2 or n & (n - 1):
            raise InputError(f"tree D needs a power-of-two node count >= 2, got {n}")
        total = 2 * n - 1
        if out_dir is None:
            store = np.empty((total, 32), dtype=np.uint8)
        else:
            store = np.memmap(tree_d_file(out_dir), dtype=np.uint8, mode="w+", shape=(total, 32))
        store[:n] = data
        levels, at, m = [], 0, n
        while m >= 1:
            levels.append(store[at:at + m])
            at, m = at + m, m // 2
        threads = resolve_threads(threads)
        # Each task hashes a slice of a level; the levels run in order (a level needs the one below).
        for lo, hi in zip(levels, levels[1:]):
            ranges = _split(hi.shape[0], threads)
            _run([(hash_pairs, (lo[2 * s:2 * e], hi[s:e])) for s, e in ranges], threads)
        if out_dir is not None:
            store.flush()
        return cls(levels=tuple(levels))

    @property
    def leaves(self) -> int:
        return int(self.levels[0].shape[0])

    @property
    def root(self) -> bytes:
        """comm_d: the root's 32 bytes."""
        return self.levels[-1][0].tobytes()

    def leaf(self, node) -> bytes:
        return self.levels[0][check_challenge(node, self.leaves)].tobytes()

    def path(self, node) -> list[bytes]:
        """The sibling of ``node``'s path at each level, leaf level first (32 bytes each)."""
        idx = check_challenge(node, self.leaves)
        out = []
        for level in self.levels[:-1]:
            out.append(level[idx ^ 1].tobytes())
            idx >>= 1
        return out


def _hash_level(layer: np.ndarray, arity: int, threads: int) -> np.ndarray:
    rows = layer.shape[0] // arity
    ranges = _split(rows, threads, minimum=max(1, _ROWS_PER_TASK // arity))
    parts = _run([(hash_nodes, (np.ascontiguousarray(layer[s * arity:e * arity].reshape(-1, arity, 4)),))
                  for s, e in ranges], threads)
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def poseidon_tree(leaves: np.ndarray, shape: TreeShape, *, threads=None) -> FilecoinTree:
    """Every layer of the ``shape`` Poseidon tree over ``leaves`` ((n, 4) Montgomery, canonical).

    Equals :func:`~cuzk.circuits.filecoin.tree.build_tree` of the same leaves, without its
    per-leaf range check (the sealer's leaves are field outputs).

    Raises:
        InputError: leaves that do not fill ``shape``.
    """
    if leaves.shape[0] != shape.leaves:
        raise InputError(f"the tree shape has {shape.leaves} leaves, got {leaves.shape[0]}")
    threads = resolve_threads(threads)
    layers = [leaves]
    for a in shape.levels:
        layers.append(_hash_level(layers[-1], a, threads))
    return FilecoinTree(shape=shape, layers=tuple(layers))


def column_hashes(layers, *, threads=None) -> np.ndarray:
    """Tree C's leaves: for each node, the Poseidon hash (arity ``len(layers)``, neptune's
    MerkleTree constants) of its labels in layers 1..L, as (n, 4) Montgomery.

    Raises:
        InputError: a layer count neptune has no arity for (Filecoin uses 2 and 11).
    """
    arity = len(layers)
    n = int(layers[0].shape[0])
    threads = resolve_threads(threads)

    def chunk(s, e):
        cols = np.stack([Fr.from_bytes(layer[s:e].tobytes(), byteorder="little") for layer in layers], axis=1)
        return hash_nodes(np.ascontiguousarray(cols))

    try:
        neptune_spec(arity)
    except InputError:
        raise InputError(f"no column hash for {arity} layers (neptune has no arity {arity})") from None
    parts = _run([(chunk, r) for r in _split(n, threads)], threads)
    return np.concatenate(parts) if len(parts) > 1 else parts[0]
