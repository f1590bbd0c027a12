"""The compiled constraint system: CSR matrices, counts, a shape digest, circom/snarkjs ``.r1cs`` I/O.

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

from cuzk import curves
from cuzk.errors import R1csFormatError
from cuzk.synth.binfile import Cursor, check_prime, read_container, write_container
from cuzk.synth.rownames import RowNames

__all__ = ["CsrMatrix", "R1CS", "R1csHasher", "PendingDigest", "csr_from_rows", "read_r1cs", "r1cs_digest"]


@attrs.frozen(eq=False)
class CsrMatrix:
    """A sparse matrix in CSR form with Montgomery Fr coefficients (of the owning R1CS's curve).

    ``data`` may be given, or left to be gathered from ``coeff_table[coeff_index]`` on first
    use: a compiled circuit keeps 4 bytes per nonzero until a synthesis needs the 32.
    """

    indptr: np.ndarray  # int64 (rows + 1,)
    indices: np.ndarray  # int32 (nnz,) column = variable index
    _data: np.ndarray | None = None  # uint64 (nnz, L) Montgomery, L = the curve's Fr limbs; see data
    # Optional factorization data == coeff_table[coeff_index]: circuits reuse few distinct
    # coefficients, so the PCE file stores this form (4 bytes per nonzero instead of 32).
    coeff_table: np.ndarray | None = None
    coeff_index: np.ndarray | None = None

    def __attrs_post_init__(self):
        if self._data is None and (self.coeff_table is None or self.coeff_index is None):
            raise ValueError("a CsrMatrix needs data or both coeff_table and coeff_index")

    @property
    def data(self) -> np.ndarray:
        """uint64 (nnz, L) Montgomery coefficients (gathered from the factored form once)."""
        d = self._data
        if d is None:
            d = np.take(self.coeff_table, self.coeff_index, axis=0) if self.nnz else np.zeros((0, self.coeff_table.shape[1]), np.uint64)
            object.__setattr__(self, "_data", d)  # a cache: two racing threads store equal arrays
        return d

    def factored(self) -> tuple[np.ndarray, np.ndarray]:
        """``(table, index)`` with ``data == table[index]`` (computed if not kept from compile)."""
        if self.coeff_table is not None and self.coeff_index is not None:
            return self.coeff_table, self.coeff_index
        limbs = self.data.shape[1]
        rows = np.ascontiguousarray(self.data).view(np.dtype((np.void, 8 * limbs))).ravel()
        uniq, index = np.unique(rows, return_inverse=True)
        table = np.frombuffer(uniq.tobytes(), dtype=np.uint64).reshape(-1, limbs).copy()
        return table, index.astype(np.int32).ravel()

    @property
    def nnz(self) -> int:
        return int(self.indices.shape[0])

    @property
    def n_rows(self) -> int:
        return int(self.indptr.shape[0]) - 1

    def rows_as_ints(self, field) -> list[dict]:
        """Per row, ``{column: canonical coefficient}``; ``field`` is the curve's Fr (``PrimeField``)."""
        coeffs = field.to_ints(self.data) if self.nnz else []
        cols = self.indices.tolist()
        ptr = self.indptr.tolist()
        return [dict(zip(cols[ptr[r]:ptr[r + 1]], coeffs[ptr[r]:ptr[r + 1]])) for r in range(self.n_rows)]


def csr_from_rows(rows, perm: np.ndarray | None, field) -> CsrMatrix:
    """CSR from per-row dicts ``{internal var: coefficient}``, columns renumbered by ``perm``
    (``None``: keep them; a ``.r1cs`` header's nVars must not size an allocation); ``field`` is
    the curve's Fr (``PrimeField``) the coefficients are converted into."""
    limbs = field.params.limbs
    n = len(rows)
    lens = np.fromiter((len(r) for r in rows), dtype=np.int64, count=n)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lens, out=indptr[1:])
    nnz = int(indptr[-1])
    cols = np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int64, count=nnz)
    if perm is not None:
        cols = perm[cols]
    uniq: dict[int, int] = {}
    cidx = np.fromiter(
        (uniq.setdefault(v, len(uniq)) for v in itertools.chain.from_iterable(r.values() for r in rows)),
        dtype=np.int64, count=nnz,
    )
    order = np.lexsort((cols, np.repeat(np.arange(n, dtype=np.int64), lens)))  # by row, then column
    table = field.from_ints(list(uniq)) if uniq else np.zeros((0, limbs), np.uint64)
    index = np.ascontiguousarray(cidx[order], dtype=np.int32)
    return CsrMatrix(
        indptr=indptr,
        indices=np.ascontiguousarray(cols[order], dtype=np.int32),
        data=np.ascontiguousarray(table[index]) if nnz else np.zeros((0, limbs), np.uint64),
        coeff_table=table,
        coeff_index=index,
    )


