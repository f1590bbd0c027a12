"""cuzk.reference Groth16: keys and proofs against the toxic waste's discrete logs, and the verifier.

Knowing the toxic waste, every key and proof point is (scalar)·generator for a scalar the test
computes from the raw rows with closed-form Lagrange evaluations (test_reference_support), so
setup and prover are checked point by point, not only through the pairing.
"""

import attrs
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_reference_support import R, column_at, expected_matrix, fr, lagrange_at, satisfied_r1cs

from cuzk.field import FQ
from cuzk.errors import InputError, NotInSubgroupError, UnsatisfiedConstraint
from cuzk.reference import (
    ReferenceR1CS,
    ToxicWaste,
    create_proof,
    from_r1cs,
    generate_parameters,
    proof_to_bytes,
    prove,
    ref_curve,
    setup,
    verify,
)
from cuzk.reference import points as P

q = FQ.modulus

TOXIC = ToxicWaste(
    tau=0x1234567890ABCDEF1234567890ABCDEF1234567890ABCDEF1234567890ABCDE,
    alpha=0x2B1E7C3A5F9D0E4C6A8B2D1F3E5C7A9B0D2F4E6C8A1B3D5F7E9C0A2B4D6F8E1,
    beta=0x3C2F8D4B6E0A1F5D7B9C3E2A4F6D8B0C1E3A5F7D9B2C4E6A8F0D1B3C5E7A9F2,
    gamma=0x4D3A9E5C7F1B2A6E8C0D4F3B5A7E9C1D2F4B6A8E0C3D5F7B9A1C2E4D6F8A0B3,
    delta=0x5E4B0F6D8A2C3B7F9D1E5A4C6B8F0D2E3A5C7B9F1D4E6A8C0B2D3F5E7A9C1D4,
)
R_BLIND, S_BLIND = 0x6F5C1A7E9B3D4C8A0E2F6B5D7C9A1E3F4B6D8C0A2E5F7B9D1C3E4A6F8B0D2E5, 0x11223344556677889900

# x³ + x + 5 = out, plus a public `tag` that no constraint reads.
# variables: 0 ONE, 1 out, 2 tag (public), 3 x, 4 x², 5 x³ (private)
ROWS = [({3: 1}, {3: 1}, {4: 1}), ({4: 1}, {3: 1}, {5: 1}), ({5: 1, 3: 1, 0: 5}, {0: 1}, {1: 1})]
N_PUBLIC, N_VARS = 2, 6
Z = [1, 35, 7, 3, 9, 27]
PUBLIC = Z[1 : 1 + N_PUBLIC]


def next_pow2(n):
    return 1 << (n - 1).bit_length()


def exponents(rows, n_public, n_vars, z, toxic, r, s):
    """Discrete logs of every key and proof point, from the rows alone (no cuzk.reference code)."""
    tau, al, be, ga, de = toxic.tau, toxic.alpha, toxic.beta, toxic.gamma, toxic.delta
    m = next_pow2(len(rows) + n_public + 1)
    lag = lagrange_at(m, tau)
    u, v, w = ([column_at(expected_matrix(rows, n_public, n_vars, m, k), i, lag) for i in range(n_vars)] for k in range(3))
    zt = (pow(tau, m, R) - 1) % R
    gi, di = pow(ga, -1, R), pow(de, -1, R)
    k = [(be * u[i] + al * v[i] + w[i]) % R for i in range(n_vars)]
    at = lambda col: sum(zi * x for zi, x in zip(z, col)) % R  # noqa: E731
    h_tau = (at(u) * at(v) - at(w)) * pow(zt, -1, R) % R
    n_in = n_public + 1
    a = (al + at(u) + r * de) % R
    b = (be + at(v) + s * de) % R
    priv = sum(z[j] * k[j] for j in range(n_in, n_vars))
    c = ((priv + h_tau * zt) * di + s * a + r * b - r * s * de) % R
    return dict(
        a=a, b=b, c=c, u=u, v=v,
        ic=[k[i] * gi % R for i in range(n_in)],
        l=[k[j] * di % R for j in range(n_in, n_vars)],
        h=[pow(tau, i, R) * zt * di % R for i in range(m - 1)],
    )  # fmt: skip


