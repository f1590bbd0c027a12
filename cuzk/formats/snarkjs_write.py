"""Write a snarkjs-convention proving key as a Groth16 ``.zkey`` (v1) that snarkjs 0.7 proves with.

The inverse of :func:`cuzk.formats.snarkjs.read_zkey` (see its module for the encodings):
sections 1 (protocol = 1, Groth16), 2 header, 3 IC, 4 A/B coefficients (stored as coeff·R² mod r
with R = 2^256, plus the per-input A rows), 5 A, 6 B1, 7 B2 over all wires (points at infinity
where the density has no base), 8 C, 9 H, and 10 the MPC parameters as ``zkey new`` writes them
before any contribution: a 64-byte circuit hash and a contribution count of 0 (provers ignore it).

    >>> write_zkey(setup_snarkjs(read_r1cs("c.r1cs")), "c.zkey")      # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import struct

import numpy as np

from cuzk import curves
from cuzk.errors import KeyMismatchError
from cuzk.formats.snarkjs import _COEF, SnarkjsProvingKey, _n8
from cuzk.synth.binfile import write_container

__all__ = ["write_zkey", "zkey_sections"]


def _pts(arr: np.ndarray) -> bytes:
    # cuzk's Montgomery Fq limbs are snarkjs's "LEM" encoding as they are
    return np.ascontiguousarray(arr, dtype="<u8").tobytes()


def _full(points: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Scatter the density-compressed bases back over every wire; absent ones = infinity (zeros)."""
    out = np.zeros((keep.shape[0],) + points.shape[1:], dtype=np.uint64)
    out[keep] = points
    return out


def _coefficients(pk: SnarkjsProvingKey) -> bytes:
    Fr = curves.get(pk.curve).Fr  # noqa: N806 (the field's name)
    n_c, n_in = pk.n_constraints, pk.n_inputs
    parts = []
    for mid, mat in ((0, pk.matrix_a), (1, pk.matrix_b)):
        if mat.n_rows != n_c:
            raise KeyMismatchError(f"write_zkey: matrix {'AB'[mid]} has {mat.n_rows} rows, the key {n_c} constraints")
        rec = np.zeros(mat.indices.shape[0], dtype=_COEF)
        rec["m"], rec["s"] = mid, mat.indices
        rec["c"] = np.repeat(np.arange(n_c, dtype=np.uint32), np.diff(mat.indptr))
        rec["v"] = Fr.to_mont(np.ascontiguousarray(mat.data))  # Montgomery coeff·R → stored coeff·R²
        parts.append(rec)
    extra = np.zeros(n_in, dtype=_COEF)  # A row n_constraints + s = wire s, coefficient 1
    extra["c"] = n_c + np.arange(n_in, dtype=np.uint32)
    extra["s"] = np.arange(n_in, dtype=np.uint32)
    extra["v"] = Fr.to_mont(Fr.one(n_in))
    rec = np.concatenate(parts[:1] + [extra] + parts[1:])
    return struct.pack("<I", rec.shape[0]) + rec.tobytes()


def zkey_sections(pk: SnarkjsProvingKey) -> list[tuple[int, bytes]]:
    """The ``(section id, bytes)`` list of the ``.zkey`` for ``pk`` (sections 1–10).

    Raises:
        KeyMismatchError: ``pk`` is not a snarkjs-convention key with its A/B matrices.
    """
    if not isinstance(pk, SnarkjsProvingKey) or pk.convention != "snarkjs":
        raise KeyMismatchError("write_zkey needs a snarkjs-convention key (read_zkey or setup_snarkjs), "
                               f"got {type(pk).__name__} with convention {pk.convention!r}")
    if pk.matrix_a is None or pk.matrix_b is None:
        raise KeyMismatchError("write_zkey: the key carries no A/B coefficient matrices (section 4 needs them)")
    n_vars, n_in, m = pk.n_vars, pk.n_inputs, pk.domain_size
    dens = pk.resolved_density()
    keep_a = np.concatenate([np.ones(n_in, bool), dens.a_aux])
    keep_b = np.concatenate([dens.b_input, dens.b_aux])
    vk = pk.vk
    spec = curves.resolve(pk.curve)
    n8r, n8q = _n8(pk.curve)
    header = b"".join([
        struct.pack("<I", n8q), spec.fq.modulus.to_bytes(n8q, "little"),
        struct.pack("<I", n8r), spec.fr.modulus.to_bytes(n8r, "little"),
        struct.pack("<III", n_vars, n_in - 1, m),
        *(_pts(p) for p in (vk.alpha_g1, vk.beta_g1, vk.beta_g2, vk.gamma_g2, vk.delta_g1, vk.delta_g2)),
    ])
    coeffs = _coefficients(pk)
    # zkey new's section 10 before contributions: circuit hash (64 bytes) + 0 contributions
    cs_hash = hashlib.blake2b(b"cuzk-setup" + header + coeffs, digest_size=64).digest()
    return [
        (1, struct.pack("<I", 1)),
        (2, header),
        (3, _pts(vk.ic)),
        (4, coeffs),
        (5, _pts(_full(pk.a, keep_a))),
        (6, _pts(_full(pk.b_g1, keep_b))),
        (7, _pts(_full(pk.b_g2, keep_b))),
        (8, _pts(pk.l)),
        (9, _pts(pk.h)),
        (10, cs_hash + struct.pack("<I", 0)),
    ]


def write_zkey(pk: SnarkjsProvingKey, path) -> None:
    """Write ``pk`` as a snarkjs Groth16 ``.zkey`` of its curve (bn128 or bls12381; atomic:
    temp file, then rename).

    Raises:
        KeyMismatchError: ``pk`` is not a snarkjs-convention key with its A/B matrices.

    >>> write_zkey(pk, "c.zkey"); read_zkey("c.zkey").n_vars == pk.n_vars     # doctest: +SKIP
    True
    """
    write_container(path, b"zkey", 1, zkey_sections(pk))
