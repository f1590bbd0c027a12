"""The compiled constraint system: CSR matrices, counts, a shape digest, snarkjs ``.r1cs`` I/O.

Variables are numbered ``[ONE, public..., private...]``; ``n_constraints`` counts the user's
rows only (Groth16 appends bellperson's per-input rows itself).

    >>> from cuzk.synth import Synthesizer
    >>> from cuzk.circuit import Circuit
    >>> class Cube(Circuit):
    ...     def define(self, cs, x, out):
    ...         x, out = cs.private(x), cs.public(out)
    ...         cs.assert_equal(x * x * x + x + 5, out)
    >>> r = Synthesizer(Cube()).r1cs
    >>> (r.n_public, r.n_private, r.n_vars, r.n_constraints)
    (1, 3, 5, 3)
"""

from __future__ import annotations

import hashlib
import itertools
import os
import struct

import attrs
import numpy as np

from cuzk.errors import R1csFormatError
from cuzk.field import FR, Fr

__all__ = ["CsrMatrix", "R1CS", "csr_from_rows", "read_r1cs", "r1cs_digest"]


@attrs.frozen(eq=False)
class CsrMatrix:
    """A sparse matrix in CSR form with Montgomery Fr coefficients."""

    indptr: np.ndarray  # int64 (rows + 1,)
    indices: np.ndarray  # int32 (nnz,) column = variable index
    data: np.ndarray  # uint64 (nnz, 4) Montgomery
    # Optional factorization data == coeff_table[coeff_index]: circuits reuse few distinct
    # coefficients, so the PCE file stores this form (4 bytes per nonzero instead of 32).
    coeff_table: np.ndarray | None = None
    coeff_index: np.ndarray | None = None

    def factored(self) -> tuple[np.ndarray, np.ndarray]:
        """``(table, index)`` with ``data == table[index]`` (computed if not kept from compile)."""
        if self.coeff_table is not None and self.coeff_index is not None:
            return self.coeff_table, self.coeff_index
        rows = np.ascontiguousarray(self.data).view(np.dtype((np.void, 32))).ravel()
        uniq, index = np.unique(rows, return_inverse=True)
        table = np.frombuffer(uniq.tobytes(), dtype=np.uint64).reshape(-1, 4).copy()
        return table, index.astype(np.int32).ravel()

    @property
    def nnz(self) -> int:
        return int(self.indices.shape[0])

    @property
    def n_rows(self) -> int:
        return int(self.indptr.shape[0]) - 1

    def rows_as_ints(self) -> list[dict]:
        """Per row, ``{column: canonical coefficient}``."""
        coeffs = Fr.to_ints(self.data) if self.nnz else []
        cols = self.indices.tolist()
        ptr = self.indptr.tolist()
        return [dict(zip(cols[ptr[r]:ptr[r + 1]], coeffs[ptr[r]:ptr[r + 1]])) for r in range(self.n_rows)]


def csr_from_rows(rows, perm: np.ndarray) -> CsrMatrix:
    """CSR from per-row dicts ``{internal var: coefficient}``, columns renumbered by ``perm``."""
    n = len(rows)
    lens = np.fromiter((len(r) for r in rows), dtype=np.int64, count=n)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lens, out=indptr[1:])
    nnz = int(indptr[-1])
    cols = perm[np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int64, count=nnz)]
    uniq: dict[int, int] = {}
    cidx = np.fromiter(
        (uniq.setdefault(v, len(uniq)) for v in itertools.chain.from_iterable(r.values() for r in rows)),
        dtype=np.int64, count=nnz,
    )
    order = np.lexsort((cols, np.repeat(np.arange(n, dtype=np.int64), lens)))  # by row, then column
    table = Fr.from_ints(list(uniq)) if uniq else np.zeros((0, 4), np.uint64)
    index = np.ascontiguousarray(cidx[order], dtype=np.int32)
    return CsrMatrix(
        indptr=indptr,
        indices=np.ascontiguousarray(cols[order], dtype=np.int32),
        data=np.ascontiguousarray(table[index]) if nnz else np.zeros((0, 4), np.uint64),
        coeff_table=table,
        coeff_index=index,
    )


def r1cs_digest(n_public: int, n_private: int, n_constraints: int, mats) -> str:
    """sha256 over the counts and the three matrices (little-endian raw arrays)."""
    h = hashlib.sha256(b"cuzk-r1cs-v1")
    h.update(struct.pack("<QQQ", n_public, n_private, n_constraints))
    for m in mats:
        h.update(np.ascontiguousarray(m.indptr, "<i8").tobytes())
        h.update(np.ascontiguousarray(m.indices, "<i4").tobytes())
        h.update(np.ascontiguousarray(m.data, "<u8").tobytes())
    return h.hexdigest()