@pytest.fixture(scope="module")
def keys():
    return generate_parameters(ReferenceR1CS(ROWS, N_PUBLIC, N_VARS), TOXIC)


@pytest.fixture(scope="module")
def proof(keys):
    return create_proof(keys[0], Z, R_BLIND, S_BLIND)


def same(points, scalars, mul):
    return len(points) == len(scalars) and all(P.eq(p, mul(k)) for p, k in zip(points, scalars))


def test_keys_are_the_toxic_waste_times_generators(keys):
    pk, vk = keys
    e = exponents(ROWS, N_PUBLIC, N_VARS, Z, TOXIC, 0, 0)
    t = TOXIC
    assert same([vk.alpha_g1, vk.beta_g1, vk.delta_g1], [t.alpha, t.beta, t.delta], P.g1_mul)
    assert same([vk.beta_g2, vk.gamma_g2, vk.delta_g2], [t.beta, t.gamma, t.delta], P.g2_mul)
    assert same(vk.ic, e["ic"], P.g1_mul)
    assert same(pk.a, e["u"], P.g1_mul) and same(pk.b_g1, e["v"], P.g1_mul) and same(pk.b_g2, e["v"], P.g2_mul)
    assert same(pk.l, e["l"], P.g1_mul)
    assert same(pk.h, e["h"], P.g1_mul) and len(pk.h) == 8 - 1  # m = next_pow2(3 + 2 + 1) = 8


def test_proof_is_the_expected_combination(proof):
    e = exponents(ROWS, N_PUBLIC, N_VARS, Z, TOXIC, R_BLIND, S_BLIND)
    assert P.eq(proof.a, P.g1_mul(e["a"])) and P.eq(proof.b, P.g2_mul(e["b"])) and P.eq(proof.c, P.g1_mul(e["c"]))


def test_true_statement_verifies(keys, proof):
    assert verify(keys[1], PUBLIC, proof)


@pytest.mark.parametrize("part", ["a", "b", "c"])
def test_tampered_proof_fails(keys, proof, part):
    gen = P.G2 if part == "b" else P.G1
    assert not verify(keys[1], PUBLIC, attrs.evolve(proof, **{part: P.add(getattr(proof, part), gen)}))


@pytest.mark.parametrize("index", [0, 1], ids=["out", "untouched-tag"])
def test_changed_public_input_fails(keys, proof, index):
    # the tag is read by no user constraint; only bellperson's extra input row binds it
    changed = list(PUBLIC)
    changed[index] = (changed[index] + 1) % R
    assert not verify(keys[1], changed, proof)


def test_untouched_input_has_its_own_ic_point(keys):
    vk = keys[1]
    assert not P.is_inf(vk.ic[2]) and vk.ic[2] != vk.ic[0] and vk.ic[2] != vk.ic[1]


def test_proof_from_another_circuit_fails(keys):
    # same variables and public inputs, but x² + x + 5 = out: its proof must not pass the cube's key
    rows = [({3: 1}, {3: 1}, {4: 1}), ({3: 1}, {0: 1}, {5: 1}), ({4: 1, 3: 1, 0: 5}, {0: 1}, {1: 1})]
    z = [1, 17, 7, 3, 9, 3]
    other_pk, _ = generate_parameters(ReferenceR1CS(rows, N_PUBLIC, N_VARS), TOXIC)
    assert not verify(keys[1], z[1:3], create_proof(other_pk, z, R_BLIND, S_BLIND))


def test_deterministic_for_fixed_waste_and_blinding(keys, proof):
    pk2, vk2 = generate_parameters(ReferenceR1CS(ROWS, N_PUBLIC, N_VARS), TOXIC)
    assert (pk2, vk2) == keys and pk2.to_affine_ints() == keys[0].to_affine_ints()
    again = create_proof(pk2, Z, R_BLIND, S_BLIND)
    assert again == proof and proof_to_bytes(again) == proof_to_bytes(proof)
    assert proof_to_bytes(create_proof(pk2, Z, R_BLIND + 1, S_BLIND)) != proof_to_bytes(proof)
    assert proof_to_bytes(create_proof(pk2, Z, R_BLIND, S_BLIND + 1)) != proof_to_bytes(proof)