_HASH_ROWS = 1 << 15  # rows of coefficients gathered per hash update (1 MiB)


def _bytes_view(a: np.ndarray, dtype: str):
    """The array's bytes in ``dtype`` through the buffer protocol: hashing a gigabyte matrix
    makes no copy of it (``tobytes`` did)."""
    a = np.ascontiguousarray(a, dtype)
    return memoryview(a).cast("B") if a.size else b""


class R1csHasher:
    """:func:`r1cs_digest` fed one matrix at a time (the stamped compile hashes a finished
    matrix on another thread while it places the next)."""

    def __init__(self, n_public: int, n_private: int, n_constraints: int):
        self._h = hashlib.sha256(b"cuzk-r1cs-v1")
        self._h.update(struct.pack("<QQQ", n_public, n_private, n_constraints))

    def add(self, m: "CsrMatrix") -> None:
        h = self._h
        h.update(_bytes_view(m.indptr, "<i8"))
        h.update(_bytes_view(m.indices, "<i4"))
        if m._data is not None:
            h.update(_bytes_view(m.data, "<u8"))
            return
        # the same bytes as data, gathered a cache-sized chunk at a time
        idx, table = m.coeff_index, np.ascontiguousarray(m.coeff_table, "<u8")
        buf = np.empty((min(idx.shape[0], _HASH_ROWS), table.shape[1]), dtype="<u8")
        for a in range(0, idx.shape[0], _HASH_ROWS):
            part = buf[:min(_HASH_ROWS, idx.shape[0] - a)]
            np.take(table, idx[a:a + part.shape[0]], axis=0, out=part)
            h.update(_bytes_view(part, "<u8"))

    def hexdigest(self) -> str:
        return self._h.hexdigest()


class PendingDigest:
    """A digest still being computed on another thread (a ``concurrent.futures.Future`` of the
    hex string): the stamped compile returns its R1CS while the SHA-256 of the last matrices
    runs on, and :attr:`R1CS.digest` waits for it on first read. Pickles as the finished string,
    so a Synthesizer sent to a worker process carries a plain digest."""

    __slots__ = ("_future",)

    def __init__(self, future):
        self._future = future

    def result(self) -> str:
        return self._future.result()

    def __reduce__(self):
        return (str, (self.result(),))


def r1cs_digest(n_public: int, n_private: int, n_constraints: int, mats) -> str:
    """sha256 over the counts and the three matrices (little-endian raw arrays)."""
    h = R1csHasher(n_public, n_private, n_constraints)
    for m in mats:
        h.add(m)
    return h.hexdigest()


