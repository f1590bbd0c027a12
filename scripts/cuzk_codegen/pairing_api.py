"""Template text of the Python half of every curve's ``pairing.py``: input checks, prepared G2 lines, API.

Placeholders: L, CURVE_PARAMS, G1_EQ, G2_EQ, N_LINES, FINAL_EXP, MILLER_NOTE.
"""

import string

__all__ = ["API"]

API = string.Template('''\
# ---------------------------------------------------------------- Python API
def _check_point(arr, shape, name) -> np.ndarray:
    if not isinstance(arr, np.ndarray) or arr.dtype != np.uint64 or arr.shape != shape:
        raise FieldValueError(
            f"{name} point must be a uint64 array of shape {shape} (affine Montgomery), got "
            f"{getattr(arr, 'dtype', type(arr).__name__)} {getattr(arr, 'shape', '')}"
        )
    arr = np.array(arr, dtype=np.uint64, order="C")  # a writable C copy: one compiled specialization
    for row in arr.reshape(-1, _L):
        if int.from_bytes(row.astype("<u8").tobytes(), "little") >= _P:
            raise FieldValueError(f"{name} point has a coordinate limb row >= p (not a reduced Fq element)")
    return arr


def _is_infinity(arr: np.ndarray) -> bool:
    return not arr.any()


@attrs.frozen(eq=False)
class G2Prepared:
    """The Miller-loop line coefficients of one G2 point (what a verifying key keeps for γ, δ, β).

    Attributes:
        lines: ``(N_LINES, 3, 2, ${L})`` uint64 Montgomery, read-only: per loop step the
            (c0, c1, c4) Fq2 coefficients of the line, before evaluation at a G1 point.
        is_infinity: Q was the point at infinity (it then contributes 1 to every product).
    """

    lines: np.ndarray
    is_infinity: bool


def prepare_g2(q: np.ndarray) -> G2Prepared:
    """Precompute the lines of the Miller loop for Q (reusable across pairings).

    Args:
        q: affine G2 point, ``(2, 2, ${L})`` uint64 Montgomery; all zeros = infinity.

    Returns:
        A :class:`G2Prepared` to pass wherever a G2 point is accepted.

    Raises:
        FieldValueError: wrong shape/dtype or an unreduced coordinate.
        NotOnCurveError: Q is not on ${G2_EQ}.

    Example:
        >>> from cuzk.curve.coords import mont_array
        >>> from ${CURVE_PARAMS} import G2_PARAMS
        >>> prepare_g2(mont_array(G2_PARAMS.generator, 2, FQ)).lines.shape
        (${N_LINES}, 3, 2, ${L})
    """
    q = _check_point(q, _G2_SHAPE, "G2")
    lines = np.zeros(_LINES_SHAPE, dtype=np.uint64)
    inf = _is_infinity(q)
    if not inf:
        if not _g2_on_curve(q):
            raise NotOnCurveError("G2 point is not on the curve ${G2_EQ}")
        _prepare_kernel(q, lines)
    lines.flags.writeable = False
    return G2Prepared(lines=lines, is_infinity=inf)


def _gather(pairs) -> tuple[np.ndarray, np.ndarray]:
    ps, lines = [], []
    if isinstance(pairs, (np.ndarray, G2Prepared)) or not isinstance(pairs, Iterable):  # an array iterated its rows
        raise FieldValueError(f"pairs must be an iterable of (G1 point, G2 point) tuples, got {type(pairs).__name__}")
    for item in pairs:
        try:
            p, q = item
        except (TypeError, ValueError):
            raise FieldValueError(f"pairs must hold (G1 point, G2 point) tuples, got {type(item).__name__}") from None
        p = _check_point(p, _G1_SHAPE, "G1")
        p_inf = _is_infinity(p)
        if not p_inf and not _g1_on_curve(p):
            raise NotOnCurveError("G1 point is not on the curve ${G1_EQ}")
        if not isinstance(q, G2Prepared):
            q = prepare_g2(q)
        if p_inf or q.is_infinity:
            continue  # e(O, Q) = e(P, O) = 1
        ps.append(p)
        lines.append(q.lines)
    if not ps:
        return np.zeros((0,) + _G1_SHAPE, np.uint64), np.zeros((0,) + _LINES_SHAPE, np.uint64)
    return np.stack(ps), np.stack(lines)


def multi_miller_loop(pairs: Iterable) -> np.ndarray:
    """prod_i f_{LOOP,Q_i}(P_i) (${MILLER_NOTE}), before the final exponentiation.

    Args:
        pairs: iterable of ``(P, Q)``: P a ``(2, ${L})`` G1 array, Q a ``(2, 2, ${L})`` G2 array or
            a :class:`G2Prepared`.

    Returns:
        ``(2, 3, 2, ${L})`` uint64 Fq12; only meaningful after :func:`final_exponentiation`.

    Raises:
        FieldValueError, NotOnCurveError: as :func:`prepare_g2`, for either point.

    Example:
        >>> fq12.to_ints(multi_miller_loop([]))[0][0]     # empty product
        (1, 0)
    """
    ps, lines = _gather(pairs)
    return _miller_kernel(ps, lines)


def final_exponentiation(f: np.ndarray) -> np.ndarray:
    """${FINAL_EXP} for a ``(2, 3, 2, ${L})`` Fq12 array.

    Example:
        >>> fq12.to_ints(final_exponentiation(multi_miller_loop([])))[0][0]
        (1, 0)
    """
    fq12.to_ints(f)  # validates shape, dtype and reduction
    return _final_kernel(np.array(f, dtype=np.uint64, order="C"))


def pairing(p: np.ndarray, q) -> np.ndarray:
    """e(P, Q) as a ``(2, 3, 2, ${L})`` uint64 Montgomery Fq12 array (equal arrays = equal values).

    Args:
        p: affine G1 point ``(2, ${L})``; q: affine G2 point ``(2, 2, ${L})`` or :class:`G2Prepared`.

    Raises:
        FieldValueError, NotOnCurveError: as :func:`prepare_g2`.

    Example:
        >>> from cuzk.curve.coords import mont_array
        >>> from ${CURVE_PARAMS} import G1_PARAMS, G2_PARAMS
        >>> P, Q = mont_array(G1_PARAMS.generator, 1, FQ), mont_array(G2_PARAMS.generator, 2, FQ)
        >>> e = pairing(P, Q)
        >>> e.shape, bool(np.array_equal(pairing(P, prepare_g2(Q)), e)), bool(np.array_equal(e, _GT_ONE))
        ((2, 3, 2, ${L}), True, False)
    """
    return _final_kernel(multi_miller_loop([(p, q)]))


def pairing_check(pairs: Iterable) -> bool:
    """True iff prod_i e(P_i, Q_i) == 1, with one shared Miller loop and final exponentiation.

    This is the Groth16 verification equation, e.g. ``[(A, B), (-alpha, beta), (-acc, gamma),
    (-C, delta)]`` with β, γ, δ as :class:`G2Prepared`.

    Args:
        pairs: iterable of ``(P, Q)`` as in :func:`multi_miller_loop`; empty means True.

    Example:
        >>> from cuzk.curve.coords import mont_array
        >>> from ${CURVE_PARAMS} import G1_PARAMS, G2_PARAMS
        >>> P = mont_array(G1_PARAMS.generator, 1, FQ); Q = mont_array(G2_PARAMS.generator, 2, FQ)
        >>> x, y = G2_PARAMS.generator
        >>> negQ = mont_array([x, tuple(-c % FQ.modulus for c in y)], 2, FQ)
        >>> pairing_check([(P, Q), (P, negQ)]), pairing_check([(P, Q)])
        (True, False)
    """
    return bool(np.array_equal(_final_kernel(multi_miller_loop(pairs)), _GT_ONE))
''')
