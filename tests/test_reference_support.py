"""Hypothesis strategies and independent formulas shared by the reference tests (no tests here).

Nothing here calls cuzk.reference's QAP code: the expected values are computed from the raw
rows with the closed-form Lagrange basis, so the tests compare two different derivations.
"""

from hypothesis import strategies as st

from cuzk.field import FR

__all__ = ["R", "fr", "lc_value", "satisfied_r1cs", "expected_matrix", "lagrange_at", "column_at"]

R = FR.modulus

# edge values first, then anything in the field
fr = st.one_of(st.sampled_from([0, 1, 2, R - 1]), st.integers(0, R - 1))


def lc_value(lc, z):
    return sum(c * z[i] for i, c in lc.items()) % R


@st.composite
def satisfied_r1cs(draw, max_public=3, max_private=3, max_constraints=5):
    """(rows, n_public, n_vars, z): random sparse rows made to hold by adjusting C on ONE."""
    n_public = draw(st.integers(0, max_public))
    n_vars = 1 + n_public + draw(st.integers(0, max_private))
    z = [1] + [draw(fr) for _ in range(n_vars - 1)]
    lc = st.dictionaries(st.integers(0, n_vars - 1), fr.filter(bool), max_size=3)
    rows = []
    for _ in range(draw(st.integers(0, max_constraints))):
        a, b, c = draw(lc), draw(lc), dict(draw(lc))
        fix = (lc_value(a, z) * lc_value(b, z) - lc_value(c, z) + c.get(0, 0)) % R
        c.pop(0, None)
        if fix:
            c[0] = fix
        rows.append((a, b, c))
    return rows, n_public, n_vars, z


def expected_matrix(rows, n_public, n_vars, m, k):
    """Matrix k (0 = A, 1 = B, 2 = C) of bellperson's QAP as a dense m × n_vars list."""
    mat = [[0] * n_vars for _ in range(m)]
    for j, row in enumerate(rows):
        for i, c in row[k].items():
            mat[j][i] = c % R
    if k == 0:  # one row x_i · 0 = 0 per input, ONE included, after the user's rows
        for i in range(n_public + 1):
            mat[len(rows) + i][i] = 1
    return mat


def lagrange_at(m, tau):
    """[L_j(τ)] over {ω^j}: L_j(τ) = ω^j·(τ^m − 1) / (m·(τ − ω^j)) for τ off the domain."""
    omega = pow(FR.generator, (R - 1) // m, R)
    zt = (pow(tau, m, R) - 1) % R
    out = []
    for j in range(m):
        wj = pow(omega, j, R)
        out.append(wj * zt * pow(m * (tau - wj), -1, R) % R)
    return out


def column_at(mat, i, lag):
    return sum(mat[j][i] * lag[j] for j in range(len(mat))) % R