def test_affine_view_can_omit_infinity_like_params_files(keys):
    full, packed = keys[0].to_affine_ints(), keys[0].to_affine_ints(omit_infinity=True)
    # B reads only x (3) and ONE (0); the extra input rows have B = 0
    assert [i for i, p in enumerate(full["b_g1"]) if p != (0, 0)] == [0, 3]
    assert len(packed["b_g1"]) == len(packed["b_g2"]) == 2 and packed["a"] == full["a"]
    assert full["vk"]["alpha_g1"] == P.g1_affine(P.g1_mul(TOXIC.alpha))


def test_unsatisfied_witness_is_refused(keys):
    bad = Z[:5] + [28]  # x³ wrong: row 1 (x²·x = x³) is the first to fail
    for call in (lambda: create_proof(keys[0], bad, 1, 2), lambda: prove(keys[0], bad)):
        with pytest.raises(UnsatisfiedConstraint, match="constraint 1") as info:
            call()
        assert info.value.index == 1


@pytest.mark.parametrize("r, s", [(R, 0), (0, -1), (True, 0), (0, 1.5)])
def test_bad_blinding_rejected(keys, r, s):
    with pytest.raises(InputError, match="must be an int"):
        create_proof(keys[0], Z, r, s)


@pytest.mark.parametrize(
    "inputs, match",
    [([35], "expects 2 public inputs, got 1"), ([35, 7, 0], "got 3"), ([35, R], "public input 1"), ([-1, 7], "public input 0")],
)
def test_verify_rejects_bad_public_inputs(keys, proof, inputs, match):
    with pytest.raises(InputError, match=match):
        verify(keys[1], inputs, proof)


def test_verify_rejects_point_outside_subgroup(keys, proof):
    bad = P.g1_decompress(_non_subgroup_g1(), check_subgroup=False)
    assert not P.in_subgroup(bad)
    with pytest.raises(NotInSubgroupError, match="proof C"):
        verify(keys[1], PUBLIC, attrs.evolve(proof, c=bad))


