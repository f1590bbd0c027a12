"""Array kernels and the zcash byte encoding of a curve group, as template text (no placeholders).

``ARRAYS`` serves every group; ``ZCASH`` only groups whose coordinates leave room for zcash's
three flag bits (``EncodingFacts.zcash_flags_fit``), i.e. BLS12-381 today.
"""

__all__ = ["ARRAYS", "ZCASH"]

ARRAYS = '''\
# ---------------------------------------------------------------- arrays
@jit_kernel(cache=True, nogil=True)
def load_affine(arr, i):
    """Point ``i`` of an affine array, shape (n, 2, *coord)."""
    a = arr[i]
    return (F.load(a, I0), F.load(a, I1))


@jit_kernel(cache=True, nogil=True)
def store_affine(arr, i, p):
    a = arr[i]
    F.store(a, I0, p[0])
    F.store(a, I1, p[1])


@jit_kernel(cache=True, nogil=True)
def load_jac(arr, i):
    """Point ``i`` of a Jacobian array, shape (n, 3, *coord)."""
    a = arr[i]
    return (F.load(a, I0), F.load(a, I1), F.load(a, I2))


@jit_kernel(cache=True, nogil=True)
def store_jac(arr, i, p):
    a = arr[i]
    F.store(a, I0, p[0])
    F.store(a, I1, p[1])
    F.store(a, I2, p[2])


@jit_kernel(cache=True, nogil=True)
def load_xyzz(arr, i):
    """Point ``i`` of an XYZZ array, shape (n, 4, *coord)."""
    a = arr[i]
    return (F.load(a, I0), F.load(a, I1), F.load(a, I2), F.load(a, I3))


@jit_kernel(cache=True, nogil=True)
def store_xyzz(arr, i, p):
    a = arr[i]
    F.store(a, I0, p[0])
    F.store(a, I1, p[1])
    F.store(a, I2, p[2])
    F.store(a, I3, p[3])


@njit(cache=True, nogil=True)
def batch_to_affine(jac, out):
    """Jacobian (n, 3, *coord) → affine ``out`` (n, 2, *coord) with ONE inversion (Montgomery's
    trick: prefix products of the non-zero Z, invert the total, walk back)."""
    n = jac.shape[0]
    prefix = np.empty((n,) + jac.shape[2:], dtype=np.uint64)
    acc = F.one()
    for i in range(n):
        F.store(prefix, i, acc)
        z = F.load(jac[i], I2)
        if not F.is_zero(z):
            acc = F.mul(acc, z)
    inv = F.inv(acc)
    for i in range(n - 1, -1, -1):
        p = load_jac(jac, i)
        if jac_is_identity(p):
            store_affine(out, i, aff_identity())
            continue
        zi = F.mul(inv, F.load(prefix, i))  # 1/Z_i
        inv = F.mul(inv, p[2])
        zi2 = F.sqr(zi)
        store_affine(out, i, (F.mul(p[0], zi2), F.mul(p[1], F.mul(zi2, zi))))


@njit(cache=True, nogil=True)
def add_many(a, b, out):
    """out[i] = a[i] + b[i]: affine inputs, Jacobian output (n, 3, *coord)."""
    for i in range(a.shape[0]):
        store_jac(out, i, jac_madd(jac_from_affine(load_affine(a, i)), load_affine(b, i)))


@njit(cache=True, nogil=True)
def neg_many(points, out):
    """out[i] = -points[i] (affine)."""
    for i in range(points.shape[0]):
        store_affine(out, i, aff_neg(load_affine(points, i)))


@njit(cache=True, nogil=True)
def mul_many(points, scalars, out):
    """out[i] = scalars[i]·points[i]: scalars (n, L) uint64 canonical, Jacobian output."""
    for i in range(points.shape[0]):
        store_jac(out, i, aff_mul(load_affine(points, i), scalars[i]))


@njit(cache=True, nogil=True)
def sum_many(points, out):
    """out[0] = Σ points[i] (affine in, XYZZ accumulator, Jacobian out (1, 3, *coord))."""
    acc = xyzz_identity()
    for i in range(points.shape[0]):
        acc = xyzz_madd(acc, load_affine(points, i))
    store_jac(out, I0, xyzz_to_jac(acc))


@njit(cache=True, nogil=True)
def on_curve_many(points, out):
    for i in range(points.shape[0]):
        out[i] = aff_is_on_curve(load_affine(points, i))


@njit(cache=True, nogil=True, parallel=True)
def in_subgroup_many(points, by_order, out):
    """out[i] = points[i] (on-curve) lies in the order-r subgroup; ``by_order`` selects r·P."""
    for i in prange(points.shape[0]):
        p = load_affine(points, i)
        out[i] = aff_in_subgroup_by_order(p) if by_order else aff_in_subgroup(p)


@njit(cache=True, nogil=True)
def first_off_curve(points, lo, hi):
    """Index of the first point of ``points[lo:hi]`` off the curve, or -1 (serial: one block of a
    batch that ``cuzk.curve.validate`` splits over Python threads)."""
    for i in range(lo, hi):
        if not aff_is_on_curve(load_affine(points, i)):
            return i
    return -1


@njit(cache=True, nogil=True)
def first_outside_subgroup(points, lo, hi):
    """Index of the first (on-curve) point of ``points[lo:hi]`` outside the order-r subgroup, or -1."""
    for i in range(lo, hi):
        if not aff_in_subgroup(load_affine(points, i)):
            return i
    return -1


'''

