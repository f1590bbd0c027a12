"""The circuit DSL: tracing, linear-combination handling, value-dependence detection, and random
DSL programs whose synthesized witness must equal a plain Python-int model of the program."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuzk.circuit import MAX_TERMS, Circuit, ConstraintSystem, LinearCombination, Variable, lincomb
from cuzk.circuit.gadgets import is_zero
from cuzk.errors import CircuitError, ValueDependentTraceError
from cuzk.field import FR, Fr
from cuzk.synth import Synthesizer, python_synthesize

R = FR.modulus


class Cube(Circuit):
    def define(self, cs, x, out):
        x, out = cs.private(x), cs.public(out)
        cs.assert_equal(x * x * x + x + 5, out)


def test_cube_counts_and_rows():
    s = Synthesizer(Cube(), check=True)
    r = s.r1cs
    assert (r.n_public, r.n_private, r.n_vars, r.n_constraints) == (1, 3, 5, 3)
    # z = [1, out, x, x^2, x^3]: x*x = x2; x2*x = x3; (x3 + x + 5) * 1 = out
    assert r.rows_as_ints() == [
        ({2: 1}, {2: 1}, {3: 1}),
        ({3: 1}, {2: 1}, {4: 1}),
        ({0: 5, 2: 1, 4: 1}, {0: 1}, {1: 1}),
    ]
    w = s.synthesize(x=3, out=35)
    assert Fr.to_ints(w.z) == [1, 35, 3, 9, 27] and w.public_inputs == [35]


def test_linear_ops_add_no_constraints():
    cs = ConstraintSystem()
    a, b = cs.private(1), cs.private(2)
    e = 3 * a - b + 7 - (-a) * 2
    assert isinstance(e, LinearCombination) and cs.n_constraints == 0
    assert e.terms == {a.index: 5, b.index: R - 1, 0: 7}
    assert (a - a).terms == {} and (a * 0).terms == {}
    assert (cs.constant(4) * a).terms == {a.index: 4} and cs.n_constraints == 0  # constant product is linear


def test_product_allocates_one_variable_and_row():
    cs = ConstraintSystem()
    a, b = cs.private(1), cs.private(2)
    p = (a + 1) * (b - 2)
    assert isinstance(p, Variable) and not p.is_public
    assert cs.n_constraints == 1 and cs.a[0] == {a.index: 1, 0: 1} and cs.b[0] == {b.index: 1, 0: R - 2}
    assert cs.c[0] == {p.index: 1}


def test_pow_uses_square_and_multiply():
    cs = ConstraintSystem()
    x = cs.private(2)
    x ** 5
    assert cs.n_constraints == 3  # x^2, x^4, x^5
    with pytest.raises(CircuitError):
        x ** 0


def test_wide_sums_materialize():
    cs = ConstraintSystem()
    xs = [cs.private(i) for i in range(20)]
    s = xs[0]
    for x in xs[1:]:
        s = s + x
        assert len(s.terms) <= MAX_TERMS
    assert cs.n_constraints == 20 // MAX_TERMS  # one lc * 1 = v row each time it overflowed
    m = cs.materialize(2 * xs[0] + xs[1])
    assert isinstance(m, Variable) and cs.n_constraints == 20 // MAX_TERMS + 1
    assert cs.materialize(xs[3]) is xs[3]


@pytest.mark.parametrize("steps", [64, 512])
def test_polynomial_loop_stays_linear_in_nonzeros(steps):
    class Loop(Circuit):
        def define(self, cs, x0, c):
            x, c = cs.private(x0), cs.private(c)
            for _ in range(steps):
                x = x * x + 3 * x + c
            cs.public(x)

    s = Synthesizer(Loop())
    assert s.r1cs.n_constraints <= 2 * steps + 2
    assert s.r1cs.nnz <= 25 * steps  # O(n), not O(n^2)
    # and the witness is right
    x, c = 5, 11
    for _ in range(steps):
        x = (x * x + 3 * x + c) % R
    assert s.synthesize(x0=5, c=11).public_inputs == [x]


@pytest.mark.parametrize(
    "body",
    [
        lambda cs, x: bool(cs.private(x)),
        lambda cs, x: x == 3,
        lambda cs, x: cs.private(x) < 3,
        lambda cs, x: int(x),
        lambda cs, x: range(x),
        lambda cs, x: [0, 1][cs.private(x)],
        lambda cs, x: bool(x * 2),
        lambda cs, x: cs.private(x) == cs.private(x),
    ],
)
def test_value_dependent_branching_is_refused(body):
    class Branchy(Circuit):
        def define(self, cs, x):
            body(cs, x)

    with pytest.raises(ValueDependentTraceError):
        Synthesizer(Branchy())


def test_dsl_misuse_raises_circuit_error():
    cs, other = ConstraintSystem(), ConstraintSystem()
    a = cs.private(1)
    with pytest.raises(CircuitError):
        a + other.private(1)
    with pytest.raises(CircuitError):
        a + cs.private(1).value  # an unallocated witness value cannot enter a constraint
    with pytest.raises(CircuitError):
        cs.private("x")
    with pytest.raises(CircuitError):
        cs.enforce(a, a.value, a)
    with pytest.raises(CircuitError):
        lincomb([])


def test_non_integer_operands_raise_circuit_error_and_numpy_ints_work():
    import numpy as np

    from cuzk.circuit.gadgets import or_, select, xor

    cs = ConstraintSystem()
    a, b = cs.private(1), cs.private(0)
    # floats/str/None used to surface as bare TypeErrors; cs.constant(1.5) was silently accepted
    for bad in (lambda: a + 1.5, lambda: 1.5 - a, lambda: a * 0.5, lambda: a.value + 1.5, lambda: a + None,
                lambda: cs.constant(1.5), lambda: cs.constant("3"), lambda: cs.constant(None),
                lambda: select(a, 1.0, b), lambda: lincomb([(1.5, a)])):
        with pytest.raises(CircuitError):
            bad()
    # numpy integers are ints everywhere (cs.constant(np.int64(3)) was an OverflowError)
    assert cs.constant(np.int64(3)).terms == {0: 3} and cs.constant(np.int64(-1)).terms == {0: R - 1}
    assert (a * np.uint64(3)).terms == {a.index: 3} and cs.private(np.int64(7)).cs is cs
    # boolean gadgets with an int operand (used to be AttributeError inside lincomb)
    assert or_(a, 1).terms == {0: 1} and xor(a, 1).terms == {0: 1, a.index: R - 1}
    assert select(a, 1, 2).terms == {0: 2, a.index: R - 1}


def test_input_shapes_and_define_mismatch_raise_circuit_error():
    import numpy as np

    def circuit(shapes):
        class C(Circuit):
            def input_shapes(self):
                return shapes

            def define(self, cs, x):
                cs.public(x if not isinstance(x, list) else x[0])
        return C()

    for bad in ([("x", ())], {"x": None}, {"x": -1}, {"x": (2.0,)}, {"x": "ab"}, {"x": (True,)}, {"y": ()}):
        with pytest.raises(CircuitError):
            Synthesizer(circuit(bad))
    assert Synthesizer(circuit({"x": np.int64(2)})).program.inputs == (("x", (2,)),)
    assert Synthesizer(circuit({"x": []})).program.inputs == (("x", ()),)


def test_circuit_without_define_or_with_variadic_inputs():
    class NoDefine(Circuit):
        pass

    class Variadic(Circuit):
        def define(self, cs, **kw):
            pass

    class Duck:  # not a Circuit subclass, but has define(): accepted
        def define(self, cs, x):
            cs.public(x)

    with pytest.raises(CircuitError):
        Synthesizer(NoDefine())
    with pytest.raises(CircuitError):
        Synthesizer(object())
    assert Synthesizer(Duck()).synthesize(x=4).public_inputs == [4]
    with pytest.raises(CircuitError):
        Synthesizer(Variadic())


def test_namespaces_name_constraints():
    class Named(Circuit):
        def define(self, cs, x):
            x = cs.private(x)
            with cs.namespace("outer"):
                with cs.namespace("inner"):
                    cs.assert_bool(x, name="b")
                cs.assert_equal(x, 1)
            cs.assert_equal(x, x, name="top")
            cs.assert_equal(x, x)

    assert Synthesizer(Named()).r1cs.names == ("outer/inner/b", "outer", "top", None)


# --- random DSL programs vs a Python-int model --------------------------------------------

_OPS = st.one_of(
    st.tuples(st.sampled_from(["add", "sub", "mul"]), st.integers(0, 99), st.integers(0, 99)),
    st.tuples(st.sampled_from(["scale", "addc"]), st.integers(0, 99), st.integers(-3, R + 3)),
    st.tuples(st.sampled_from(["neg", "mat", "inv", "iszero", "vmul", "vsub", "pow3", "vzero", "vdiv", "rdiv"]), st.integers(0, 99), st.integers(0, 99)),
    st.tuples(st.just("bits"), st.integers(0, 99), st.integers(1, 256)),
)


class RandomProgram(Circuit):
    def __init__(self, n_inputs, program, n_out):
        self.n_inputs, self.program, self.n_out = n_inputs, program, n_out

    def input_shapes(self):
        return {"x": (self.n_inputs,)}

    def define(self, cs, x):
        pool = [cs.private(v) for v in x]
        for op, i, j in self.program:
            a, b = pool[i % len(pool)], pool[j % len(pool)] if isinstance(j, int) and 0 <= j < 100 else None
            if op == "add":
                pool.append(a + b)
            elif op == "sub":
                pool.append(a - b)
            elif op == "mul":
                pool.append(a * b)
            elif op == "scale":
                pool.append(a * j)
            elif op == "addc":
                pool.append(a + j)
            elif op == "neg":
                pool.append(-a)
            elif op == "mat":
                pool.append(cs.materialize(a))
            elif op == "inv":
                pool.append(cs.private(a.value.inverse()))
            elif op == "iszero":
                pool.append(is_zero(cs, a))
            elif op == "vmul":
                pool.append(cs.private(a.value * b.value))
            elif op == "vsub":
                pool.append(cs.private(a.value - b.value))
            elif op == "pow3":
                pool.append(a ** 3)
            elif op == "vzero":
                pool.append(cs.private(a.value.is_zero()))
            elif op == "vdiv":
                pool.append(cs.private(a.value / b.value + 2))
            elif op == "rdiv":
                pool.append(cs.private(5 / a.value - b.value * 3))
            elif op == "bits":
                pool.append(cs.private(a.value.bits(j)[-1]))  # the top requested bit as a hint
        for lc in pool[-self.n_out:]:
            cs.public(lc)


def _model(inputs, program, n_out):
    pool = list(inputs)
    for op, i, j in program:
        a = pool[i % len(pool)]
        b = pool[j % len(pool)] if isinstance(j, int) and 0 <= j < 100 else None
        pool.append({
            "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "scale": lambda: a * j,
            "addc": lambda: a + j, "neg": lambda: -a, "mat": lambda: a, "inv": lambda: pow(a, R - 2, R),
            "iszero": lambda: int(a == 0), "vmul": lambda: a * b, "vsub": lambda: a - b, "pow3": lambda: a ** 3,
            "bits": lambda: (a >> (j - 1)) & 1, "vzero": lambda: int(a == 0),
            "vdiv": lambda: a * pow(b, R - 2, R) + 2, "rdiv": lambda: 5 * pow(a, R - 2, R) - b * 3,
        }[op]() % R)
    return pool[-n_out:]


@given(
    inputs=st.lists(st.one_of(st.integers(0, 3), st.integers(0, R - 1)), min_size=1, max_size=4),
    program=st.lists(_OPS, min_size=1, max_size=25),
    n_out=st.integers(1, 3),
)
def test_random_programs_match_python_int_model(inputs, program, n_out):
    circuit = RandomProgram(len(inputs), program, n_out)
    s = Synthesizer(circuit, check=True)  # also proves every traced row is satisfied
    w = s.synthesize(x=inputs)
    assert w.public_inputs == _model(inputs, program, n_out)
    z, a, b, c = python_synthesize(s, {"x": inputs})
    assert Fr.to_ints(w.z) == z and Fr.to_ints(w.a) == a and Fr.to_ints(w.b) == b and Fr.to_ints(w.c) == c
    # the Python-int evaluation of the traced rows is itself satisfied
    assert all(x * y % R == v for x, y, v in zip(a, b, c))


def test_packaged_cube_matches_the_local_one():
    from cuzk.circuits import Cube as PackagedCube

    s = Synthesizer(PackagedCube(), check=True)
    assert s.r1cs.digest == Synthesizer(Cube()).r1cs.digest
    for seed in (0, 3, R + 2):
        inp = PackagedCube().sample_inputs(seed)
        assert s.synthesize(**inp).public_inputs == [inp["out"]]