@attrs.frozen(eq=False)
class R1CS:
    """Counts, CSR matrices A, B, C, constraint names and the shape digest of a circuit."""

    n_public: int  # public inputs, not counting ONE
    n_private: int
    n_constraints: int  # user rows only
    a: CsrMatrix
    b: CsrMatrix
    c: CsrMatrix
    names: tuple  # per row: name or None
    digest: str

    @classmethod
    def build(cls, n_public, n_private, a, b, c, names=None) -> "R1CS":
        """Check shapes and compute the digest."""
        n = a.n_rows
        n_vars = 1 + n_public + n_private
        for label, m in (("A", a), ("B", b), ("C", c)):
            if m.n_rows != n:
                raise R1csFormatError(f"matrix {label} has {m.n_rows} rows, A has {n}")
            if m.nnz and (int(m.indices.min()) < 0 or int(m.indices.max()) >= n_vars):
                raise R1csFormatError(f"matrix {label} references a variable outside [0, {n_vars})")
        names = tuple(names) if names is not None else (None,) * n
        return cls(n_public, n_private, n, a, b, c, names, r1cs_digest(n_public, n_private, n, (a, b, c)))

    @property
    def n_vars(self) -> int:
        return 1 + self.n_public + self.n_private

    @property
    def nnz(self) -> int:
        """Nonzeros of A, B and C together."""
        return self.a.nnz + self.b.nnz + self.c.nnz

    def rows_as_ints(self) -> list[tuple[dict, dict, dict]]:
        """Per constraint, ``(A_row, B_row, C_row)`` as ``{var index: canonical int}``."""
        return list(zip(self.a.rows_as_ints(), self.b.rows_as_ints(), self.c.rows_as_ints()))

    def write(self, path) -> None:
        """Write a snarkjs/circom ``.r1cs`` v1 file (atomically: temp file, then rename).

        Sections: 1 header (n8=32, prime, nVars, nOutputs=0, nPubInputs, nPrvInputs=n_private,
        nLabels=nVars, nConstraints), 2 constraints (A, B, C per row: u32 nTerms, then u32 wire
        and 32-byte little-endian canonical coefficient per term), 3 wire -> label (identity).
        """
        header = struct.pack("<I", 32) + FR.modulus.to_bytes(32, "little") + struct.pack(
            "<IIIIQI", self.n_vars, 0, self.n_public, self.n_private, self.n_vars, self.n_constraints
        )
        term = np.dtype([("w", "<u4"), ("c", "<u8", (4,))])  # packed: 36 bytes
        blobs, counts = [], []
        for m in (self.a, self.b, self.c):
            t = np.empty(m.nnz, dtype=term)
            t["w"] = m.indices
            if m.nnz:
                t["c"] = Fr.from_mont(m.data)
            blobs.append(t.tobytes())
            counts.append(np.diff(m.indptr).tolist())
        ptrs = [m.indptr.tolist() for m in (self.a, self.b, self.c)]
        parts = []
        for r in range(self.n_constraints):
            for k in range(3):
                parts.append(struct.pack("<I", counts[k][r]))
                parts.append(blobs[k][36 * ptrs[k][r]: 36 * ptrs[k][r + 1]])
        cons = b"".join(parts)
        labels = np.arange(self.n_vars, dtype="<u8").tobytes()
        out = [b"r1cs", struct.pack("<II", 1, 3)]
        for sid, body in ((1, header), (2, cons), (3, labels)):
            out += [struct.pack("<IQ", sid, len(body)), body]
        tmp = f"{os.fspath(path)}.tmp{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(b"".join(out))
        os.replace(tmp, path)


def read_r1cs(path) -> R1CS:
    """Read a ``.r1cs`` v1 file over BLS12-381 Fr (wires must be ordered ONE, public, private).

    Raises:
        R1csFormatError: bad magic/version, truncated sections, another prime, or counts that
            do not match the data.
    """
    with open(path, "rb") as f:
        buf = f.read()
    if len(buf) < 12 or buf[:4] != b"r1cs":
        raise R1csFormatError(f"{path}: not an .r1cs file (bad magic)")
    version, n_sec = struct.unpack_from("<II", buf, 4)
    if version != 1:
        raise R1csFormatError(f"{path}: unsupported .r1cs version {version}")
    sections, off = {}, 12
    for _ in range(n_sec):
        if off + 12 > len(buf):
            raise R1csFormatError(f"{path}: truncated section table at byte {off}")
        sid, size = struct.unpack_from("<IQ", buf, off)
        off += 12
        if off + size > len(buf):
            raise R1csFormatError(f"{path}: section {sid} claims {size} bytes, {len(buf) - off} left")
        sections[sid] = buf[off:off + size]
        off += size
    if 1 not in sections or 2 not in sections:
        raise R1csFormatError(f"{path}: header or constraint section missing")
    h = sections[1]
    if len(h) < 4 or struct.unpack_from("<I", h)[0] != 32 or len(h) != 4 + 32 + 28:
        raise R1csFormatError(f"{path}: header is not for a 32-byte field")
    if int.from_bytes(h[4:36], "little") != FR.modulus:
        raise R1csFormatError(f"{path}: prime is not BLS12-381 Fr")
    n_vars, n_out, n_pub, n_prv, _n_labels, n_cons = struct.unpack_from("<IIIIQI", h, 36)
    n_public = n_out + n_pub
    body, off = sections[2], 0
    rows = ([], [], [])
    try:
        for _ in range(n_cons):
            for k in range(3):
                (nt,) = struct.unpack_from("<I", body, off)
                off += 4
                row = {}
                for _ in range(nt):
                    (w,) = struct.unpack_from("<I", body, off)
                    row[w] = int.from_bytes(body[off + 4: off + 36], "little")
                    if len(body) < off + 36 or row[w] >= FR.modulus or w >= n_vars:
                        raise R1csFormatError(f"{path}: bad term at byte {off} of the constraint section")
                    off += 36
                rows[k].append(row)
    except struct.error as e:
        raise R1csFormatError(f"{path}: constraint section truncated at byte {off}") from e
    if off != len(body):
        raise R1csFormatError(f"{path}: {len(body) - off} trailing bytes in the constraint section")
    perm = np.arange(max(n_vars, 1), dtype=np.int64)
    mats = [csr_from_rows(r, perm) for r in rows]
    return R1CS.build(n_public, n_vars - 1 - n_public, *mats)
