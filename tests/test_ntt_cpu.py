"""The CPU NTT (cuzk.kernels.cpu.ntt) against a naive DFT on Python ints, plus its edges."""

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuzk.errors import FieldValueError
from cuzk.field import FR, Fr
from cuzk.kernels import ntt_cpu
from cuzk.curves import get as _get_curve
cpu = _get_curve("bls12_381").kernels  # BLS12-381's CPU kernels

r = FR.modulus
elements = st.one_of(st.sampled_from([0, 1, 2, r - 1, r - 2]), st.integers(0, r - 1))


def naive_dft(coeffs, generator=7, shift=1):
    """Evaluations at shift·ω^i of Σ c_j X^j, ω = FR.root_of_unity_for(log2 n, generator)."""
    n = len(coeffs)
    w = FR.root_of_unity_for(n.bit_length() - 1, generator)
    out = []
    for i in range(n):
        x = shift * pow(w, i, r) % r
        acc = 0
        for c in reversed(coeffs):  # Horner
            acc = (acc * x + c) % r
        out.append(acc)
    return out


def random_ints(n, seed):
    rng = np.random.default_rng(seed)
    return [int.from_bytes(rng.bytes(40), "little") % r for _ in range(n)]


@pytest.mark.parametrize("log_n", range(1, 9))
@pytest.mark.parametrize("generator", [7, 5])
def test_forward_matches_naive_dft(log_n, generator):
    v = random_ints(1 << log_n, seed=log_n)
    got = Fr.to_ints(cpu.ntt(Fr.from_ints(v), root_generator=generator))
    assert got == naive_dft(v, generator)


@pytest.mark.parametrize("log_n", [1, 3, 6])
def test_coset_forward_is_evaluation_at_shifted_points(log_n):
    v = random_ints(1 << log_n, seed=100 + log_n)
    for shift in (7, 5, r - 1, 123456789):
        got = Fr.to_ints(cpu.ntt(Fr.from_ints(v), shift=shift))
        assert got == naive_dft(v, 7, shift)


@settings(max_examples=25)
@given(st.integers(0, 7).flatmap(lambda k: st.lists(elements, min_size=1 << k, max_size=1 << k)),
       st.sampled_from([None, 7, 5, 2, r - 1]), st.sampled_from([7, 5]))
def test_inverse_round_trip(values, shift, generator):
    x = Fr.from_ints(values)
    y = cpu.ntt(x, shift=shift, root_generator=generator)
    assert np.array_equal(cpu.ntt(y, inverse=True, shift=shift, root_generator=generator), x)
    # and the inverse is the map's inverse from the other side too
    z = cpu.ntt(x, inverse=True, shift=shift, root_generator=generator)
    assert np.array_equal(cpu.ntt(z, shift=shift, root_generator=generator), x)


def test_inverse_matches_naive_interpolation():
    v = random_ints(16, seed=7)
    evals = naive_dft(v, 7, 7)
    assert Fr.to_ints(cpu.ntt(Fr.from_ints(evals), inverse=True, shift=7)) == v


def test_generators_5_and_7_differ():
    x = Fr.from_ints(random_ints(8, seed=3))
    assert not np.array_equal(cpu.ntt(x, root_generator=5), cpu.ntt(x, root_generator=7))


def test_length_one_and_constant_and_delta():
    x = Fr.from_ints([42])
    assert Fr.to_ints(cpu.ntt(x)) == [42] and Fr.to_ints(cpu.ntt(x, inverse=True, shift=7)) == [42]
    n = 32
    assert Fr.to_ints(cpu.ntt(Fr.from_ints([5] + [0] * (n - 1)))) == [5] * n  # constant polynomial
    assert Fr.to_ints(cpu.ntt(Fr.from_ints([0] * n))) == [0] * n


def test_input_is_not_modified():
    x = Fr.from_ints(random_ints(64, seed=5))
    before = x.copy()
    cpu.ntt(x, shift=7)
    cpu.ntt(x, inverse=True)
    assert np.array_equal(x, before)


