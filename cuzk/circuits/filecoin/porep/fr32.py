"""Filecoin's Fr32 padding: 254 payload bits in every 32-byte node, so each node is below r.

The raw bytes are read as one little-endian bit stream (bit ``i`` is bit ``i % 8`` of byte
``i // 8``); every 254 bits of it fill the low 254 bits of a 32-byte little-endian node and
the node's two top bits stay zero. 127 raw bytes (1016 bits) fill exactly 4 nodes (128 bytes),
which is why Filecoin piece sizes are 127 * 2^k bytes unpadded and 128 * 2^k padded. A raw
length that does not fill its last node is zero-extended to a whole node, as rust-fil-proofs'
``Fr32Reader`` does.

    >>> padded = fr32_pad(b"\\xff" * 127)
    >>> len(padded), padded[31], padded[32], padded[127]
    (128, 63, 255, 63)
    >>> fr32_unpad(padded) == b"\\xff" * 127
    True
    >>> check_nodes(padded)
"""

from __future__ import annotations

import numpy as np

from cuzk.errors import InputError
from cuzk.field import FR

__all__ = ["fr32_pad", "fr32_unpad", "check_nodes", "padded_size", "unpadded_size", "NODE_BYTES", "NODE_BITS", "node_int", "node_rows"]

NODE_BYTES = 32  # one Fr element, little-endian
NODE_BITS = 254  # payload bits per node: the two top bits of byte 31 are always zero
_BLOCK_RAW, _BLOCK_PADDED = 127, 128  # 4 nodes: 4 * 254 bits = 127 bytes exactly
_CHUNK_BLOCKS = 1 << 13  # blocks converted per numpy pass (~1 MiB): bounds the bit arrays' memory


def node_int(field: str) -> property:
    """A read-only property giving the 32-byte little-endian node in attribute ``field`` as an int.

    Sealed and updated sectors keep their commitments as bytes (what files and the wire carry)
    while the circuits' public inputs want ints; one factory keeps the byte order in one place.

    >>> class Sector:
    ...     comm = (5).to_bytes(32, "little")
    ...     comm_int = node_int("comm")
    >>> Sector().comm_int
    5
    """
    return property(lambda self: int.from_bytes(getattr(self, field), "little"), doc=f"``{field}`` as an int.")