ZCASH = '''\
# ---------------------------------------------------------------- zcash encoding
@jit_kernel(cache=True, nogil=True)
def _decode_one(row, compressed, checked):
    flags = row[0]
    if ((flags & _C_FLAG) != _NO_BYTE) != compressed:
        return BAD_FLAGS, aff_identity()
    if (flags & _I_FLAG) != _NO_BYTE:
        # canonical infinity: only the compression/infinity flags set, every other bit zero
        if (flags & (_S_FLAG | _LOW_BITS)) != _NO_BYTE:
            return BAD_INFINITY, aff_identity()
        for k in range(1, row.shape[0]):
            if row[k] != _NO_BYTE:
                return BAD_INFINITY, aff_identity()
        return OK, aff_identity()
    if not compressed and (flags & _S_FLAG) != _NO_BYTE:
        return BAD_FLAGS, aff_identity()
    ok, x = _read_coord(row, I0, FLAG_BITS_CLEAR)
    if not ok:
        return X_NOT_CANONICAL, aff_identity()
    if compressed:
        ok, y = F.sqrt(F.add(F.mul(F.sqr(x), x), F.load(_B, I0)))
        if not ok:
            return NOT_ON_CURVE, aff_identity()
        if _y_is_larger(y) != ((flags & _S_FLAG) != _NO_BYTE):
            y = F.neg(y)
    else:
        ok, y = _read_coord(row, _Y_OFFSET, ALL_BITS)
        if not ok:
            return Y_NOT_CANONICAL, aff_identity()
        if not _satisfies_equation(x, y):
            return NOT_ON_CURVE, aff_identity()
    if checked and not aff_in_subgroup((x, y)):
        return NOT_IN_SUBGROUP, aff_identity()
    return OK, (x, y)


@njit(cache=True, nogil=True, parallel=True)
def decode_many(buf, compressed, checked, out, status):
    """Decode zcash rows ``buf`` (n, COORD_BYTES or 2·COORD_BYTES) uint8 into affine ``out``;
    ``status[i]`` gets OK or the reason row i was rejected (on-curve is always checked;
    ``checked`` adds the subgroup check)."""
    for i in prange(buf.shape[0]):
        code, p = _decode_one(buf[i], compressed, checked)
        status[i] = code
        store_affine(out, i, p)


@njit(cache=True, nogil=True)
def decode_range(buf, lo, hi, compressed, checked, out):
    """Decode rows ``buf[lo:hi]`` into ``out[lo:hi]`` serially, stopping at the first rejected row:
    returns ``(index, status)`` of that row, or ``(-1, OK)``. Rows after a rejected one are left
    unwritten. One block of a batch that ``cuzk.curve.validate`` splits over Python threads."""
    for i in range(lo, hi):
        code, p = _decode_one(buf[i], compressed, checked)
        if code != OK:
            return i, code
        store_affine(out, i, p)
    return -1, OK


@njit(cache=True, nogil=True)
def encode_many(points, compressed, buf):
    """Write affine ``points`` as zcash rows into zeroed ``buf`` (n, COORD_BYTES or 2·COORD_BYTES)."""
    for i in range(points.shape[0]):
        row = buf[i]
        p = load_affine(points, i)
        if aff_is_identity(p):
            row[0] = (_C_FLAG | _I_FLAG) if compressed else _I_FLAG
            continue
        _write_coord(row, I0, p[0])
        if compressed:
            row[0] = row[0] | _C_FLAG
            if _y_is_larger(p[1]):
                row[0] = row[0] | _S_FLAG
        else:
            _write_coord(row, _Y_OFFSET, p[1])
'''
