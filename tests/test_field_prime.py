"""Fr and Fq array API (and through it the generated kernels) against Python ints and galois."""

import galois
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuzk.errors import FieldValueError
from cuzk.field import FQ, FR, Fq, Fr

FIELDS = {"fr": (Fr, FR, 7), "fq": (Fq, FQ, 2)}


def edge_values(p: int) -> list[int]:
    """0, 1, p-1 and values around every limb border and 2^128, reduced into [0, p)."""
    cands = {0, 1, 2, 3, p - 1, p - 2, (p - 1) // 2, (p + 1) // 2, 2**64 - 1, 2**64, 2**128 - 1, 2**128, 2**128 + 1}
    for k in range(1, 7):
        cands |= {2 ** (64 * k) - 1, 2 ** (64 * k), 2 ** (64 * k) + 1, 2 ** (64 * k - 1), 2 ** (64 * k - 1) - 1}
    return sorted(c for c in cands if 0 <= c < p)


@pytest.fixture(params=sorted(FIELDS), scope="module")
def field(request):
    F, params, gen = FIELDS[request.param]
    gf = galois.GF(params.modulus, primitive_element=gen, verify=False)
    return F, params.modulus, gf


def elements(p):
    return st.one_of(st.integers(0, p - 1), st.sampled_from(edge_values(p)))


def lists(p, min_size=1):
    return st.lists(elements(p), min_size=min_size, max_size=24)


@given(data=st.data())
def test_binary_ops_match_python_and_galois(field, data):
    F, p, gf = field
    xs = data.draw(lists(p))
    ys = data.draw(st.lists(elements(p), min_size=len(xs), max_size=len(xs)))
    a, b = F.from_ints(xs), F.from_ints(ys)
    assert F.to_ints(F.add(a, b)) == [(x + y) % p for x, y in zip(xs, ys)]
    assert F.to_ints(F.sub(a, b)) == [(x - y) % p for x, y in zip(xs, ys)]
    prod = F.to_ints(F.mul(a, b))
    assert prod == [x * y % p for x, y in zip(xs, ys)]
    assert prod == [int(v) for v in gf(xs) * gf(ys)]
    assert F.eq(a, b).tolist() == [x == y for x, y in zip(xs, ys)]


@given(data=st.data())
def test_unary_ops_match_python_and_galois(field, data):
    F, p, gf = field
    xs = data.draw(lists(p))
    a = F.from_ints(xs)
    assert F.to_ints(F.sqr(a)) == [x * x % p for x in xs]
    assert F.to_ints(F.neg(a)) == [-x % p for x in xs]
    assert F.is_zero(a).tolist() == [x == 0 for x in xs]
    invs = F.to_ints(F.inv(a))
    assert invs == [pow(x, -1, p) if x else 0 for x in xs]
    nz = [x for x in xs if x]
    if nz:
        assert [v for v in invs if v] == [int(v) for v in gf(nz) ** -1]


@given(data=st.data())
def test_pow_matches_python(field, data):
    F, p, gf = field
    xs = data.draw(lists(p))
    e = data.draw(st.one_of(st.integers(0, 2**70), st.sampled_from([0, 1, 2, p - 2, p - 1, p, 2**64 - 1, 2**64])))
    assert F.to_ints(F.pow(F.from_ints(xs), e)) == [pow(x, e, p) for x in xs]
    assert F.to_ints(F.pow(F.from_ints(xs), e % 1000)) == [int(v) for v in gf(xs) ** (e % 1000)]


def test_pow_negative_exponent(field):
    F, p, _ = field
    xs = [0, 1, 2, p - 1, 12345]
    assert F.to_ints(F.pow(F.from_ints(xs), -3)) == [pow(x, -3, p) if x else 0 for x in xs]


@given(data=st.data())
def test_sqrt_matches_euler_criterion(field, data):
    F, p, gf = field
    xs = data.draw(lists(p))
    sq = [x * x % p for x in xs]
    ok, r = F.sqrt(F.from_ints(sq + xs))
    roots = F.to_ints(r)
    assert ok[: len(xs)].all()
    assert [v * v % p for v in roots[: len(xs)]] == sq
    for x, good, root in zip(xs, ok[len(xs) :], roots[len(xs) :]):
        is_sq = x == 0 or pow(x, (p - 1) // 2, p) == 1
        assert good == is_sq == bool(gf([x]).is_square()[0])
        assert root * root % p == x if good else root == 0


def test_sqrt_of_generator_powers(field):
    # For Fr, g^(2k) exercise every depth of the Tonelli-Shanks loop; odd powers are non-residues.
    F, p, _ = field
    g = 7 if p == FR.modulus else 2
    xs = [pow(g, 2 * k * ((p - 1) >> 32 if p == FR.modulus else 1), p) for k in range(1, 40)]
    ok, r = F.sqrt(F.from_ints(xs))
    assert ok.all() and [v * v % p for v in F.to_ints(r)] == xs
    ok, _ = F.sqrt(F.from_ints([g, pow(g, 3, p)]))
    assert not ok.any()


@given(data=st.data())
def test_batch_inverse_with_zeros(field, data):
    F, p, _ = field
    xs = data.draw(st.lists(st.one_of(st.just(0), elements(p)), min_size=0, max_size=30))
    got = F.to_ints(F.batch_inverse(F.from_ints(xs)))
    assert got == [pow(x, -1, p) if x else 0 for x in xs]


def test_batch_inverse_all_zero_and_empty(field):
    F, _, _ = field
    assert F.to_ints(F.batch_inverse(F.zeros(5))) == [0] * 5
    assert F.batch_inverse(F.zeros(0)).shape == (0, F.limbs)


@given(data=st.data())
def test_int_and_bytes_round_trips(field, data):
    F, p, _ = field
    xs = data.draw(lists(p, min_size=0))
    limbs = F.ints_to_limbs(xs)
    assert limbs.dtype == np.uint64 and limbs.shape == (len(xs), F.limbs)
    assert F.limbs_to_ints(limbs) == xs
    assert F.limbs_to_ints(F.from_mont(F.to_mont(limbs))) == xs
    a = F.from_ints(xs)
    for order in ("big", "little"):
        enc = F.to_bytes(a, order)
        assert enc.shape == (len(xs), F.nbytes)
        assert enc.tobytes() == b"".join(x.to_bytes(F.nbytes, order) for x in xs)
        assert F.to_ints(F.from_bytes(enc.tobytes(), order)) == xs
        assert F.to_ints(F.from_bytes(enc, order)) == xs


def test_montgomery_form_is_x_times_r(field):
    F, p, _ = field
    xs = edge_values(p)
    r = 2 ** (64 * F.limbs) % p
    assert F.limbs_to_ints(F.from_ints(xs)) == [x * r % p for x in xs]
    assert F.to_ints(F.one(3)) == [1, 1, 1]


def test_random_is_reduced_and_seeded(field):
    F, p, _ = field
    a = F.random(500, np.random.default_rng(5))
    b = F.random(500, np.random.default_rng(5))
    assert (a == b).all() and a.shape == (500, F.limbs)
    vals = F.to_ints(a)  # to_ints rejects unreduced rows
    assert len(set(vals)) == 500 and max(vals) > p // 2


def test_bad_inputs_raise_field_value_error(field):
    F, p, _ = field
    good = F.from_ints([1, 2])
    with pytest.raises(FieldValueError, match="< "):
        F.from_ints([p])
    with pytest.raises(FieldValueError):
        F.from_ints([-1])
    with pytest.raises(FieldValueError, match="integer"):
        F.from_ints([1.5])
    with pytest.raises(FieldValueError, match="integer"):
        F.from_ints([True])
    with pytest.raises(FieldValueError, match="sequence"):
        F.from_ints(5)
    with pytest.raises(FieldValueError, match="dtype uint64"):
        F.add(good.astype(np.int64), good)
    with pytest.raises(FieldValueError, match="shape"):
        F.mul(good[:, :-1].copy(), good[:, :-1].copy())
    with pytest.raises(FieldValueError, match="equal shapes"):
        F.sub(good, good[:1])
    with pytest.raises(FieldValueError, match="ndarray"):
        F.sqr([[1, 2, 3, 4]])
    big = np.full((1, F.limbs), 2**64 - 1, dtype=np.uint64)
    with pytest.raises(FieldValueError, match="not reduced"):
        F.to_ints(big)
    with pytest.raises(FieldValueError, match="not canonical"):
        F.from_bytes(b"\xff" * F.nbytes)
    with pytest.raises(FieldValueError, match="multiple"):
        F.from_bytes(b"\x00" * (F.nbytes + 1))
    with pytest.raises(FieldValueError, match="byteorder"):
        F.to_bytes(good, "middle")
    with pytest.raises(FieldValueError, match="Generator"):
        F.random(3, 42)
    with pytest.raises(FieldValueError, match="exponent"):
        F.pow(good, 1.0)


def test_unreduced_operands_and_bad_counts_raise(field):
    # every operation used to compute with rows >= p: add/mul/is_zero gave silently wrong answers
    F, p, _ = field
    p_row = F.ints_to_limbs([p - 1]) + np.eye(1, F.limbs, dtype=np.uint64)  # the limbs of p itself
    tied = F.ints_to_limbs([p - 1])  # top limb equal to p's: the slow path, still reduced
    assert F.is_zero(tied).tolist() == [False] and F.to_ints(F.add(tied, F.zeros(1))) == [F.to_ints(tied)[0]]
    big = np.full((2, F.limbs), 2**64 - 1, dtype=np.uint64)
    for bad in (p_row, big):
        for op in (F.sqr, F.neg, F.inv, F.batch_inverse, F.sqrt, F.is_zero, lambda a: F.pow(a, 3)):
            with pytest.raises(FieldValueError, match="not reduced"):
                op(bad)
        for op in (F.add, F.sub, F.mul, F.eq):
            with pytest.raises(FieldValueError, match="not reduced"):
                op(bad, F.zeros(bad.shape[0]))
    with pytest.raises(FieldValueError, match="exponent"):
        F.pow(F.one(1), True)
    for n in (-1, 2.0, "2", True, None):
        for make in (F.zeros, F.one, lambda k: F.random(k, np.random.default_rng(0))):
            with pytest.raises(FieldValueError, match="count"):
                make(n)
    for values in (None, np.array(5), {1, 2}, {1: 2}):
        with pytest.raises(FieldValueError, match="sequence"):
            F.from_ints(values)


def test_non_contiguous_input_is_accepted(field):
    F, p, _ = field
    a = F.from_ints(list(range(10)))
    assert F.to_ints(F.add(a[::2], a[1::2])) == [4 * i + 1 for i in range(5)]


def test_bulk_random_against_python(field):
    # Many seeded random operands: exercises the rare final-subtraction and carry paths of
    # the generated kernels far more often than the hypothesis examples do.
    F, p, _ = field
    rng = np.random.default_rng(11)
    a, b = F.random(4000, rng), F.random(4000, rng)
    xs, ys = F.to_ints(a), F.to_ints(b)
    assert F.to_ints(F.mul(a, b)) == [x * y % p for x, y in zip(xs, ys)]
    assert F.to_ints(F.sqr(a)) == [x * x % p for x in xs]
    assert F.to_ints(F.add(a, b)) == [(x + y) % p for x, y in zip(xs, ys)]
    assert F.to_ints(F.sub(a, b)) == [(x - y) % p for x, y in zip(xs, ys)]
    assert F.to_ints(F.batch_inverse(a)) == [pow(x, -1, p) for x in xs]
