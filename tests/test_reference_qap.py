"""cuzk.reference QAP and polynomials on Python ints: checked against closed forms and galois."""

import galois
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_reference_support import R, column_at, expected_matrix, fr, lagrange_at, lc_value, satisfied_r1cs

from cuzk.errors import InputError, UnsatisfiedConstraint
from cuzk.reference import QAP, ReferenceR1CS, check_witness, domain_size, evaluate_qap_at, from_r1cs
from cuzk.reference.polynomial import interpolate, poly_divmod, poly_eval, poly_mul, vanishing_poly

GF = galois.GF(R, primitive_element=7, verify=False)


def gpoly(coeffs):
    """galois polynomial from our ascending int list."""
    return galois.Poly(list(reversed(coeffs)) or [0], field=GF)


def build(rows, n_public, n_vars):
    return ReferenceR1CS(rows, n_public=n_public, n_vars=n_vars)


@settings(max_examples=25)
@given(satisfied_r1cs())
def test_domain_is_bellperson_domain(case):
    rows, n_public, n_vars, _ = case
    qap = QAP.from_r1cs(build(rows, n_public, n_vars))
    need = len(rows) + n_public + 1
    assert qap.m >= need and qap.m & (qap.m - 1) == 0 and (qap.m == 1 or qap.m // 2 < need)
    assert qap.omega == pow(7, (R - 1) // qap.m, R)  # ω = 7^((r-1)/m), generator 7
    assert pow(qap.omega, qap.m, R) == 1
    if qap.m > 1:
        assert pow(qap.omega, qap.m // 2, R) == R - 1  # primitive


@settings(max_examples=25)
@given(satisfied_r1cs())
def test_interpolation_reproduces_columns(case):
    rows, n_public, n_vars, _ = case
    qap = QAP.from_r1cs(build(rows, n_public, n_vars))
    for k, polys in enumerate((qap.u, qap.v, qap.w)):
        mat = expected_matrix(rows, n_public, n_vars, qap.m, k)
        for i in range(n_vars):
            assert len(polys[i]) <= qap.m
            assert [poly_eval(polys[i], x) for x in qap.domain] == [mat[j][i] for j in range(qap.m)]


@settings(max_examples=5)
@given(satisfied_r1cs(max_constraints=3))
def test_interpolation_matches_galois(case):
    rows, n_public, n_vars, _ = case
    qap = QAP.from_r1cs(build(rows, n_public, n_vars))
    xs = GF(qap.domain)
    for k, polys in enumerate((qap.u, qap.v, qap.w)):
        mat = expected_matrix(rows, n_public, n_vars, qap.m, k)
        for i in range(n_vars):
            col = GF([mat[j][i] for j in range(qap.m)])
            assert gpoly(polys[i]) == galois.lagrange_poly(xs, col)


def test_untouched_public_input_has_nonzero_column():
    # x_1 (public) appears in no user row; bellperson's extra row still gives it u_1 != 0
    r1cs = build([({2: 1}, {2: 1}, {2: 1})], n_public=1, n_vars=3)
    qap = QAP.from_r1cs(r1cs)
    assert qap.u[1] and not qap.v[1] and not qap.w[1]
    assert poly_eval(qap.u[1], pow(qap.omega, 2, R)) == 1  # row n_constraints + 1
    assert qap.u[2]  # the private variable keeps its user column


@settings(max_examples=25)
@given(satisfied_r1cs(), fr)
def test_evaluate_at_matches_closed_form_lagrange(case, tau):
    rows, n_public, n_vars, _ = case
    r1cs = build(rows, n_public, n_vars)
    ev = evaluate_qap_at(r1cs, tau)
    m = domain_size(len(rows), n_public)
    assert ev.z == (pow(tau, m, R) - 1) % R
    if ev.z == 0:
        return  # τ on the domain: the closed form divides by zero
    lag = lagrange_at(m, tau)
    for k, got in enumerate((ev.u, ev.v, ev.w)):
        mat = expected_matrix(rows, n_public, n_vars, m, k)
        assert list(got) == [column_at(mat, i, lag) for i in range(n_vars)]


@settings(max_examples=25)
@given(satisfied_r1cs())
def test_h_times_z_is_ab_minus_c(case):
    rows, n_public, n_vars, z = case
    qap = QAP.from_r1cs(build(rows, n_public, n_vars))
    h = qap.compute_h(z)
    assert len(h) == qap.m - 1  # m−1 coefficients, as many as H query points
    a, b, c = (sum((gpoly(p) * GF(zi) for zi, p in zip(z, polys)), gpoly([])) for polys in (qap.u, qap.v, qap.w))
    assert gpoly(h) * gpoly(vanishing_poly(qap.m)) == a * b - c


@settings(max_examples=25)
@given(satisfied_r1cs(), fr)
def test_qap_identity_at_a_point(case, tau):
    rows, n_public, n_vars, z = case
    qap = QAP.from_r1cs(build(rows, n_public, n_vars))
    ev = qap.evaluate_at(tau)
    at = lambda col: sum(zi * x for zi, x in zip(z, col)) % R  # noqa: E731
    assert (at(ev.u) * at(ev.v) - at(ev.w)) % R == poly_eval(qap.compute_h(z), tau) * ev.z % R


@settings(max_examples=25)
@given(satisfied_r1cs(max_constraints=5).filter(lambda c: c[0]), st.data())
def test_broken_row_is_reported(case, data):
    rows, n_public, n_vars, z = case
    k = data.draw(st.integers(0, len(rows) - 1))
    a, b, c = rows[k]
    c = dict(c)
    c[0] = (c.get(0, 0) + 1) % R  # ⟨C_k, z⟩ moves by exactly 1
    if not c[0]:
        del c[0]
    rows = rows[:k] + [(a, b, c)] + rows[k + 1 :]
    r1cs = build(rows, n_public, n_vars)
    assert lc_value(a, z) * lc_value(b, z) % R != lc_value(c, z)
    assert check_witness(r1cs, z) == k == check_witness(rows, z)  # bare rows work too
    with pytest.raises(UnsatisfiedConstraint, match=f"constraint {k}") as info:
        QAP.from_r1cs(r1cs).compute_h(z)
    assert info.value.index == k


@settings(max_examples=25)
@given(satisfied_r1cs())
def test_satisfied_witness_passes_check(case):
    rows, n_public, n_vars, z = case
    assert check_witness(build(rows, n_public, n_vars), z) is None
    assert check_witness(rows, z) is None


@settings(max_examples=50)
@given(st.lists(fr, max_size=9), st.lists(fr, min_size=1, max_size=5))
def test_poly_divmod_law(num, den):
    den = den[:-1] + [den[-1] or 1]  # non-zero leading coefficient
    q, rem = poly_divmod(num, den)
    assert len(rem) < len(den)
    gq, grem = divmod(gpoly(num), gpoly(den))
    assert (gpoly(q), gpoly(rem)) == (gq, grem)
    assert gpoly(poly_mul(q, den)) + gpoly(rem) == gpoly(num)


@settings(max_examples=20)
@given(st.lists(fr, min_size=1, max_size=6, unique=True), st.data())
def test_interpolate_hits_points(xs, data):
    ys = data.draw(st.lists(fr, min_size=len(xs), max_size=len(xs)))
    p = interpolate(xs, ys)
    assert len(p) <= len(xs)
    assert [poly_eval(p, x) for x in xs] == ys


def test_interpolate_rejects_repeated_points():
    with pytest.raises(ValueError, match="distinct"):
        interpolate([1, R + 1], [0, 0])


def test_from_r1cs_duck_typed_with_numpy_ints_and_pairs():
    class Fake:
        n_public, n_vars = np.int64(1), 3

        def rows_as_ints(self):
            return [([(np.int64(1), np.uint64(1))], {1: 1}, {np.int32(2): 1})]

    r1cs = from_r1cs(Fake())
    assert r1cs.constraints == (({1: 1}, {1: 1}, {2: 1}),)
    assert type(next(iter(r1cs.constraints[0][0]))) is int
    assert (r1cs.n_public, r1cs.n_vars, r1cs.n_private, r1cs.n_constraints) == (1, 3, 1, 1)
    assert QAP.from_r1cs(Fake()).m == 4


def test_zero_coefficients_are_dropped():
    assert build([({1: 0, 0: 3}, {}, {})], 1, 2).constraints == (({0: 3}, {}, {}),)


@pytest.mark.parametrize(
    "rows, n_public, n_vars, match",
    [
        ([({3: 1}, {}, {})], 1, 3, "variable 3 is not in 0..2"),
        ([({-1: 1}, {}, {})], 1, 3, "variable -1"),
        ([({1: R}, {}, {})], 1, 3, "coefficient .* of variable 1"),
        ([({1: -1}, {}, {})], 1, 3, "coefficient -1"),
        ([({1: 1.0}, {}, {})], 1, 3, "coefficient 1.0"),
        ([({True: 1}, {}, {})], 1, 3, "variable True"),
        ([([(1, 1), (1, 2)], {}, {})], 1, 3, "variable 1 appears twice"),
        ([({1: 1}, {})], 1, 3, "expected \\(A, B, C\\)"),
        ([(5, {}, {})], 1, 3, "constraint 0 A: expected a mapping"),
        ([([5], {}, {})], 1, 3, "constraint 0 A: expected \\(variable, coefficient\\) pairs"),
        ([({}, [(1, 2, 3)], {})], 1, 3, "constraint 0 B: expected"),
        ([], 2, 2, "n_vars must be at least 1 \\+ n_public = 3"),
        ([], -1, 2, "n_public must be"),
    ],
)
def test_malformed_r1cs_rejected(rows, n_public, n_vars, match):
    with pytest.raises(InputError, match=match):
        build(rows, n_public, n_vars)


@pytest.mark.parametrize(
    "z, match",
    [
        ([1, 3], "2 entries, the circuit has 3"),
        ([2, 3, 9], "ONE variable\\) must be 1"),
        ([1, 3, R], "entry 2"),
        ([1, -3, 9], "entry 1"),
        ([1, True, 9], "entry 1"),
    ],
)
def test_malformed_assignment_rejected(z, match):
    r1cs = build([({1: 1}, {1: 1}, {2: 1})], 1, 3)
    with pytest.raises(InputError, match=match):
        check_witness(r1cs, z)
    with pytest.raises(InputError, match=match):
        QAP.from_r1cs(r1cs).compute_h(z)