@pytest.mark.parametrize("log_n", [12, 13, 14])
def test_parallel_equals_sequential(log_n):
    x = Fr.from_ints(random_ints(1 << log_n, seed=log_n))
    for kw in ({}, {"shift": 7}, {"inverse": True}, {"inverse": True, "shift": 7}):
        assert np.array_equal(cpu.ntt(x, threads=1, **kw), cpu.ntt(x, threads=2, **kw)), kw
    v = Fr.to_ints(x)
    y = Fr.to_ints(cpu.ntt(x, threads=2))
    w = FR.root_of_unity_for(log_n, 7)
    for i in (0, 1, 777, (1 << log_n) - 1):  # spot-check evaluations on the parallel path
        pt = pow(w, i, r)
        assert y[i] == sum(c * pow(pt, j, r) for j, c in enumerate(v)) % r


def test_concurrent_calls_share_tables_safely():
    ntt_cpu.clear_tables()
    xs = [Fr.from_ints(random_ints(1 << 10, seed=s)) for s in range(4)]
    want = [cpu.ntt(x, shift=7, threads=1) for x in xs]
    ntt_cpu.clear_tables()
    got = [None] * 4
    errors = []

    def work(k):
        try:
            for _ in range(3):
                got[k] = cpu.ntt(xs[k], shift=7, threads=1 + k % 2)
        except Exception as e:  # surfaced by the assertion below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=120)
    assert not errors
    assert all(np.array_equal(g, w) for g, w in zip(got, want))


def test_twiddle_table_layout():
    tw = cpu._ntt.twiddles(4, 7)
    w = FR.root_of_unity_for(4, 7)
    ints = Fr.to_ints(tw)
    for m in (1, 2, 4, 8):
        for j in range(m):
            assert ints[m + j] == pow(w, j * (16 // (2 * m)), r)
    assert not tw.flags.writeable


def test_h_pointwise_matches_ints():
    a, b, c = (random_ints(33, seed=s) for s in (1, 2, 3))
    z = random_ints(1, seed=4)[0]
    got = Fr.to_ints(cpu.h_pointwise(Fr.from_ints(a), Fr.from_ints(b), Fr.from_ints(c), z))
    assert got == [(x * y - w) * z % r for x, y, w in zip(a, b, c)]


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.zeros((3, 4), np.uint64), "power of two"),
        (np.zeros((0, 4), np.uint64), "power of two"),
        (np.zeros((4, 4), np.int64), "uint64"),
        (np.zeros((4, 6), np.uint64), "shape"),
        (np.zeros(4, np.uint64), "shape"),
        ([[0, 0, 0, 0]], "numpy"),
        (np.full((2, 4), 2**64 - 1, np.uint64), "values\\[0\\].*modulus"),
    ],
)
def test_bad_values_raise(bad, match):
    with pytest.raises(FieldValueError, match=match):
        cpu.ntt(bad)


@pytest.mark.parametrize("shift", [0, r, -1, 1.5, True])
def test_bad_shift_raises(shift):
    with pytest.raises(FieldValueError, match="shift"):
        cpu.ntt(Fr.from_ints([1, 2]), shift=shift)


@pytest.mark.parametrize("gen", [4, 1, 0, r])  # 4 is a square: no primitive root from it
def test_bad_generator_raises(gen):
    with pytest.raises(FieldValueError, match="root_generator"):
        cpu.ntt(Fr.from_ints([1, 2, 3, 4]), root_generator=gen)


@pytest.mark.parametrize("gen", [7.0, "7", np.float64(5)])
def test_non_int_generator_raises_even_when_its_table_is_cached(gen):
    x = Fr.from_ints([1, 2, 3, 4])
    cpu.ntt(x, root_generator=int(float(gen)))  # caches the table that 7.0 / '7' used to be served
    with pytest.raises(FieldValueError, match="root_generator"):
        cpu.ntt(x, root_generator=gen)


def test_h_pointwise_bad_inputs():
    a = Fr.from_ints([1, 2])
    with pytest.raises(FieldValueError, match="same length"):
        cpu.h_pointwise(a, a, Fr.from_ints([1]), 3)
    with pytest.raises(FieldValueError):
        cpu.h_pointwise(a, a, a, r)
    with pytest.raises(FieldValueError, match="z_inv"):
        cpu.h_pointwise(a, a, a, 2.0)
