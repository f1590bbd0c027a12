"""SDR labels: every layer of a sector's stacked-DRG labelling, as rust-fil-proofs computes them.

The label of node ``v`` in layer ``l`` (1-based) is ``trim(SHA-256(preimage))``, ``trim``
clearing the two top bits of the digest's last byte so that the 32 little-endian bytes are an
Fr element. The preimage (:func:`label_preimage`) is

- 64 header bytes: ``replica_id`` (32) || ``l`` as u32 big-endian || ``v`` as u64 big-endian ||
  20 zero bytes; node 0 hashes the header alone;
- then, for ``v > 0``, 37 parent labels of 32 bytes: parent ``j`` (0 <= j < 37) is column
  ``j % 6`` of ``v``'s parents in layer 1 (the 6 DRG parents six times over, then the first
  again), and column ``j % 14`` in later layers (the 14 parents twice, then the first 9), where
  the DRG columns 0..5 name nodes of the same layer and the expander columns 6..13 nodes of the
  previous layer.

Layers are ``(nodes, 32)`` uint8 arrays; with ``out_dir`` each one is a memory-mapped file
named as rust-fil-proofs names it (``sc-02-data-layer-<l>.dat``, the raw labels), so a large
sector's layers live on disk and only the pages in use stay in memory.

    >>> import hashlib
    >>> parents = np.zeros((4, 14), dtype=np.uint32); parents[1:, :6] = [0, 0, 0, 0, 0, 0]
    >>> rid = bytes(32)
    >>> layers = label_layers(rid, parents, 2)
    >>> [a.shape for a in layers]
    [(4, 32), (4, 32)]
    >>> want = bytearray(hashlib.sha256(label_preimage(rid, 2, 3, parents[3], layers[1], layers[0])).digest())
    >>> want[31] &= 0x3F
    >>> layers[1][3].tobytes() == bytes(want)
    True
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from cuzk.circuits.filecoin.porep.sha_kernels import LABEL_PARENTS, label_nodes
from cuzk.errors import InputError

__all__ = ["label_layers", "label_preimage", "layer_file", "DRG_PARENTS", "EXP_PARENTS"]

DRG_PARENTS, EXP_PARENTS = 6, 8  # columns of the parents array: DRG (same layer), then expander
_CHUNK = 1 << 20  # nodes of the parents array handed to the kernel at a time (memmap-friendly)


def layer_file(out_dir, layer: int) -> Path:
    """The file holding layer ``layer``'s labels (rust-fil-proofs' store name for it)."""
    return Path(out_dir) / f"sc-02-data-layer-{layer}.dat"


def label_preimage(replica_id: bytes, layer: int, node: int, parents_row, cur, prev) -> bytes:
    """The bytes hashed into node ``node``'s label in layer ``layer`` (see the module docstring).

    ``cur`` holds this layer's labels of the earlier nodes, ``prev`` the previous layer's (unused
    in layer 1); both are (nodes, 32) uint8. A plain reference for tests and for the circuit.
    """
    head = bytes(replica_id) + int(layer).to_bytes(4, "big") + int(node).to_bytes(8, "big") + bytes(20)
    if node == 0:
        return head
    cycle = DRG_PARENTS if layer == 1 else DRG_PARENTS + EXP_PARENTS
    parts = []
    for j in range(LABEL_PARENTS):
        col = j % cycle
        src = cur if col < DRG_PARENTS else prev
        parts.append(bytes(src[int(parents_row[col])]))
    return head + b"".join(parts)


def _check(replica_id, parents, layers) -> tuple[np.ndarray, int]:
    rid = np.frombuffer(bytes(replica_id), dtype=np.uint8)
    if rid.size != 32:
        raise InputError(f"replica_id must be 32 bytes, got {rid.size}")
    if not (isinstance(parents, np.ndarray) and parents.ndim == 2 and parents.shape[1] == DRG_PARENTS + EXP_PARENTS):
        raise InputError(f"parents must be a (nodes, 14) array, got {getattr(parents, 'shape', type(parents).__name__)}")
    if not isinstance(layers, int) or isinstance(layers, bool) or layers < 1:
        raise InputError(f"layers must be a positive int, got {layers!r}")
    return rid, int(parents.shape[0])


def _new_layer(out_dir, layer: int, nodes: int) -> np.ndarray:
    if out_dir is None:
        return np.zeros((nodes, 32), dtype=np.uint8)
    return np.memmap(layer_file(out_dir, layer), dtype=np.uint8, mode="w+", shape=(nodes, 32))


def label_layers(replica_id: bytes, parents: np.ndarray, layers: int, *, out_dir=None, on_layer=None) -> list:
    """Label ``layers`` layers of a sector with these ``parents`` ((nodes, 14) uint32).

    Args:
        replica_id: 32 bytes (:func:`~cuzk.circuits.filecoin.porep.registered.replica_id`).
        parents: every node's 6 DRG then 8 expander parents (DRG parents precede their node).
        layers: the number of layers (2 for test sizes, 11 for 32/64 GiB).
        out_dir: a directory for the layer files (memory-mapped); None keeps them in memory.
        on_layer: called as ``on_layer(layer)`` after each layer (timing hooks).

    Returns:
        The layers in order, each (nodes, 32) uint8 (``np.memmap`` with ``out_dir``).

    Raises:
        InputError: a replica id that is not 32 bytes, a parents array of another shape, a
            parent index beyond the sector.
    """
    rid, nodes = _check(replica_id, parents, layers)
    if nodes and int(parents.max(initial=0)) >= nodes:
        raise InputError(f"a parent index reaches {int(parents.max())}, beyond the sector's {nodes} nodes")
    if out_dir is not None:
        os.makedirs(out_dir, exist_ok=True)
    out, prev = [], None
    for layer in range(1, layers + 1):
        cur = _new_layer(out_dir, layer, nodes)
        for start in range(0, nodes, _CHUNK):
            stop = min(nodes, start + _CHUNK)
            chunk = np.ascontiguousarray(parents[start:stop], dtype=np.uint32)
            label_nodes(rid, layer, chunk, cur, cur if prev is None else prev, start, stop)
        if out_dir is not None:
            cur.flush()
        out.append(cur)
        prev = cur
        if on_layer is not None:
            on_layer(layer)
    return out
