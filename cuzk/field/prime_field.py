"""Array-level prime-field API: :class:`PrimeField` (a curve's ``Fr`` and ``Fq`` are instances).

A ``PrimeField`` is the galois-like face of the Numba kernels: it validates inputs (dtype,
shape, range) and calls the nogil array loops of a curve's generated ``<name>_array`` module
(``cuzk.curves.<curve>.fr_array``); ``cuzk.curves.get(curve).Fr`` builds one. Arrays are
``(n, L)`` uint64, little-endian limbs, **Montgomery form** (DESIGN §3); ``from_ints`` /
``to_ints`` and the bytes functions convert at the edges.

    >>> from cuzk.field import Fq, Fr
    >>> a = Fr.from_ints([3, 5])
    >>> Fr.to_ints(Fr.mul(a, Fr.inv(a)))
    [1, 1]
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from types import ModuleType

import numpy as np

from cuzk.errors import FieldValueError
from cuzk.field import conversions as conv
from cuzk.field.jit import readonly
from cuzk.field.params import FieldParams

__all__ = ["PrimeField"]


class PrimeField:
    """Vectorised arithmetic over ``(n, L)`` Montgomery arrays of one prime field.

    Binary operations need operands of equal shape. Every operation checks its inputs are
    reduced (every element < p; an unreduced row gave silently wrong results): one pass over the
    top limbs, the full compare only when some top limb reaches p's.

    Attributes:
        params: the :class:`~cuzk.field.params.FieldParams`.
        kernels: the in-JIT kernel module (``cuzk.curves.<curve>.fr`` / ``.fq``).
        limbs, modulus, nbytes: L, p and the fixed byte width (8L) of one encoded element.
    """

    def __init__(self, params: FieldParams, kernels: ModuleType, arrays: ModuleType):
        self.params = params
        self.kernels = kernels
        self._v = arrays
        self.name = params.name.capitalize()
        self.limbs = params.limbs
        self.modulus = params.modulus
        self.nbytes = 8 * params.limbs

    def __repr__(self) -> str:
        return f"PrimeField({self.name}, p=0x{self.modulus:x})"

    # -- validation -------------------------------------------------------------------
    def _arr(self, a, what="array") -> np.ndarray:
        return conv.check_limbs(a, self.params, what)

    def _pair(self, a, b):
        a, b = self._reduced(a, "left operand"), self._reduced(b, "right operand")
        if a.shape != b.shape:
            raise FieldValueError(f"{self.name} operands must have equal shapes, got {a.shape} and {b.shape}")
        return a, b

    def _reduced(self, a, what="array") -> np.ndarray:
        a = self._arr(a, what)
        i = conv.first_unreduced(a, self.params)
        if i is not None:
            raise FieldValueError(f"{self.name} {what}: row {i} is not reduced (value >= modulus)")
        return readonly(a)  # kernel inputs are read-only arrays: one specialization per kernel

    def _count(self, n) -> int:
        return conv.check_count(n, f"{self.name}: a count of elements")

    # -- conversions ------------------------------------------------------------------
    def ints_to_limbs(self, values: Iterable[int]) -> np.ndarray:
        """Ints in ``[0, p)`` -> ``(n, L)`` canonical limbs (no Montgomery form).

        >>> from cuzk.field import Fr
        >>> Fr.ints_to_limbs([7]).tolist()
        [[7, 0, 0, 0]]
        """
        return conv.ints_to_limbs(values, self.params)

    def limbs_to_ints(self, arr: np.ndarray) -> list[int]:
        """``(n, L)`` canonical limbs -> ints; rows must be < p.

        >>> from cuzk.field import Fr
        >>> Fr.limbs_to_ints(Fr.ints_to_limbs([7]))
        [7]
        """
        return conv.limbs_to_ints(self._reduced(arr))

    def to_mont(self, arr: np.ndarray) -> np.ndarray:
        """Canonical limbs -> Montgomery limbs.

        >>> from cuzk.field import Fr
        >>> Fr.to_ints(Fr.to_mont(Fr.ints_to_limbs([9])))
        [9]
        """
        return self._v.vto_mont(self._reduced(arr))

    def from_mont(self, arr: np.ndarray) -> np.ndarray:
        """Montgomery limbs -> canonical limbs.

        >>> from cuzk.field import Fr
        >>> Fr.from_mont(Fr.from_ints([9])).tolist()
        [[9, 0, 0, 0]]
        """
        return self._v.vfrom_mont(self._reduced(arr))

    def from_ints(self, values: Iterable[int]) -> np.ndarray:
        """Ints in ``[0, p)`` -> ``(n, L)`` Montgomery array.

        Raises:
            FieldValueError: a value is not an integer or is out of range.

        >>> from cuzk.field import Fr
        >>> Fr.from_ints([1]).tolist() == Fr.one(1).tolist()
        True
        """
        return self._v.vto_mont(readonly(self.ints_to_limbs(values)))

    def to_ints(self, arr: np.ndarray) -> list[int]:
        """Montgomery array -> canonical Python ints.

        >>> from cuzk.field import Fq
        >>> Fq.to_ints(Fq.from_ints([0, 2**200]))
        [0, 1606938044258990275541962092341162602522202993782792835301376]
        """
        return conv.limbs_to_ints(self.from_mont(arr))

    def from_bytes(self, data, byteorder: str = "big") -> np.ndarray:
        """Fixed-width canonical encodings (``nbytes`` each, bytes-like or ``(n, nbytes)``
        uint8) -> Montgomery array. Raises FieldValueError on a bad length or a value >= p.

        >>> from cuzk.field import Fr
        >>> Fr.to_ints(Fr.from_bytes(bytes(31) + b"\\x2a"))
        [42]
        """
        return self._v.vto_mont(readonly(conv.bytes_to_limbs(data, self.params, byteorder)))

    def to_bytes(self, arr: np.ndarray, byteorder: str = "big") -> np.ndarray:
        """Montgomery array -> ``(n, nbytes)`` uint8 canonical encodings (``.tobytes()`` joins them).

        >>> from cuzk.field import Fr
        >>> Fr.to_bytes(Fr.from_ints([42]))[0, -1]
        np.uint8(42)
        """
        return conv.limbs_to_bytes(self.from_mont(arr), byteorder)

    # -- constructors -----------------------------------------------------------------
    def zeros(self, n: int) -> np.ndarray:
        """n zeros.

        >>> from cuzk.field import Fr
        >>> Fr.zeros(2).shape
        (2, 4)
        """
        return np.zeros((self._count(n), self.limbs), dtype=np.uint64)

    def one(self, n: int = 1) -> np.ndarray:
        """n copies of Montgomery 1.

        >>> from cuzk.field import Fr
        >>> Fr.to_ints(Fr.one(2))
        [1, 1]
        """
        row = conv.ints_to_limbs([self.params.r], self.params)
        return np.repeat(row, self._count(n), axis=0)

    def random(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n uniform field elements (Montgomery form), by rejection sampling on the top limb.

        >>> from cuzk.field import Fq
        >>> a = Fq.random(3, np.random.default_rng(0)); a.shape
        (3, 6)
        """
        if not isinstance(rng, np.random.Generator):
            raise FieldValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        n = self._count(n)
        top_bits = self.params.bits - 64 * (self.limbs - 1)
        top_mask = np.uint64((1 << top_bits) - 1)
        out = np.empty((0, self.limbs), dtype=np.uint64)
        while out.shape[0] < n:
            # A uniform value < p has a uniform Montgomery image, so the raw draws are used as is.
            draw = rng.integers(0, 2**64, size=(n - out.shape[0] + 8, self.limbs), dtype=np.uint64, endpoint=False)
            draw[:, -1] &= top_mask
            out = np.concatenate([out, draw[conv.is_canonical(draw, self.params)]])
        return np.ascontiguousarray(out[:n])

    # -- arithmetic -------------------------------------------------------------------
    def add(self, a, b) -> np.ndarray:
        """a + b elementwise.

        >>> from cuzk.field import Fr
        >>> Fr.to_ints(Fr.add(Fr.from_ints([Fr.modulus - 1]), Fr.from_ints([2])))
        [1]
        """
        return self._v.vadd(*self._pair(a, b))

    def sub(self, a, b) -> np.ndarray:
        """a - b elementwise.

        >>> from cuzk.field import Fr
        >>> Fr.to_ints(Fr.sub(Fr.from_ints([1]), Fr.from_ints([2]))) == [Fr.modulus - 1]
        True
        """
        return self._v.vsub(*self._pair(a, b))

    def mul(self, a, b) -> np.ndarray:
        """a * b elementwise.

        >>> from cuzk.field import Fq
        >>> Fq.to_ints(Fq.mul(Fq.from_ints([6]), Fq.from_ints([7])))
        [42]
        """
        return self._v.vmul(*self._pair(a, b))

    def sqr(self, a) -> np.ndarray:
        """a^2 elementwise.

        >>> from cuzk.field import Fr
        >>> Fr.to_ints(Fr.sqr(Fr.from_ints([12])))
        [144]
        """
        return self._v.vsqr(self._reduced(a))

    def neg(self, a) -> np.ndarray:
        """-a elementwise (zero stays zero).

        >>> from cuzk.field import Fr
        >>> Fr.to_ints(Fr.neg(Fr.from_ints([0, 1]))) == [0, Fr.modulus - 1]
        True
        """
        return self._v.vneg(self._reduced(a))

    def inv(self, a) -> np.ndarray:
        """a^-1 elementwise, one inversion each (cuzk.field.safegcd); zeros map to zero. Prefer batch_inverse.

        >>> from cuzk.field import Fr
        >>> Fr.to_ints(Fr.inv(Fr.from_ints([0, 1])))
        [0, 1]
        """
        return self._v.vinv(self._reduced(a))

    def batch_inverse(self, a) -> np.ndarray:
        """a^-1 elementwise by Montgomery's trick (one inversion + 3(n-1) multiplications).

        Zeros in the batch map to zero and do not affect the other entries.

        >>> from cuzk.field import Fr
        >>> Fr.to_ints(Fr.batch_inverse(Fr.from_ints([2, 0, 1])))[1:]
        [0, 1]
        """
        return self._v.batch_inverse(self._reduced(a))

    def pow(self, a, e: int) -> np.ndarray:
        """a^e elementwise for one integer exponent; e < 0 means (a^-1)^|e| (zero stays zero).

        >>> from cuzk.field import Fr
        >>> Fr.to_ints(Fr.pow(Fr.from_ints([3]), 4))
        [81]
        """
        a = self._reduced(a)
        try:
            if isinstance(e, (bool, np.bool_)):
                raise TypeError
            e = operator.index(e)
        except TypeError:
            raise FieldValueError(f"{self.name} exponent must be an integer, got {type(e).__name__}") from None
        if e < 0:
            a, e = readonly(self._v.batch_inverse(a)), -e
        return self._v.vpow(a, conv.int_to_exponent(e))

    def sqrt(self, a) -> tuple[np.ndarray, np.ndarray]:
        """Square roots: ``(ok, roots)``, ``ok`` a bool array; rows with ``ok`` False hold zero.

        >>> from cuzk.field import Fq
        >>> ok, r = Fq.sqrt(Fq.from_ints([4])); ok.tolist(), Fq.to_ints(Fq.sqr(r))
        ([True], [4])
        """
        return self._v.vsqrt(self._reduced(a))

    def eq(self, a, b) -> np.ndarray:
        """Elementwise equality (bool array).

        >>> from cuzk.field import Fr
        >>> Fr.eq(Fr.from_ints([1, 2]), Fr.from_ints([1, 3])).tolist()
        [True, False]
        """
        return self._v.veq(*self._pair(a, b))

    def is_zero(self, a) -> np.ndarray:
        """Elementwise zero test (bool array).

        >>> from cuzk.field import Fr
        >>> Fr.is_zero(Fr.from_ints([0, 1])).tolist()
        [True, False]
        """
        return self._v.vis_zero(self._reduced(a))

