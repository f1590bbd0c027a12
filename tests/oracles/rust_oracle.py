"""Pytest helpers for the rust-fil-proofs oracle: find or build it, run it, read its files.

The oracle (tests/oracles/rust-fil-proofs/README.md) runs Filecoin's own rust-fil-proofs
and bellperson code; cuzk never imports it. Tests talk to it through files, JSON on
stdout and exit codes (0 ok, 1 negative verdict, 2 error).

Binary files written by ``dump-r1cs`` (integers little-endian, field elements as 32-byte
little-endian canonical BLS12-381 Fr values):

* R1CS: ``b"CUZKR1CS"``, u32 version (1), u32 reserved, u64 num_inputs (input 0 is the
  constant ONE), u64 num_aux, u64 num_constraints, u64 num_coeffs, the coefficient table,
  then for each of A, B, C: u64 nnz, ``num_constraints + 1`` u64 row offsets, ``nnz`` u32
  columns into ``z = inputs ++ aux``, ``nnz`` u32 coefficient ids.
* Witness: ``b"CUZKWITN"``, u32 version (1), u32 reserved, u64 num_inputs, u64 num_aux,
  then ``z`` as ``num_inputs + num_aux`` 32-byte values.

>>> m = R1csMatrix(np.array([0, 2, 3], np.uint64), np.array([0, 4, 1], np.uint32), np.array([0, 1, 0], np.uint32))
>>> m.row(0, [1, 5])
[(0, 1), (4, 5)]
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

# build_rust_oracle sits beside this file; tests import this module with tests/oracles on
# sys.path or as oracles.rust_oracle, so make the sibling importable either way.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
from build_rust_oracle import OracleBuildError, build  # noqa: E402

__all__ = [
    "BLS12_381_R",
    "OracleResult",
    "R1csDump",
    "R1csMatrix",
    "Witness",
    "oracle_binary",
    "read_r1cs",
    "read_witness",
    "run_oracle",
]

#: Order of BLS12-381's scalar field (Fr), the field every coefficient and value lives in.
BLS12_381_R = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001

_R1CS_MAGIC = b"CUZKR1CS"
_WITNESS_MAGIC = b"CUZKWITN"
_FORMAT_VERSION = 1

_BINARY: Path | None = None


def oracle_binary() -> Path:
    """Path of the oracle binary, built on first use; ``pytest.skip`` where it cannot be.

    ``CUZK_FIL_ORACLE`` names a prebuilt binary to use instead. Without cargo on PATH the
    calling test is skipped with that reason; a failing build is a test error.
    """
    global _BINARY
    if _BINARY is not None:
        return _BINARY
    given = os.environ.get("CUZK_FIL_ORACLE")
    if given:
        _BINARY = Path(given)
        return _BINARY
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed: the rust-fil-proofs oracle (tests/oracles/) cannot be built")
    try:
        _BINARY = build(quiet=True)
    except OracleBuildError as e:
        pytest.fail(str(e), pytrace=False)
    return _BINARY


@dataclass(frozen=True)
class OracleResult:
    """One oracle run: exit status, parsed stdout JSON (None if none), stderr text."""

    returncode: int
    value: dict | None
    stderr: str


def run_oracle(tmp: Path, *args: str | os.PathLike, timeout: float = 600, check: bool = True) -> OracleResult:
    """Run ``cuzk-fil-oracle --tmp TMP ARGS...``; with ``check``, a non-zero exit fails the test.

    rust-fil-proofs' caches (parameters, SDR parents) go under ``tmp``.
    """
    cmd = [str(oracle_binary()), "--tmp", str(tmp), *map(str, args)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    value = json.loads(proc.stdout) if proc.stdout.strip() else None
    if check and proc.returncode != 0:
        pytest.fail(f"oracle exited {proc.returncode}: {' '.join(cmd)}\n{proc.stderr}", pytrace=False)
    return OracleResult(proc.returncode, value, proc.stderr)


@dataclass(frozen=True)
class R1csMatrix:
    """One of A, B, C in CSR form: row ``i`` is terms ``row_offsets[i]:row_offsets[i+1]``."""

    row_offsets: np.ndarray  # uint64, num_constraints + 1
    columns: np.ndarray  # uint32 index into z = inputs ++ aux
    coeff_ids: np.ndarray  # uint32 index into R1csDump.coeffs

    def row(self, i: int, coeffs) -> list[tuple[int, int]]:
        """Row ``i`` as ``(column, coefficient)`` pairs, coefficients as Python ints."""
        lo, hi = int(self.row_offsets[i]), int(self.row_offsets[i + 1])
        return [(int(c), coeffs[int(k)]) for c, k in zip(self.columns[lo:hi], self.coeff_ids[lo:hi])]


@dataclass(frozen=True)
class R1csDump:
    """A whole dumped constraint system."""

    num_inputs: int
    num_aux: int
    num_constraints: int
    coeffs: list[int]
    a: R1csMatrix
    b: R1csMatrix
    c: R1csMatrix


@dataclass(frozen=True)
class Witness:
    """The assignment z = inputs ++ aux, as an (n, 32) uint8 array of LE field elements."""

    num_inputs: int
    num_aux: int
    z: np.ndarray

    def value(self, i: int) -> int:
        """z[i] as a Python int."""
        return int.from_bytes(self.z[i].tobytes(), "little")


def _header(buf: memoryview, magic: bytes, what: str, path: Path) -> None:
    if bytes(buf[:8]) != magic:
        raise ValueError(f"{path} is not an oracle {what} file (magic {bytes(buf[:8])!r})")
    version, _ = struct.unpack_from("<II", buf, 8)
    if version != _FORMAT_VERSION:
        raise ValueError(f"{path}: {what} format version {version}, expected {_FORMAT_VERSION}")


def read_r1cs(path: Path) -> R1csDump:
    """Parse an R1CS file written by ``dump-r1cs`` / ``dump-r1cs-post``."""
    data = Path(path).read_bytes()
    buf = memoryview(data)
    _header(buf, _R1CS_MAGIC, "R1CS", path)
    n_in, n_aux, n_cons, n_coeffs = struct.unpack_from("<QQQQ", buf, 16)
    pos = 48
    coeffs = [int.from_bytes(data[pos + 32 * i : pos + 32 * i + 32], "little") for i in range(n_coeffs)]
    pos += 32 * n_coeffs
    mats = []
    for _ in range(3):
        (nnz,) = struct.unpack_from("<Q", buf, pos)
        pos += 8
        offsets = np.frombuffer(data, np.dtype("<u8"), n_cons + 1, pos)
        pos += 8 * (n_cons + 1)
        cols = np.frombuffer(data, np.dtype("<u4"), nnz, pos)
        pos += 4 * nnz
        ids = np.frombuffer(data, np.dtype("<u4"), nnz, pos)
        pos += 4 * nnz
        mats.append(R1csMatrix(offsets, cols, ids))
    if pos != len(data):
        raise ValueError(f"{path}: {len(data) - pos} trailing bytes")
    return R1csDump(n_in, n_aux, n_cons, coeffs, *mats)


def read_witness(path: Path) -> Witness:
    """Parse a witness file written by ``dump-r1cs`` / ``dump-r1cs-post``."""
    data = Path(path).read_bytes()
    buf = memoryview(data)
    _header(buf, _WITNESS_MAGIC, "witness", path)
    n_in, n_aux = struct.unpack_from("<QQ", buf, 16)
    z = np.frombuffer(data, np.uint8, 32 * (n_in + n_aux), 32).reshape(-1, 32)
    if 32 + z.size != len(data):
        raise ValueError(f"{path}: size does not match its counts")
    return Witness(n_in, n_aux, z)
