"""cuzk's R1CS and witness against the oracle's dump (tests/oracles/rust_oracle.py), row by row.

Both number variables the same way: z = [ONE, public..., aux...], the aux in allocation order.
A row's terms are compared as (column, coefficient) lists in column order after dropping terms
whose coefficient is zero (bellpepper may keep one; cuzk never writes one). Vectorised: a
2.7M-row partition compares in seconds.
"""

from __future__ import annotations

import numpy as np

from cuzk.field import Fr

__all__ = ["first_row_difference", "witness_difference"]


def _canonical_table(ints) -> np.ndarray:
    return np.frombuffer(b"".join(int(v).to_bytes(32, "little") for v in ints), np.uint64).reshape(-1, 4)


def _rows(indptr: np.ndarray, n: int) -> np.ndarray:
    return np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr.astype(np.int64)))


def _normalised(indptr, cols, coeffs, n):
    """(per-row counts, columns, coefficients) with zero terms dropped and each row's terms in
    column order."""
    keep = coeffs.any(axis=1)
    rows = _rows(indptr, n)[keep]
    cols = cols.astype(np.int64)[keep]
    coeffs = coeffs[keep]
    order = np.lexsort((cols, rows))
    return np.bincount(rows, minlength=n), cols[order], coeffs[order], rows[order]


def first_row_difference(ours, dump, which: str) -> str | None:
    """None if matrix ``which`` ("a", "b" or "c") of cuzk's R1CS ``ours`` equals the dump's,
    else a sentence naming the first row that differs and how."""
    mine, theirs = getattr(ours, which), getattr(dump, which)
    n = dump.num_constraints
    if ours.n_constraints != n:
        return f"{ours.n_constraints} rows against {n}"
    table = _canonical_table(dump.coeffs)
    a = _normalised(mine.indptr, mine.indices, Fr.from_mont(np.ascontiguousarray(mine.data)), n)
    b = _normalised(theirs.row_offsets, theirs.columns, table[theirs.coeff_ids.astype(np.int64)], n)
    bad_rows = np.flatnonzero(a[0] != b[0])
    if a[0].sum() == b[0].sum():
        diff = np.flatnonzero((a[1] != b[1]) | (a[2] != b[2]).any(axis=1))
        if diff.size:
            bad_rows = np.union1d(bad_rows, a[3][diff[:1]])
    if not bad_rows.size:
        return None
    row = int(bad_rows[0])

    def terms(t):
        sel = t[3] == row
        return [(int(c), int.from_bytes(v.tobytes(), "little")) for c, v in zip(t[1][sel], t[2][sel])]

    return f"{which.upper()} row {row}: cuzk {terms(a)[:6]} ... against bellperson {terms(b)[:6]} ..."


def witness_difference(z_mont: np.ndarray, witness) -> str | None:
    """None if cuzk's assignment (Montgomery rows) equals the dumped witness, else the first
    differing variable."""
    ours = Fr.from_mont(np.ascontiguousarray(z_mont)).view(np.uint8).reshape(-1, 32)
    if ours.shape != witness.z.shape:
        return f"{ours.shape[0]} variables against {witness.z.shape[0]}"
    diff = np.flatnonzero((ours != witness.z).any(axis=1))
    if not diff.size:
        return None
    i = int(diff[0])
    return (f"variable {i}: cuzk {int.from_bytes(ours[i].tobytes(), 'little')} against "
            f"bellperson {witness.value(i)} ({diff.size} differ)")
