"""The point formulas every curve group shares (affine, Jacobian, XYZZ; a = 0), as template text.

No placeholders: the text is the same for G1 and G2 of every curve, because it names only ``F``
(the coordinate field module) and the constants the head of the module defines.
"""

__all__ = ["FORMULAS"]

FORMULAS = '''\
# ---------------------------------------------------------------- affine
@jit_kernel(cache=True, nogil=True)
def aff_identity():
    """The identity in affine form: all-zero limbs."""
    return (F.zero(), F.zero())


@jit_kernel(cache=True, nogil=True)
def aff_is_identity(p):
    return F.is_zero(p[0]) and F.is_zero(p[1])


@jit_kernel(cache=True, nogil=True)
def aff_generator():
    return (F.load(_GEN_X, I0), F.load(_GEN_Y, I0))


@jit_kernel(cache=True, nogil=True)
def aff_neg(p):
    # neg(0) = 0, so the identity maps to itself
    return (p[0], F.neg(p[1]))


@jit_kernel(cache=True, nogil=True)
def aff_eq(p, q):
    return F.eq(p[0], q[0]) and F.eq(p[1], q[1])


@jit_kernel(cache=True, nogil=True)
def _satisfies_equation(x, y):
    return F.eq(F.sqr(y), F.add(F.mul(F.sqr(x), x), F.load(_B, I0)))


@jit_kernel(cache=True, nogil=True)
def aff_is_on_curve(p):
    """y² = x³ + b, or the identity (all zeros, which is not itself a solution)."""
    if aff_is_identity(p):
        return True
    return _satisfies_equation(p[0], p[1])


# ---------------------------------------------------------------- Jacobian
@jit_kernel(cache=True, nogil=True)
def jac_identity():
    return (F.one(), F.one(), F.zero())


@jit_kernel(cache=True, nogil=True)
def jac_is_identity(p):
    return F.is_zero(p[2])


@jit_kernel(cache=True, nogil=True)
def jac_from_affine(p):
    if aff_is_identity(p):
        return jac_identity()
    return (p[0], p[1], F.one())


@jit_kernel(cache=True, nogil=True)
def jac_neg(p):
    return (p[0], F.neg(p[1]), p[2])


@jit_kernel(cache=True, nogil=True)
def jac_dbl(p):
    """2P (dbl-2009-l); Z = 0 stays 0, so the identity needs no branch."""
    X, Y, Z = p
    A = F.sqr(X)
    B = F.sqr(Y)
    C = F.sqr(B)
    D = F.dbl(F.sub(F.sub(F.sqr(F.add(X, B)), A), C))
    E = F.add(F.dbl(A), A)
    X3 = F.sub(F.sqr(E), F.dbl(D))
    Y3 = F.sub(F.mul(E, F.sub(D, X3)), F.dbl(F.dbl(F.dbl(C))))
    Z3 = F.dbl(F.mul(Y, Z))
    return (X3, Y3, Z3)


@jit_kernel(cache=True, nogil=True)
def jac_add(p, q):
    """P + Q, both Jacobian (add-2007-bl)."""
    if jac_is_identity(p):
        return q
    if jac_is_identity(q):
        return p
    X1, Y1, Z1 = p
    X2, Y2, Z2 = q
    Z1Z1 = F.sqr(Z1)
    Z2Z2 = F.sqr(Z2)
    U1 = F.mul(X1, Z2Z2)
    U2 = F.mul(X2, Z1Z1)
    S1 = F.mul(F.mul(Y1, Z2), Z2Z2)
    S2 = F.mul(F.mul(Y2, Z1), Z1Z1)
    H = F.sub(U2, U1)
    R = F.dbl(F.sub(S2, S1))
    if F.is_zero(H):  # same x: P == Q (double) or P == -Q (identity)
        if F.is_zero(R):
            return jac_dbl(p)
        return jac_identity()
    I = F.sqr(F.dbl(H))
    J = F.mul(H, I)
    V = F.mul(U1, I)
    X3 = F.sub(F.sub(F.sqr(R), J), F.dbl(V))
    Y3 = F.sub(F.mul(R, F.sub(V, X3)), F.dbl(F.mul(S1, J)))
    Z3 = F.mul(F.sub(F.sub(F.sqr(F.add(Z1, Z2)), Z1Z1), Z2Z2), H)
    return (X3, Y3, Z3)


@jit_kernel(cache=True, nogil=True)
def jac_madd(p, q):
    """P + Q, P Jacobian, Q affine (madd-2007-bl)."""
    if aff_is_identity(q):
        return p
    if jac_is_identity(p):
        return (q[0], q[1], F.one())
    X1, Y1, Z1 = p
    Z1Z1 = F.sqr(Z1)
    U2 = F.mul(q[0], Z1Z1)
    S2 = F.mul(F.mul(q[1], Z1), Z1Z1)
    H = F.sub(U2, X1)
    R = F.dbl(F.sub(S2, Y1))
    if F.is_zero(H):
        if F.is_zero(R):
            return jac_dbl(p)
        return jac_identity()
    HH = F.sqr(H)
    I = F.dbl(F.dbl(HH))
    J = F.mul(H, I)
    V = F.mul(X1, I)
    X3 = F.sub(F.sub(F.sqr(R), J), F.dbl(V))
    Y3 = F.sub(F.mul(R, F.sub(V, X3)), F.dbl(F.mul(Y1, J)))
    Z3 = F.sub(F.sub(F.sqr(F.add(Z1, H)), Z1Z1), HH)
    return (X3, Y3, Z3)


@jit_kernel(cache=True, nogil=True)
def jac_eq(p, q):
    """Projective equality: X1·Z2² = X2·Z1² and Y1·Z2³ = Y2·Z1³."""
    ip = jac_is_identity(p)
    iq = jac_is_identity(q)
    if ip or iq:
        return ip and iq
    Z1Z1 = F.sqr(p[2])
    Z2Z2 = F.sqr(q[2])
    if not F.eq(F.mul(p[0], Z2Z2), F.mul(q[0], Z1Z1)):
        return False
    return F.eq(F.mul(p[1], F.mul(Z2Z2, q[2])), F.mul(q[1], F.mul(Z1Z1, p[2])))


@jit_kernel(cache=True, nogil=True)
def jac_eq_affine(p, q):
    ip = jac_is_identity(p)
    iq = aff_is_identity(q)
    if ip or iq:
        return ip and iq
    Z1Z1 = F.sqr(p[2])
    return F.eq(p[0], F.mul(q[0], Z1Z1)) and F.eq(p[1], F.mul(q[1], F.mul(Z1Z1, p[2])))


@jit_kernel(cache=True, nogil=True)
def jac_to_affine(p):
    """One inversion; the identity maps to all-zero limbs."""
    if jac_is_identity(p):
        return aff_identity()
    zi = F.inv(p[2])
    zi2 = F.sqr(zi)
    return (F.mul(p[0], zi2), F.mul(p[1], F.mul(zi2, zi)))


@jit_kernel(cache=True, nogil=True)
def jac_mul(p, k):
    """k·P by double-and-add, ``k`` a 1-D uint64 array of little-endian canonical limbs."""
    acc = jac_identity()
    for i in range(k.shape[0] - 1, -1, -1):
        w = k[i]
        for j in range(63, -1, -1):
            if not jac_is_identity(acc):  # skips the leading zero bits
                acc = jac_dbl(acc)
            if (w >> np.uint64(j)) & _ONE:
                acc = jac_add(acc, p)
    return acc


@jit_kernel(cache=True, nogil=True)
def aff_mul(p, k):
    """k·P for affine P (mixed additions); returns Jacobian."""
    acc = jac_identity()
    for i in range(k.shape[0] - 1, -1, -1):
        w = k[i]
        for j in range(63, -1, -1):
            if not jac_is_identity(acc):  # skips the leading zero bits
                acc = jac_dbl(acc)
            if (w >> np.uint64(j)) & _ONE:
                acc = jac_madd(acc, p)
    return acc


# ---------------------------------------------------------------- XYZZ
@jit_kernel(cache=True, nogil=True)
def xyzz_identity():
    return (F.one(), F.one(), F.zero(), F.zero())


@jit_kernel(cache=True, nogil=True)
def xyzz_is_identity(p):
    return F.is_zero(p[2])


@jit_kernel(cache=True, nogil=True)
def xyzz_from_affine(p):
    if aff_is_identity(p):
        return xyzz_identity()
    return (p[0], p[1], F.one(), F.one())


@jit_kernel(cache=True, nogil=True)
def xyzz_neg(p):
    return (p[0], F.neg(p[1]), p[2], p[3])


@jit_kernel(cache=True, nogil=True)
def xyzz_dbl(p):
    """2P (dbl-2008-s-1); ZZ = ZZZ = 0 stays 0."""
    X1, Y1, ZZ1, ZZZ1 = p
    U = F.dbl(Y1)
    V = F.sqr(U)
    W = F.mul(U, V)
    S = F.mul(X1, V)
    XX = F.sqr(X1)
    M = F.add(F.dbl(XX), XX)
    X3 = F.sub(F.sqr(M), F.dbl(S))
    Y3 = F.sub(F.mul(M, F.sub(S, X3)), F.mul(W, Y1))
    return (X3, Y3, F.mul(V, ZZ1), F.mul(W, ZZZ1))


@jit_kernel(cache=True, nogil=True)
def xyzz_mdbl(q):
    """2Q for affine Q, result XYZZ (mdbl-2008-s-1)."""
    if aff_is_identity(q):
        return xyzz_identity()
    U = F.dbl(q[1])
    V = F.sqr(U)
    W = F.mul(U, V)
    S = F.mul(q[0], V)
    XX = F.sqr(q[0])
    M = F.add(F.dbl(XX), XX)
    X3 = F.sub(F.sqr(M), F.dbl(S))
    Y3 = F.sub(F.mul(M, F.sub(S, X3)), F.mul(W, q[1]))
    return (X3, Y3, V, W)


@jit_kernel(cache=True, nogil=True)
def xyzz_add(p, q):
    """P + Q, both XYZZ (add-2008-s)."""
    if xyzz_is_identity(p):
        return q
    if xyzz_is_identity(q):
        return p
    X1, Y1, ZZ1, ZZZ1 = p
    X2, Y2, ZZ2, ZZZ2 = q
    U1 = F.mul(X1, ZZ2)
    U2 = F.mul(X2, ZZ1)
    S1 = F.mul(Y1, ZZZ2)
    S2 = F.mul(Y2, ZZZ1)
    P = F.sub(U2, U1)
    R = F.sub(S2, S1)
    if F.is_zero(P):
        if F.is_zero(R):
            return xyzz_dbl(p)
        return xyzz_identity()
    PP = F.sqr(P)
    PPP = F.mul(P, PP)
    Q = F.mul(U1, PP)
    X3 = F.sub(F.sub(F.sqr(R), PPP), F.dbl(Q))
    Y3 = F.sub(F.mul(R, F.sub(Q, X3)), F.mul(S1, PPP))
    return (X3, Y3, F.mul(F.mul(ZZ1, ZZ2), PP), F.mul(F.mul(ZZZ1, ZZZ2), PPP))


@jit_kernel(cache=True, nogil=True)
def xyzz_madd(p, q):
    """P + Q, P XYZZ, Q affine (madd-2008-s)."""
    if aff_is_identity(q):
        return p
    if xyzz_is_identity(p):
        return (q[0], q[1], F.one(), F.one())
    X1, Y1, ZZ1, ZZZ1 = p
    P = F.sub(F.mul(q[0], ZZ1), X1)
    R = F.sub(F.mul(q[1], ZZZ1), Y1)
    if F.is_zero(P):
        if F.is_zero(R):
            return xyzz_mdbl(q)
        return xyzz_identity()
    PP = F.sqr(P)
    PPP = F.mul(P, PP)
    Q = F.mul(X1, PP)
    X3 = F.sub(F.sub(F.sqr(R), PPP), F.dbl(Q))
    Y3 = F.sub(F.mul(R, F.sub(Q, X3)), F.mul(Y1, PPP))
    return (X3, Y3, F.mul(ZZ1, PP), F.mul(ZZZ1, PPP))


@jit_kernel(cache=True, nogil=True)
def xyzz_eq(p, q):
    ip = xyzz_is_identity(p)
    iq = xyzz_is_identity(q)
    if ip or iq:
        return ip and iq
    return F.eq(F.mul(p[0], q[2]), F.mul(q[0], p[2])) and F.eq(F.mul(p[1], q[3]), F.mul(q[1], p[3]))


@jit_kernel(cache=True, nogil=True)
def xyzz_to_affine(p):
    """x = X/ZZ, y = Y/ZZZ with one inversion of ZZ·ZZZ."""
    if xyzz_is_identity(p):
        return aff_identity()
    t = F.inv(F.mul(p[2], p[3]))
    return (F.mul(p[0], F.mul(t, p[3])), F.mul(p[1], F.mul(t, p[2])))


@jit_kernel(cache=True, nogil=True)
def xyzz_to_jac(p):
    """Jacobian with Z = ZZZ: X·ZZ², Y·ZZZ² (no inversion)."""
    if xyzz_is_identity(p):
        return jac_identity()
    return (F.mul(p[0], F.sqr(p[2])), F.mul(p[1], F.sqr(p[3])), p[3])


@jit_kernel(cache=True, nogil=True)
def jac_to_xyzz(p):
    if jac_is_identity(p):
        return xyzz_identity()
    ZZ = F.sqr(p[2])
    return (p[0], p[1], ZZ, F.mul(ZZ, p[2]))


'''
