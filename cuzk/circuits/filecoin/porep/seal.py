"""cuzk's native SDR sealer: sector data -> replica, trees and commitments (PreCommit 1 and 2).

:func:`seal` follows rust-fil-proofs' ``seal_pre_commit_phase1`` and ``phase2``:

1. tree D over the (Fr32-padded) data, root comm_d (:class:`~.sector_trees.TreeD`);
2. ``replica_id = trim(SHA-256(prover_id || sector_id BE || ticket || comm_d || porep_id))``;
3. the sector's parents (:func:`~.graph.parents`) and the label layers (:mod:`~.labels`);
4. tree C: each node's column (its label in every layer) hashed with Poseidon of arity =
   layers, then a Poseidon tree of the sector's shape over those hashes; root comm_c;
5. the replica, ``replica[v] = label_L[v] + data[v]`` in Fr (the last layer is the key), and
   tree R_last, the same-shaped Poseidon tree over it; root comm_r_last;
6. ``comm_r = Poseidon2(comm_c, comm_r_last)`` (neptune's arity-2 MerkleTree hash).

Commitments are 32 little-endian bytes (the Fr representation rust-fil-proofs stores), and
:func:`seal` is a pure function of (data, registered_proof, prover_id, sector_id, ticket).

    >>> s = seal(bytes(2048), registered_proof=0, prover_id=bytes(32), sector_id=1, ticket=bytes(32))
    >>> s.comm_d.hex()[:16], s.layers_count, s.nodes
    ('fc7e928296e516fa', 2, 64)
    >>> s.comm_r == int_bytes(poseidon_hash([s.comm_c_int, s.comm_r_last_int]))
    True
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import attrs
import numpy as np

from cuzk.circuits.filecoin.porep.fr32 import NODE_BYTES, node_int, node_rows
from cuzk.circuits.filecoin.porep.graph import parents as graph_parents
from cuzk.circuits.filecoin.porep.labels import label_layers
from cuzk.circuits.filecoin.porep.registered import SealProof, registered_seal_proof, replica_id as make_replica_id
from cuzk.circuits.filecoin.porep.sector_trees import TreeD, column_hashes, poseidon_tree, resolve_threads
from cuzk.circuits.filecoin.poseidon import poseidon_hash
from cuzk.circuits.filecoin.tree import FilecoinTree, check_challenge
from cuzk.errors import InputError
from cuzk.field import Fr

__all__ = ["seal", "SealedSector", "int_bytes", "replica_file", "STAGES"]

#: the stage names :func:`seal` reports to its ``on_stage`` hook, in order (labels per layer)
STAGES = ("tree_d", "parents", "labels", "tree_c", "tree_r", "comm_r")


def int_bytes(x: int) -> bytes:
    """An Fr element as 32 little-endian bytes (rust-fil-proofs' commitment layout)."""
    return int(x).to_bytes(32, "little")


def replica_file(out_dir) -> Path:
    """The replica's file in ``cache_dir`` (raw 32-byte nodes)."""
    return Path(out_dir) / "sealed.dat"


def _bytes32(x, what: str) -> bytes:
    if not isinstance(x, (bytes, bytearray, memoryview)) or len(x) != 32:
        raise InputError(f"{what} must be 32 bytes, got {type(x).__name__} of length {len(x) if hasattr(x, '__len__') else '?'}")
    return bytes(x)


@attrs.frozen(eq=False)
class SealedSector:
    """What sealing a sector leaves behind: everything commit phase 1 (C1) reads.

    Node arrays are ``(nodes, 32)`` uint8 (32-byte little-endian Fr elements), memory-mapped
    files when :func:`seal` had a ``cache_dir``. Trees C and R_last are
    :class:`~cuzk.circuits.filecoin.tree.FilecoinTree` (Montgomery layers, leaves first);
    tree D is a :class:`~.sector_trees.TreeD` (byte levels, leaves first).
    """

    proof: SealProof  #: the registered seal proof (sector size, layers, API version, porep id)
    prover_id: bytes  #: 32 bytes
    sector_id: int  #: u64
    ticket: bytes  #: 32 bytes
    replica_id: bytes  #: 32 bytes, a canonical Fr element (little-endian)
    parents: np.ndarray  #: (nodes, 14) uint32: 6 DRG then 8 expander parents of each node
    layers: tuple  #: labels of layers 1..L, each (nodes, 32) uint8
    replica: np.ndarray  #: (nodes, 32) uint8: label_L + data in Fr
    tree_d: TreeD  #: binary SHA-256 tree over the data; ``tree_d.levels[0]`` is the data
    tree_c: FilecoinTree  #: Poseidon tree (the sector's shape) over the column hashes
    tree_r: FilecoinTree  #: tree R_last: Poseidon tree (the sector's shape) over the replica
    comm_d: bytes  #: tree D's root
    comm_c: bytes  #: tree C's root
    comm_r_last: bytes  #: tree R_last's root
    comm_r: bytes  #: Poseidon2(comm_c, comm_r_last)
    cache_dir: Path | None = None  #: where the layer, tree-D and replica files are, if anywhere

    @property
    def nodes(self) -> int:
        return int(self.replica.shape[0])

    @property
    def layers_count(self) -> int:
        return len(self.layers)

    @property
    def data(self) -> np.ndarray:
        """The sealed (Fr32-padded) data, (nodes, 32) uint8."""
        return self.tree_d.levels[0]

    comm_c_int = node_int("comm_c")
    comm_r_last_int = node_int("comm_r_last")
    comm_r_int = node_int("comm_r")
    comm_d_int = node_int("comm_d")
    replica_id_int = node_int("replica_id")

    def _node(self, node) -> int:
        return check_challenge(node, self.nodes)

    def data_node(self, node) -> bytes:
        """The data's 32 bytes at ``node`` (tree D's leaf)."""
        return self.data[self._node(node)].tobytes()

    def data_path(self, node) -> list[bytes]:
        """Tree D's path of ``node``: its sibling at each level, leaf level first (32 bytes each)."""
        return self.tree_d.path(node)

    def label(self, layer: int, node) -> int:
        """The label of ``node`` in ``layer`` (1-based) as an Fr int."""
        if not 1 <= layer <= len(self.layers):
            raise InputError(f"layer must be in 1..{len(self.layers)}, got {layer!r}")
        return int.from_bytes(self.layers[layer - 1][self._node(node)].tobytes(), "little")

    def column(self, node) -> list[int]:
        """``node``'s labels in layers 1..L (Fr ints): the preimage of its tree C leaf."""
        v = self._node(node)
        return [int.from_bytes(layer[v].tobytes(), "little") for layer in self.layers]

    def column_path(self, node) -> list[list[int]]:
        """Tree C's path of ``node``: per level (leaf first) the ``arity - 1`` sibling ints."""
        return self.tree_c.path(node)

    def replica_node(self, node) -> int:
        """The replica's element at ``node`` (tree R_last's leaf) as an Fr int."""
        return int.from_bytes(self.replica[self._node(node)].tobytes(), "little")

    def replica_path(self, node) -> list[list[int]]:
        """Tree R_last's path of ``node``: per level (leaf first) the ``arity - 1`` sibling ints."""
        return self.tree_r.path(node)

    def node_parents(self, node) -> list[int]:
        """``node``'s 14 parents: 6 DRG (same layer), then 8 expander (previous layer)."""
        return [int(p) for p in self.parents[self._node(node)]]


def seal(data, *, registered_proof, prover_id, sector_id, ticket, cache_dir=None, threads=None,
         parents=None, on_stage=None) -> SealedSector:
    """Seal a sector: its replica, trees and commitments, as rust-fil-proofs computes them.

    Args:
        data: the sector's Fr32-padded bytes (exactly the sector size; every node < r), bytes
            or a uint8 array (a memmap is read, not copied, when there is no ``cache_dir``).
        registered_proof: a RegisteredSealProof id (0..19) or a :class:`SealProof`.
        prover_id, ticket: 32 bytes each.
        sector_id: the sector number (u64).
        cache_dir: a directory for the files rust-fil-proofs writes to its cache
            (``sc-02-data-layer-<l>.dat``, ``sc-02-data-tree-d.dat``, ``sealed.dat``); None
            keeps every array in memory.
        threads: threads for the trees (labels run on one: each node needs the previous ones).
        parents: the (nodes, 14) parents array, if already computed (graph.parents otherwise).
        on_stage: called as ``on_stage(name, seconds)`` after each stage (``STAGES``; labels
            per layer as ``"labels_<l>"``).

    Raises:
        InputError: a wrong data length, a node >= r, malformed ids or ticket.
    """
    proof = registered_proof if isinstance(registered_proof, SealProof) else registered_seal_proof(registered_proof)
    prover_id = _bytes32(prover_id, "prover_id")
    ticket = _bytes32(ticket, "ticket")
    if isinstance(sector_id, bool) or not isinstance(sector_id, int) or not 0 <= sector_id < 1 << 64:
        raise InputError(f"sector_id must be an int in [0, 2^64), got {sector_id!r}")
    arr = node_rows(data, proof.sector_size // NODE_BYTES, "sector data")
    threads = resolve_threads(threads)
    if cache_dir is not None:
        cache_dir = Path(cache_dir)
        os.makedirs(cache_dir, exist_ok=True)
    clock = [time.perf_counter()]

    def done(name):
        now = time.perf_counter()
        if on_stage is not None:
            on_stage(name, now - clock[0])
        clock[0] = now

    tree_d = TreeD.build(arr, out_dir=cache_dir, threads=threads)
    comm_d = tree_d.root
    done("tree_d")
    rid = make_replica_id(prover_id, sector_id, ticket, comm_d, proof.porep_id)
    n = proof.nodes
    if parents is None:
        parents = graph_parents(n, proof.porep_id, proof.api_version, threads=threads)
    elif parents.shape != (n, 14):
        raise InputError(f"parents must be ({n}, 14) for this sector, got {parents.shape}")
    done("parents")
    layers = label_layers(rid, parents, proof.layers, out_dir=cache_dir,
                          on_layer=lambda layer: done(f"labels_{layer}"))
    shape = proof.shape
    tree_c = poseidon_tree(column_hashes(layers, threads=threads), shape, threads=threads)
    done("tree_c")
    # The last layer is the encoding key: replica = key + data in Fr (Montgomery sums are sums).
    encoded = Fr.add(Fr.from_bytes(layers[-1].tobytes(), byteorder="little"),
                     Fr.from_bytes(tree_d.levels[0].tobytes(), byteorder="little"))
    replica_bytes = Fr.to_bytes(encoded, byteorder="little")
    if cache_dir is not None:
        replica = np.memmap(replica_file(cache_dir), dtype=np.uint8, mode="w+", shape=(n, 32))
        replica[:] = replica_bytes
        replica.flush()
    else:
        replica = np.ascontiguousarray(replica_bytes, dtype=np.uint8).reshape(n, 32)
    tree_r = poseidon_tree(encoded, shape, threads=threads)
    done("tree_r")
    comm_c, comm_r_last = tree_c.root, tree_r.root
    comm_r = poseidon_hash([comm_c, comm_r_last])
    done("comm_r")
    return SealedSector(
        proof=proof, prover_id=prover_id, sector_id=sector_id, ticket=ticket, replica_id=rid,
        parents=parents, layers=tuple(layers), replica=replica, tree_d=tree_d, tree_c=tree_c,
        tree_r=tree_r, comm_d=comm_d, comm_c=int_bytes(comm_c), comm_r_last=int_bytes(comm_r_last),
        comm_r=int_bytes(comm_r), cache_dir=cache_dir,
    )
