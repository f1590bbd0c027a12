"""The native sector update: new deal data encoded into a sealed sector's replica, and back.

:func:`update` follows storage-proofs-update's ``encode_into``:

1. tree D over the new (Fr32-padded) data, root ``comm_d_new`` (binary SHA-256, as the sealer's;
   the Poseidon variant builds a Poseidon tree of tree R's shape instead);
2. ``comm_r_old = Poseidon2(comm_c, comm_r_last_old)`` and ``phi = H_custom(comm_d_new, comm_r_old)``;
3. for every node ``v``: ``replica_new[v] = sector_key[v] + data[v] · rho(v >> (log2(nodes) - h))``
   in Fr, the *sector key* being the sealed replica;
4. tree R_new (Poseidon, the sector's shape) over the new replica, ``comm_r_new =
   Poseidon2(comm_c, comm_r_last_new)``; ``comm_c`` is the sealed sector's, unchanged.

:func:`decode` recovers the data, ``(replica_new - sector_key) · rho⁻¹`` (``decode_from``), and
:func:`sector_key` the sealed replica from the new replica and the data (``remove_encoded_data``).
Only the ``2^h`` rhos are hashed; every node costs one Fr multiply and add.

    >>> import numpy as np
    >>> from cuzk.circuits.filecoin.porep import seal
    >>> s = seal(bytes(2048), registered_proof=5, prover_id=bytes(32), sector_id=1, ticket=bytes(32))
    >>> data = np.zeros((64, 32), np.uint8); data[:, 0] = np.arange(64)
    >>> u = update(s, data)
    >>> u.h, u.comm_r_new != s.comm_r, bytes(decode(u.replica, s.replica, comm_d_new=u.comm_d_new,
    ...     comm_r_old=s.comm_r, h=u.h)) == data.tobytes()
    (1, True, True)
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs
import numpy as np

from cuzk.circuits.filecoin.porep.fr32 import node_int, node_rows
from cuzk.circuits.filecoin.porep.sector_trees import TreeD, poseidon_tree, resolve_threads
from cuzk.circuits.filecoin.poseidon import poseidon_hash
from cuzk.circuits.filecoin.tree import FilecoinTree
from cuzk.circuits.filecoin.update.params import UpdateParams, update_params
from cuzk.circuits.filecoin.update.randomness import phi as make_phi, rhos as make_rhos
from cuzk.errors import InputError
from cuzk.field import Fr

__all__ = ["UpdatedSector", "update", "decode", "sector_key", "map_nodes", "REPLICA_FILE"]

#: the new replica's file in ``cache_dir`` (raw 32-byte nodes)
REPLICA_FILE = "update.dat"
_CHUNK = 1 << 16  # nodes per encoding step: bounds the temporaries (a few MiB) for any sector size


def _int_bytes(x: int) -> bytes:
    return int(x).to_bytes(32, "little")


def _domain(x, what: str) -> int:
    """A commitment given as 32 little-endian bytes or an int, as a canonical Fr int."""
    if isinstance(x, (bytes, bytearray)):
        if len(x) != 32:
            raise InputError(f"{what} must be 32 bytes, got {len(x)}")
        x = int.from_bytes(x, "little")
    if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < Fr.modulus:
        raise InputError(f"{what} must be a canonical Fr element (32 bytes or an int < r), got {x!r:.60}")
    return x


def map_nodes(fn, arrays, rho_table: np.ndarray, shift: int, out: np.ndarray) -> None:
    """``out[v] = fn(a[v] for a in arrays, rho_table[v >> shift])`` in Fr over (n, 32) uint8 node
    arrays (``out`` may be a memmap), :data:`_CHUNK` nodes at a time; ``fn`` takes and returns
    Montgomery arrays."""
    n = out.shape[0]
    for lo in range(0, n, _CHUNK):
        hi = min(n, lo + _CHUNK)
        vals = [Fr.from_bytes(np.ascontiguousarray(a[lo:hi]).tobytes(), byteorder="little") for a in arrays]
        r = np.ascontiguousarray(rho_table[np.arange(lo, hi, dtype=np.int64) >> shift])
        out[lo:hi] = np.frombuffer(Fr.to_bytes(fn(*vals, r), byteorder="little"), dtype=np.uint8).reshape(-1, 32)


def _encode(key, data, rho):
    return Fr.add(key, Fr.mul(data, rho))


def _decode(new, key, rho_inv):
    return Fr.mul(Fr.sub(new, key), rho_inv)


def _remove(new, data, rho):
    return Fr.sub(new, Fr.mul(data, rho))


@attrs.frozen(eq=False)
class UpdatedSector:
    """A sector after an update: the new replica and trees, the old ones the proofs also open.

    Node arrays are (nodes, 32) uint8 (32-byte little-endian Fr elements); commitments 32 bytes.
    """

    params: UpdateParams  #: the sector size's update parameters
    h: int  #: high bits of a node index that pick its rho
    comm_c: bytes  #: the sealed sector's comm_c (unchanged by the update)
    comm_r_old: bytes  #: the sealed sector's comm_r
    sector_key: np.ndarray  #: the sealed replica (the encoding key of the update)
    tree_r_old: FilecoinTree  #: tree R_last of the sealed replica
    tree_d: object  #: tree D over the new data (:class:`~..porep.sector_trees.TreeD`; Poseidon variant: a FilecoinTree)
    data: np.ndarray  #: the new (Fr32-padded) data
    replica: np.ndarray  #: the new replica
    tree_r: FilecoinTree  #: tree R_last of the new replica
    comm_d_new: bytes
    comm_r_last_new: bytes
    comm_r_new: bytes
    phi: int  #: H_custom(comm_d_new, comm_r_old)
    cache_dir: Path | None = None

    @property
    def nodes(self) -> int:
        return self.params.nodes

    comm_r_old_int = node_int("comm_r_old")
    comm_d_new_int = node_int("comm_d_new")
    comm_r_new_int = node_int("comm_r_new")
    comm_c_int = node_int("comm_c")

    @property
    def comm_r_last_old(self) -> bytes:
        return _int_bytes(self.tree_r_old.root)


def _old_tree(sealed, params: UpdateParams, key: np.ndarray, threads: int) -> FilecoinTree:
    tree = getattr(sealed, "tree_r", None)
    if isinstance(tree, FilecoinTree) and tree.shape == params.shape:
        return tree
    return poseidon_tree(Fr.from_bytes(key.tobytes(), byteorder="little"), params.shape, threads=threads)


def update(sealed, data, *, h=None, cache_dir=None, threads=None, poseidon: bool = False,
           params: UpdateParams | None = None) -> UpdatedSector:
    """Encode ``data`` into the sealed sector ``sealed`` (see the module docstring).

    Args:
        sealed: a :class:`~cuzk.circuits.filecoin.porep.SealedSector`, or any object with its
            ``replica`` ((nodes, 32) uint8), ``comm_c`` (32 bytes) and optionally ``tree_r``.
        data: the new data, Fr32-padded, exactly the sector's bytes (bytes or a uint8 array).
        h: the rho granularity, one of the size's ``hs`` (default ``hs[3]``, as Filecoin).
        cache_dir: where to write the new replica (:data:`REPLICA_FILE`) and tree D; None keeps
            them in memory.
        threads: threads for the trees (default: every core this process may use).
        poseidon: the Poseidon variant (tree D a Poseidon tree of tree R's shape).
        params: the update parameters (default: from the replica's node count).

    Raises:
        InputError: a replica or data of the wrong size or with a node >= r, an ``h`` the sector
            size does not allow, a ``comm_c`` that is not 32 bytes.
    """
    replica = getattr(sealed, "replica", None)
    if replica is None:
        raise InputError(f"sealed must be a sealed sector (with a replica), got {type(sealed).__name__}")
    n = int(np.asarray(replica).size // 32)
    if params is None:
        params = update_params(nodes=n, poseidon=poseidon)
    key = node_rows(replica, params.nodes, "the sealed replica")
    comm_c = _domain(getattr(sealed, "comm_c", None), "comm_c")
    h = params.h_default if h is None else h
    params.h_select(h)  # InputError naming h when the size does not allow it
    threads = resolve_threads(threads)
    new_data = node_rows(data, params.nodes, "data")
    if cache_dir is not None:
        cache_dir = Path(cache_dir)
        os.makedirs(cache_dir, exist_ok=True)
    tree_r_old = _old_tree(sealed, params, key, threads)
    comm_r_old = poseidon_hash([comm_c, tree_r_old.root])
    if poseidon:
        tree_d = poseidon_tree(Fr.from_bytes(new_data.tobytes(), byteorder="little"), params.shape, threads=threads)
        comm_d_new = tree_d.root
    else:
        tree_d = TreeD.build(new_data, out_dir=cache_dir, threads=threads)
        comm_d_new = int.from_bytes(tree_d.root, "little")
    p = make_phi(comm_d_new, comm_r_old)
    table = make_rhos(p, h=h, nodes=params.nodes)
    if cache_dir is not None:
        out = np.memmap(cache_dir / REPLICA_FILE, dtype=np.uint8, mode="w+", shape=(params.nodes, 32))
    else:
        out = np.empty((params.nodes, 32), dtype=np.uint8)
    map_nodes(_encode, (key, new_data), table, params.challenge_bit_len - h, out)
    if cache_dir is not None:
        out.flush()
    tree_r = poseidon_tree(Fr.from_bytes(np.ascontiguousarray(out).tobytes(), byteorder="little"), params.shape,
                           threads=threads)
    comm_r_new = poseidon_hash([comm_c, tree_r.root])
    return UpdatedSector(
        params=params, h=h, comm_c=_int_bytes(comm_c), comm_r_old=_int_bytes(comm_r_old), sector_key=key,
        tree_r_old=tree_r_old, tree_d=tree_d, data=tree_d.levels[0] if not poseidon else new_data, replica=out,
        tree_r=tree_r, comm_d_new=_int_bytes(comm_d_new), comm_r_last_new=_int_bytes(tree_r.root),
        comm_r_new=_int_bytes(comm_r_new), phi=p, cache_dir=cache_dir,
    )


def _size(x) -> int:
    return int(x.size if isinstance(x, np.ndarray) else memoryview(x).nbytes) // 32


def _rho_table(comm_d_new, comm_r_old, h, nodes) -> np.ndarray:
    p = make_phi(_domain(comm_d_new, "comm_d_new"), _domain(comm_r_old, "comm_r_old"))
    return make_rhos(p, h=h, nodes=nodes)


def _check_h(nodes: int, h) -> int:
    params = update_params(nodes=nodes)
    h = params.h_default if h is None else h
    params.h_select(h)
    return h


def decode(replica, sector_key_replica, *, comm_d_new, comm_r_old, h=None) -> np.ndarray:
    """The data an update encoded: ``(replica - sector_key) · rho⁻¹`` per node ((nodes, 32) uint8;
    rust-fil-proofs' ``decode_from``).

    Args:
        replica: the updated replica; sector_key_replica: the sealed replica it was encoded into
            (both bytes or uint8 arrays of the sector's size).
        comm_d_new, comm_r_old: the update's data commitment and the sealed sector's comm_r
            (32 bytes or ints): they fix phi and so every rho.
        h: the update's h (default: the size's).

    Raises:
        InputError: arrays of different or unsupported sizes, a node >= r, a bad commitment or h.
    """
    n = _size(replica)
    h = _check_h(n, h)
    new = node_rows(replica, n, "replica")
    key = node_rows(sector_key_replica, n, "sector key")
    out = np.empty((n, 32), dtype=np.uint8)
    map_nodes(_decode, (new, key), Fr.inv(_rho_table(comm_d_new, comm_r_old, h, n)), n.bit_length() - 1 - h, out)
    return out


def sector_key(replica, data, *, comm_d_new, comm_r_old, h=None) -> np.ndarray:
    """The sealed replica an update started from: ``replica - data · rho`` per node ((nodes, 32)
    uint8; rust-fil-proofs' ``remove_encoded_data``).

    Raises:
        InputError: as :func:`decode`.
    """
    n = _size(replica)
    h = _check_h(n, h)
    new = node_rows(replica, n, "replica")
    d = node_rows(data, n, "data")
    out = np.empty((n, 32), dtype=np.uint8)
    map_nodes(_remove, (new, d), _rho_table(comm_d_new, comm_r_old, h, n), n.bit_length() - 1 - h, out)
    return out
