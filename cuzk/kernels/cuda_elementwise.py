"""Element-wise field and curve kernels of ``arith.cu`` and the XYZZ → affine conversion.

These exist to check the device arithmetic against references (tests, ``benchmarks/gpu_check.py``);
the prover never calls them. Inputs and outputs are host uint64 arrays (DESIGN §3 layouts).

    >>> from cuzk.kernels.cuda_elementwise import ArithOp
    >>> int(ArithOp.MUL)
    2
"""

from __future__ import annotations

import enum

import numpy as np

from cuzk.kernels.cuda_curve import CudaCurve
from cuzk.kernels.cuda_runtime import BLOCK
from cuzk.kernels.cuda_runtime import grid_size as _grid

__all__ = ["ArithOp", "EcOp", "field_op", "ec_op", "xyzz_to_affine"]

_BLOCK = BLOCK["BLOCK_ELEMENTWISE"]  # cu/launch.cuh: the kernels' __launch_bounds__
_EC_BLOCK = BLOCK["BLOCK_CURVE"]  # G2 point kernels use ~255 registers per thread



class ArithOp(enum.IntEnum):
    """Element-wise field operations of ``arith.cu`` (``enum arith_op``)."""

    ADD = 0
    SUB = 1
    MUL = 2
    SQR = 3
    NEG = 4
    DBL = 5


class EcOp(enum.IntEnum):
    """Element-wise curve operations of ``arith.cu`` (``enum ec_op``); inputs affine, output XYZZ."""

    ADD_MIXED = 0
    SUB_MIXED = 1
    ADD = 2
    DBL = 3


def _words_to_int(w: np.ndarray) -> int:
    return int.from_bytes(np.ascontiguousarray(w, dtype=np.uint32).tobytes(), "little")


def _int_to_u64(x: int, limbs: int) -> np.ndarray:
    return np.frombuffer(x.to_bytes(8 * limbs, "little"), dtype=np.uint64).copy()


def xyzz_to_affine(words: np.ndarray, group: str, curve: CudaCurve) -> np.ndarray:
    """XYZZ point of ``curve`` as uint32 words (Montgomery) → affine uint64 ``(2, L)`` / ``(2, 2, L)``
    (L = the Fq limbs), zeros = infinity.

    One inversion in Python ints per MSM: x = X/ZZ, y = Y/ZZZ, all in Montgomery form.
    """
    fq, L, beta = curve.fq, curve.fq.limbs, curve.fq2_nonresidue
    p, rinv = fq.modulus, pow(fq.r, -1, fq.modulus)
    fw, ew = curve.coord_words(group), curve.fq_words
    coords = [words[i * fw : (i + 1) * fw] for i in range(4)]
    if group == "g1":
        X, Y, ZZ, ZZZ = (_words_to_int(cw) * rinv % p for cw in coords)
        if ZZ == 0:
            return np.zeros((2, L), dtype=np.uint64)
        x, y = X * pow(ZZ, -1, p) % p, Y * pow(ZZZ, -1, p) % p
        return np.stack([_int_to_u64(fq.to_mont_int(v), L) for v in (x, y)])
    X, Y, ZZ, ZZZ = ((_words_to_int(cw[:ew]) * rinv % p, _words_to_int(cw[ew:]) * rinv % p) for cw in coords)
    if ZZ == (0, 0):
        return np.zeros((2, 2, L), dtype=np.uint64)

    def div(a, b):  # a / b in Fq2 with u^2 = beta: 1/b = conj(b) / (b0^2 - beta b1^2)
        d = pow(b[0] * b[0] - beta * b[1] * b[1], -1, p)
        i0, i1 = b[0] * d % p, -b[1] * d % p
        return ((a[0] * i0 + beta * a[1] * i1) % p, (a[0] * i1 + a[1] * i0) % p)

    x, y = div(X, ZZ), div(Y, ZZZ)
    return np.stack([np.stack([_int_to_u64(fq.to_mont_int(v), L) for v in pt]) for pt in (x, y)])


def field_op(rt, field: str, op: ArithOp, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """op(a, b) element-wise with ``arith.cu`` on ``rt``; ``field`` in fr/fq/fq2 of the runtime's
    curve, uint64 Montgomery in and out (the shape of ``a``)."""
    n = a.shape[0]
    da, db = rt.asarray(np.ascontiguousarray(a).view(np.uint32)), rt.asarray(np.ascontiguousarray(b).view(np.uint32))
    out = rt.xp.empty_like(da)
    rt.launch(f"{field}_batch_op", _grid(n, _BLOCK), _BLOCK, (int(op), da, db, out, n))
    return rt.asnumpy(out).view(np.uint64).reshape(a.shape)


def ec_op(rt, group: str, op: EcOp, p: np.ndarray, q: np.ndarray) -> list[np.ndarray]:
    """op(p, q) element-wise on affine points of the runtime's curve (uint64, DESIGN §3 layout) → list
    of affine results."""
    n = p.shape[0]
    fw = rt.curve.coord_words(group)
    dp, dq = rt.asarray(np.ascontiguousarray(p).view(np.uint32)), rt.asarray(np.ascontiguousarray(q).view(np.uint32))
    out = rt.xp.empty((n, 4 * fw), dtype=np.uint32)
    rt.launch(f"{group}_batch_op", _grid(n, _EC_BLOCK), _EC_BLOCK, (int(op), dp, dq, out, n))
    return [xyzz_to_affine(w, group, rt.curve) for w in rt.asnumpy(out)]