def _non_subgroup_g1():
    """Compressed encoding of the point with the least x ≥ 1 on E(Fq); the cofactor puts it outside G1."""
    x = 1
    while pow(x**3 + 4, (q - 1) // 2, q) != 1:
        x += 1
    return (x | (1 << 383)).to_bytes(48, "big")


def test_toxic_waste_validation():
    with pytest.raises(InputError, match="gamma"):
        ToxicWaste(1, 2, 3, 0, 5)
    with pytest.raises(InputError, match="tau"):
        ToxicWaste(R, 2, 3, 4, 5)
    with pytest.raises(InputError, match="ToxicWaste"):
        generate_parameters(ReferenceR1CS(ROWS, N_PUBLIC, N_VARS), (1, 2, 3, 4, 5))
    omega = pow(7, (R - 1) // 8, R)
    for tau in (1, omega, pow(omega, 5, R)):  # on the domain: Z(τ) = 0
        with pytest.raises(InputError, match="root of unity"):
            generate_parameters(ReferenceR1CS(ROWS, N_PUBLIC, N_VARS), attrs.evolve(TOXIC, tau=tau))


def test_random_setup_and_proof_verify():
    r1cs = ReferenceR1CS([({1: 1}, {1: 1}, {2: 1})], n_public=1, n_vars=3)  # x·x = y, x public
    pk, vk = setup(r1cs)
    p1, p2 = prove(pk, [1, 3, 9]), prove(pk, [1, 3, 9])
    assert p1 != p2  # fresh r, s each time
    assert verify(vk, [3], p1)


@settings(max_examples=3)
@given(satisfied_r1cs(max_public=2, max_private=2, max_constraints=2), st.tuples(*[fr.filter(bool)] * 5), fr, fr)
def test_random_circuits_prove_and_verify(case, waste, r, s):
    rows, n_public, n_vars, z = case
    toxic = ToxicWaste(*waste)
    assume(pow(toxic.tau, next_pow2(len(rows) + n_public + 1), R) != 1)
    pk, vk = generate_parameters(ReferenceR1CS(rows, n_public, n_vars), toxic)
    proof = create_proof(pk, z, r, s)
    e = exponents(rows, n_public, n_vars, z, toxic, r, s)
    assert P.eq(proof.a, P.g1_mul(e["a"])) and P.eq(proof.b, P.g2_mul(e["b"])) and P.eq(proof.c, P.g1_mul(e["c"]))
    assert verify(vk, z[1 : 1 + n_public], proof)


@settings(max_examples=50)
@given(satisfied_r1cs(), st.tuples(*[fr.filter(bool)] * 5), fr, fr)
def test_groth16_identity_in_the_exponent(case, waste, r, s):
    # a·b = α·β + (Σ x_i·ic_i)·γ + c·δ: the verifier's equation, checked on discrete logs
    rows, n_public, n_vars, z = case
    toxic = ToxicWaste(*waste)
    assume(pow(toxic.tau, next_pow2(len(rows) + n_public + 1), R) != 1)
    e = exponents(rows, n_public, n_vars, z, toxic, r, s)
    acc = sum(x * ic for x, ic in zip(z, e["ic"]))
    assert e["a"] * e["b"] % R == (toxic.alpha * toxic.beta + acc * toxic.gamma + e["c"] * toxic.delta) % R


@pytest.mark.slow  # builds a Synthesizer: Numba compilation on a cold cache
def test_r1cs_from_the_synthesizer_proves_and_verifies():
    # from_r1cs is duck-typed on cuzk.synth.R1CS; the DSL's cube must round-trip through it
    from cuzk.circuit import Circuit
    from cuzk.synth import Synthesizer
    from cuzk.synth.pyeval import python_synthesize

    class Cube(Circuit):
        def define(self, cs, x, out):
            x, out = cs.private(x), cs.public(out)
            cs.assert_equal(x * x * x + x + 5, out)

    synth = Synthesizer(Cube())
    r1cs = from_r1cs(synth.r1cs)
    assert (r1cs.n_public, r1cs.n_vars, r1cs.n_constraints) == (1, 5, 3)
    z = python_synthesize(synth, {"x": 3, "out": 35})[0]
    pk, vk = generate_parameters(synth.r1cs, TOXIC)
    proof = create_proof(pk, z, R_BLIND, S_BLIND)
    assert verify(vk, [35], proof) and not verify(vk, [36], proof)


# ------------------------------------------------------------------ the same reference on BN254
_BN = ref_curve("bn254")


@settings(max_examples=2, deadline=None)
@given(x=st.integers(0, _BN.r - 1), waste=st.tuples(*[st.integers(1, _BN.r - 1)] * 5),
       r=st.integers(0, _BN.r - 1), s=st.integers(0, _BN.r - 1))
def test_bn254_reference_proof_is_the_definition_and_verifies(x, waste, r, s):
    """x·x = y, y·x = z with x public, over BN254's Fr (py_ecc's bn128): A, B, C are the
    scalars of the Groth16 definition times the generators, the true input verifies and x + 1
    does not."""
    rows = [({1: 1}, {1: 1}, {2: 1}), ({2: 1}, {1: 1}, {3: 1})]
    r1cs = ReferenceR1CS(rows, n_public=1, n_vars=4, curve="bn128")
    toxic = ToxicWaste(*waste)
    assume(pow(toxic.tau, 4, _BN.r) != 1)
    pk, vk = generate_parameters(r1cs, toxic)
    z = [1, x, x * x % _BN.r, x * x * x % _BN.r]
    proof = create_proof(pk, z, r, s)
    assert proof.curve == vk.curve == "bn254"
    ev = pk.qap.evaluate_at(toxic.tau)
    q = _BN.r
    a = (toxic.alpha + sum(zi * u for zi, u in zip(z, ev.u)) + r * toxic.delta) % q
    b = (toxic.beta + sum(zi * v for zi, v in zip(z, ev.v)) + s * toxic.delta) % q
    assert _BN.eq(proof.a, _BN.g1_mul(a)) and _BN.eq(proof.b, _BN.g2_mul(b))
    assert verify(vk, [x], proof) and not verify(vk, [(x + 1) % q], proof)