def padded_size(raw_len: int) -> int:
    """Bytes ``fr32_pad`` makes of ``raw_len`` raw bytes (whole nodes)."""
    return -(-raw_len * 8 // NODE_BITS) * NODE_BYTES


def unpadded_size(padded_len: int) -> int:
    """Raw bytes that ``padded_len`` padded bytes (whole nodes) hold: ``floor(nodes * 254 / 8)``."""
    return padded_len // NODE_BYTES * NODE_BITS // 8


def _bits_to_nodes(bits: np.ndarray) -> np.ndarray:
    """(k * 254,) bits -> (k, 32) node bytes."""
    nodes = bits.reshape(-1, NODE_BITS)
    full = np.zeros((nodes.shape[0], 8 * NODE_BYTES), dtype=np.uint8)
    full[:, :NODE_BITS] = nodes
    return np.packbits(full, axis=1, bitorder="little")


def fr32_pad(raw) -> bytes:
    """Pad raw bytes into Fr32 nodes (254 payload bits per 32-byte node, top two bits zero).

    ``len(raw)`` need not be a multiple of 127: the last node is filled with zero bits, so the
    output is ``padded_size(len(raw))`` bytes.
    """
    raw = np.frombuffer(bytes(raw), dtype=np.uint8)
    out = bytearray()
    step = _CHUNK_BLOCKS * _BLOCK_RAW  # whole blocks keep every chunk node-aligned
    for start in range(0, len(raw), step):
        chunk = raw[start:start + step]
        bits = np.unpackbits(chunk, bitorder="little")
        bits = np.concatenate([bits, np.zeros(-len(bits) % NODE_BITS, dtype=np.uint8)])
        out += _bits_to_nodes(bits).tobytes()
    return bytes(out)


def fr32_unpad(padded, size: int | None = None) -> bytes:
    """The raw bytes of Fr32-padded nodes: the first ``size`` bytes of their payload bit stream.

    ``size`` defaults to every whole byte the nodes hold (``unpadded_size``), which is the raw
    length itself for multiples of 127 bytes; pass the raw length otherwise.

    Raises:
        InputError: a length that is not whole nodes, a node whose two top bits are set (not
            Fr32 data), or a ``size`` beyond the payload.
    """
    padded = bytes(padded)
    if len(padded) % NODE_BYTES:
        raise InputError(f"Fr32 data is whole {NODE_BYTES}-byte nodes, got {len(padded)} bytes")
    nodes = np.frombuffer(padded, dtype=np.uint8).reshape(-1, NODE_BYTES)
    bad = np.flatnonzero(nodes[:, 31] & 0xC0)
    if bad.size:
        raise InputError(f"node {int(bad[0])} has its top two bits set: not Fr32-padded data")
    limit = unpadded_size(len(padded))
    size = limit if size is None else size
    if not 0 <= size <= limit:
        raise InputError(f"{len(padded)} padded bytes hold at most {limit} raw bytes, asked for {size}")
    out = bytearray()
    step = _CHUNK_BLOCKS * 4  # nodes per pass: whole blocks, so every chunk is byte-aligned
    for start in range(0, nodes.shape[0], step):
        bits = np.unpackbits(nodes[start:start + step], axis=1, bitorder="little")[:, :NODE_BITS].ravel()
        out += np.packbits(bits[:len(bits) - len(bits) % 8], bitorder="little").tobytes()
    return bytes(out[:size])


_R_TOP = FR.modulus >> 248  # r's top byte (0x73): a node with a smaller top byte is below r


def check_nodes(data) -> None:
    """Check that every 32-byte little-endian node of ``data`` is a canonical Fr element (< r).

    Raises:
        InputError: a length that is not whole nodes, or the index of the first node >= r.
    """
    data = data.reshape(-1) if isinstance(data, np.ndarray) else np.frombuffer(data, dtype=np.uint8)
    if data.size == 0 or data.size % NODE_BYTES:
        raise InputError(f"sector data must be a non-empty whole number of {NODE_BYTES}-byte nodes, got {data.size} bytes")
    nodes = data.reshape(-1, NODE_BYTES)
    # Only nodes whose top byte reaches r's can be >= r; those few are compared as integers.
    for i in np.flatnonzero(nodes[:, 31] >= _R_TOP):
        if int.from_bytes(nodes[i].tobytes(), "little") >= FR.modulus:
            raise InputError(
                f"sector node {int(i)} is not a canonical Fr element (>= r): "
                f"{nodes[i].tobytes()[::-1].hex()} (big-endian)"
            )


def node_rows(data, nodes: int, what: str) -> np.ndarray:
    """``data`` (bytes-like or a uint8 array of ``nodes`` · 32 bytes, every node < r) as a
    (nodes, 32) uint8 array: how the sealer and the update take a sector's bytes.

    >>> node_rows(bytes(64), 2, "data").shape
    (2, 32)

    Raises:
        InputError: not bytes or uint8, the wrong size, or a node >= r, each naming ``what``.
    """
    if isinstance(data, np.ndarray):
        arr = data.reshape(-1) if data.dtype == np.uint8 else None
    else:
        try:
            arr = np.frombuffer(memoryview(data), dtype=np.uint8)
        except TypeError:
            arr = None
    if arr is None:
        raise InputError(f"{what} must be bytes or a uint8 array, got {type(data).__name__}")
    if arr.size != nodes * NODE_BYTES:
        raise InputError(f"{what} must hold the sector's {nodes * NODE_BYTES} bytes (Fr32-padded), got {arr.size}")
    try:
        check_nodes(arr)
    except InputError as e:
        raise InputError(f"{what}: {e}") from None
    return arr.reshape(nodes, NODE_BYTES)