@attrs.frozen(eq=False)
class R1CS:
    """Counts, CSR matrices A, B, C, constraint names, the shape digest and the curve of a circuit.

    ``curve`` is the canonical name of the curve whose Fr the coefficients are in
    (``cuzk.curves``); keys set up from this R1CS are over that curve.
    """

    n_public: int  # public inputs, not counting ONE
    n_private: int
    n_constraints: int  # user rows only
    a: CsrMatrix
    b: CsrMatrix
    c: CsrMatrix
    names: tuple  # per row: name or None (a RowNames sequence for stamped circuits)
    _digest: str | PendingDigest  # read through .digest
    curve: str = curves.DEFAULT

    @classmethod
    def build(cls, n_public, n_private, a, b, c, names=None, *, curve: str | None = None,
              digest: str | PendingDigest | None = None) -> "R1CS":
        """Check shapes and compute the digest; ``curve``: a name or alias (default BLS12-381);
        ``digest``: already computed by the caller with :class:`R1csHasher` over these matrices
        (or a :class:`PendingDigest` of that computation)."""
        curve = curves.canonical(curve)
        limbs = curves.resolve(curve).fr.limbs
        n = a.n_rows
        n_vars = 1 + n_public + n_private
        for label, m in (("A", a), ("B", b), ("C", c)):
            if m.n_rows != n:
                raise R1csFormatError(f"matrix {label} has {m.n_rows} rows, A has {n}")
            coeffs = m._data if m._data is not None else m.coeff_table  # no gather for a shape check
            if coeffs.ndim != 2 or coeffs.shape[1] != limbs:
                raise R1csFormatError(f"matrix {label} has coefficients of shape {coeffs.shape[1:]}, "
                                      f"{curves.resolve(curve).title} Fr needs ({limbs},)")
            if m.nnz and (int(m.indices.min()) < 0 or int(m.indices.max()) >= n_vars):
                raise R1csFormatError(f"matrix {label} references a variable outside [0, {n_vars})")
        if names is None:
            names = (None,) * n
        elif not isinstance(names, RowNames):  # stamped circuits name rows on demand
            names = tuple(names)
        if len(names) != n:
            raise R1csFormatError(f"{len(names)} constraint names for {n} rows")
        if digest is None:
            digest = r1cs_digest(n_public, n_private, n, (a, b, c))
        return cls(n_public, n_private, n, a, b, c, names, digest, curve)

    @property
    def digest(self) -> str:
        """SHA-256 (hex) of the counts and the three matrices (:func:`r1cs_digest`): what names
        keys and PCE files of this circuit. After a stamped compile the first read may wait for
        the hashing thread to finish."""
        d = self._digest
        return d if isinstance(d, str) else d.result()

    @property
    def field(self):
        """The curve's Fr (:class:`cuzk.field.PrimeField`) the coefficients are in."""
        return curves.get(self.curve).Fr

    @property
    def n_vars(self) -> int:
        return 1 + self.n_public + self.n_private

    @property
    def nnz(self) -> int:
        """Nonzeros of A, B and C together."""
        return self.a.nnz + self.b.nnz + self.c.nnz

    def rows_as_ints(self) -> list[tuple[dict, dict, dict]]:
        """Per constraint, ``(A_row, B_row, C_row)`` as ``{var index: canonical int}``."""
        f = self.field
        return list(zip(self.a.rows_as_ints(f), self.b.rows_as_ints(f), self.c.rows_as_ints(f)))

    def write(self, path) -> None:
        """Write a snarkjs/circom ``.r1cs`` v1 file (atomically: temp file, then rename).

        Sections: 1 header (n8=32, prime, nVars, nOutputs=0, nPubInputs, nPrvInputs=n_private,
        nLabels=nVars, nConstraints), 2 constraints (A, B, C per row: u32 nTerms, then u32 wire
        and 32-byte little-endian canonical coefficient per term), 3 wire -> label (identity).
        """
        field = self.field
        n8 = 8 * field.params.limbs
        header = struct.pack("<I", n8) + field.params.modulus.to_bytes(n8, "little") + struct.pack(
            "<IIIIQI", self.n_vars, 0, self.n_public, self.n_private, self.n_vars, self.n_constraints
        )
        term = np.dtype([("w", "<u4"), ("c", "<u8", (n8 // 8,))])  # packed: 4 + n8 bytes
        blobs, counts = [], []
        for m in (self.a, self.b, self.c):
            t = np.empty(m.nnz, dtype=term)
            t["w"] = m.indices
            if m.nnz:
                t["c"] = field.from_mont(m.data)
            blobs.append(t.tobytes())
            counts.append(np.diff(m.indptr).tolist())
        ptrs = [m.indptr.tolist() for m in (self.a, self.b, self.c)]
        parts = []
        for r in range(self.n_constraints):
            for k in range(3):
                parts.append(struct.pack("<I", counts[k][r]))
                parts.append(blobs[k][(4 + n8) * ptrs[k][r]: (4 + n8) * ptrs[k][r + 1]])
        cons = b"".join(parts)
        labels = np.arange(self.n_vars, dtype="<u8").tobytes()
        write_container(path, b"r1cs", 1, [(1, header), (2, cons), (3, labels)])


def read_r1cs(path) -> R1CS:
    """Read a circom/snarkjs ``.r1cs`` (v1) over BLS12-381 or BN254 (bn128) Fr as an :class:`R1CS`.

    The one ``.r1cs`` reader (:func:`cuzk.formats.snarkjs.read_r1cs` is this function). Wires
    keep circom's order (ONE, outputs, public inputs, private inputs, internal), which is cuzk's
    ``[ONE, public..., private...]`` with the outputs counted as public. Sections other than the
    header (1) and the constraints (2) are ignored, except that circom's wire-to-label map (3),
    when present, must hold one u64 per wire (so the header's wire count is backed by bytes).

    The curve is the one whose scalar field has the header's prime (``R1CS.curve``).

    Raises:
        R1csFormatError: bad magic/version, a truncated or missing section, a prime of neither
            curve (the message names both), a
            coefficient >= r, a wire outside ``[0, nVars)``, or counts that do not match the data.

    >>> Synthesizer(Cube()).r1cs.write("c.r1cs")             # doctest: +SKIP
    >>> read_r1cs("c.r1cs").n_public                         # doctest: +SKIP
    1
    """
    where = os.fspath(path)
    # the header is checked before the rest is read; sections past 3 are skipped unread
    sec = read_container(path, b"r1cs", (1,), where, keep=(1, 2, 3), error=R1csFormatError)
    for sid, name in ((1, "header"), (2, "constraints")):
        if sid not in sec:
            raise R1csFormatError(f"{where}: missing section {sid} ({name})")
    cur = Cursor(sec[1], where, "header (1)", error=R1csFormatError)
    n8 = cur.u32()
    curve = check_prime(cur.uint(n8), "r", where, error=R1csFormatError)
    field = curves.get(curve).Fr
    if n8 != 8 * field.params.limbs:
        raise R1csFormatError(f"{where}: field elements of {n8} bytes, expected {8 * field.params.limbs}")
    n_vars, n_out, n_pub, _n_prv = (cur.u32() for _ in range(4))
    cur.uint(8)  # nLabels: only section 3 uses it
    n_cons = cur.u32()
    cur.done()
    n_public = n_out + n_pub
    if n_vars < 1 + n_public:
        raise R1csFormatError(f"{where}: {n_public} public wires (outputs + public inputs) but only {n_vars} wires")
    # the wire-label map holds one u64 per wire: it backs nVars with bytes, so a 500-byte file
    # cannot claim 2^32 wires (which everything sized per wire, setup included, would allocate)
    if 3 in sec and len(sec[3]) != 8 * n_vars:
        raise R1csFormatError(f"{where}: the wire-label section (3) holds {len(sec[3])} bytes, expected 8 x {n_vars} wires")
    rows = _read_constraints(sec[2], n_cons, n_vars, n8, field.params.modulus, where)
    # circom's wire order already is cuzk's: no renumbering (an identity permutation sized by the
    # header's nVars would let a corrupt count allocate gigabytes)
    return R1CS.build(n_public, n_vars - 1 - n_public, *(csr_from_rows(r, None, field) for r in rows), curve=curve)


def _read_constraints(body: memoryview, n_cons: int, n_vars: int, n8: int, modulus: int,
                      where: str) -> tuple[list, list, list]:
    """Section 2 → per matrix, per row ``{wire: canonical coefficient}``."""
    rows: tuple[list, list, list] = ([], [], [])
    off, end = 0, len(body)
    for i in range(n_cons):
        for k in range(3):
            if off + 4 > end:
                raise R1csFormatError(f"{where}: constraint section truncated at byte {off} (constraint {i} of {n_cons})")
            (nt,) = struct.unpack_from("<I", body, off)
            off += 4
            if off + (4 + n8) * nt > end:
                raise R1csFormatError(f"{where}: constraint section truncated at byte {off} (constraint {i} of {n_cons})")
            row = {}
            for _ in range(nt):
                (w,) = struct.unpack_from("<I", body, off)
                c = int.from_bytes(body[off + 4: off + 4 + n8], "little")
                if w >= n_vars or c >= modulus or w in row:
                    why = f"wire {w} >= nVars {n_vars}" if w >= n_vars else (
                        "coefficient >= r" if c >= modulus else f"wire {w} appears twice in the row")
                    raise R1csFormatError(f"{where}: bad term at byte {off} of the constraint section ({why})")
                row[w] = c
                off += 4 + n8
            rows[k].append(row)
    if off != end:
        raise R1csFormatError(f"{where}: {end - off} trailing bytes in the constraint section")
    return rows
