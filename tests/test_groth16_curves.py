"""Groth16 over every curve: keys and proofs carry their curve, setup takes it from the R1CS,
prove/verify take fields, groups, pairing and kernels from ``cuzk.curves.get(key.curve)``, and
mixing curves raises an error naming both. Each proving test asserts both directions."""

import numpy as np
import pytest

import cuzk
from cuzk import curves
from cuzk.circuit import Circuit
from cuzk.errors import BackendUnavailableError, InputError, KeyMismatchError, UnsupportedCurveError
from cuzk.groth16 import Proof, ToxicWaste, create_proof, prepare_verifying_key, setup_with_waste, verify, verify_batch
from cuzk.prover import GpuProver
from cuzk.synth import Synthesizer

CURVES = ["bls12_381", "bn254"]
WASTE = dict(tau=123456789, alpha=11, beta=13, gamma=17, delta=19)


class Cube(Circuit):
    def define(self, cs, x, out):
        x, out = cs.private(x), cs.public(out)
        cs.assert_equal(x * x * x + x + 5, out)


@pytest.fixture(scope="module", params=CURVES)
def curve(request):
    return request.param


@pytest.fixture(scope="module")
def case(curve):
    synth = Synthesizer(Cube(), curve=curve)
    pk = setup_with_waste(synth.r1cs, ToxicWaste(**WASTE))
    w = synth.synthesize(x=3, out=35)
    prover = GpuProver(pk, device="cpu", threads=1)
    return synth, pk, w, prover, prover.prove(w)


@pytest.fixture(scope="module")
def others():
    """Per curve, a key and proof of the same circuit over that curve (for mixing tests)."""
    out = {}
    for c in CURVES:
        synth = Synthesizer(Cube(), curve=c)
        pk = setup_with_waste(synth.r1cs, ToxicWaste(**WASTE))
        out[c] = (synth, pk, create_proof(pk, synth.synthesize(x=3, out=35), 5, 7))
    return out


def test_round_trip_carries_the_curve(curve, case):
    synth, pk, w, prover, proof = case
    assert synth.r1cs.curve == pk.curve == pk.vk.curve == w.curve == proof.curve == curve
    limbs = curves.resolve(curve).fq.limbs
    assert proof.a.shape == (2, limbs) and proof.b.shape == (2, 2, limbs) and pk.vk.ic.shape == (2, 2, limbs)
    assert verify(pk.vk, [35], proof) and not verify(pk.vk, [36], proof)
    assert verify(prepare_verifying_key(pk.vk), [35], proof)
    assert verify_batch(pk.vk, [([35], proof), ([35], prover.prove(w))], rng=np.random.default_rng(1))
    assert not verify_batch(pk.vk, [([35], proof), ([36], proof)], rng=np.random.default_rng(1))
    with pytest.raises(InputError, match="outside"):
        verify(pk.vk, [curves.resolve(curve).fr.modulus], proof)


def test_tampered_proof_fails(curve, case):
    _, pk, _, _, proof = case
    G1 = curves.get(curve).G1
    bad = Proof(a=G1.add(proof.a, G1.generator()), b=proof.b, c=proof.c, curve=curve)
    assert not verify(pk.vk, [35], bad)


def test_setup_takes_the_curve_from_the_r1cs(curve):
    pk, vk = cuzk.groth16.setup(Synthesizer(Cube(), curve=curve).r1cs, np.random.default_rng(3))
    assert pk.curve == vk.curve == curve and pk.vk is vk


def test_mixing_curves_names_both(others):
    (s_bls, pk_bls, p_bls), (s_bn, pk_bn, p_bn) = others["bls12_381"], others["bn254"]
    w_bls, w_bn = s_bls.synthesize(x=3, out=35), s_bn.synthesize(x=3, out=35)
    for pk, w in ((pk_bn, w_bls), (pk_bls, w_bn)):
        with pytest.raises(KeyMismatchError, match="BN254.*BLS12-381|BLS12-381.*BN254"):
            GpuProver(pk, device="cpu").prove(w)
    for vk, proof in ((pk_bn.vk, p_bls), (pk_bls.vk, p_bn)):
        with pytest.raises(KeyMismatchError, match="BN254.*BLS12-381|BLS12-381.*BN254"):
            verify(vk, [35], proof)
        with pytest.raises(KeyMismatchError, match="BN254.*BLS12-381|BLS12-381.*BN254"):
            verify_batch(vk, [([35], proof)])
    with pytest.raises(KeyMismatchError, match="BN254.*BLS12-381|BLS12-381.*BN254"):
        pk_bls.with_circuit(s_bn.r1cs)
    # bytes carry no curve: they are read as the key's curve's bellperson proof, which BN254 has not
    with pytest.raises(UnsupportedCurveError, match="BLS12-381.*BN254"):
        verify(pk_bn.vk, [35], p_bls.to_bytes())


def test_points_of_the_other_curve_are_refused(others):
    _, pk_bls, p_bls = others["bls12_381"]
    with pytest.raises(InputError, match="BN254 point"):
        Proof(a=p_bls.a, b=p_bls.b, c=p_bls.c, curve="bn254")
    import attrs

    with pytest.raises(KeyMismatchError, match="BN254 point"):
        attrs.evolve(pk_bls.vk, curve="bn128")


def test_bellperson_formats_refuse_bn254(tmp_path, others):
    _, pk, proof = others["bn254"]
    for call in (proof.to_bytes, proof.to_json, pk.vk.to_bytes, lambda: pk.write(tmp_path / "k.params")):
        with pytest.raises(UnsupportedCurveError, match="BN254"):
            call()
    assert not (tmp_path / "k.params").exists()
    from cuzk.groth16.prove import load_backend
    from cuzk.kernels import cuda

    assert load_backend("cuda", "bn254") is cuda.kernels_for(curves.get("bn254").cuda)  # BN254 has CUDA kernels
    with pytest.raises(BackendUnavailableError, match="BLS12-377"):
        load_backend("cuda", "bls12_377")  # headers generated, not enabled in the runtime


def test_proof_equality_and_hash_include_the_curve(others):
    _, _, p = others["bn254"]
    same = Proof(a=p.a, b=p.b, c=p.c, curve="bn128")
    assert same == p and hash(same) == hash(p)
    _, _, q = others["bls12_381"]
    assert q != p and Proof.from_bytes(q.to_bytes()) == q


# ------------------------------------------------------------------ independent oracle (py_ecc)
_PY_ECC = {"bls12_381": "optimized_bls12_381", "bn254": "optimized_bn128"}


def _qap_at(r1cs, tau: int, curve: str):
    """u_i(τ), v_i(τ), w_i(τ) on Python ints: Lagrange values on bellperson's domain (ω from Fr's
    generator), the user's rows then one row x_i · 0 = 0 per input."""
    fr = curves.resolve(curve).fr
    p, n_in = fr.modulus, r1cs.n_public + 1
    m = 1 << (r1cs.n_constraints + n_in - 1).bit_length()
    omega = fr.root_of_unity_for(m.bit_length() - 1, fr.generator)
    zt = (pow(tau, m, p) - 1) % p
    lag = [pow(omega, j, p) * zt * pow(m * (tau - pow(omega, j, p)), -1, p) % p for j in range(m)]
    u, v, w = ([0] * r1cs.n_vars for _ in range(3))
    for row, (ra, rb, rc) in enumerate(r1cs.rows_as_ints()):
        for out, terms in ((u, ra), (v, rb), (w, rc)):
            for i, c in terms.items():
                out[i] = (out[i] + c * lag[row]) % p
    for i in range(n_in):
        u[i] = (u[i] + lag[r1cs.n_constraints + i]) % p
    return u, v, w


@pytest.mark.parametrize("curve_name", CURVES)
def test_proof_equals_the_groth16_definition_computed_with_py_ecc(curve_name):
    # A = (α + Σ z_i u_i(τ) + rδ)G1, B = (β + Σ z_i v_i(τ) + sδ)G2,
    # C = ((Σ_aux z_j (β u_j + α v_j + w_j) + A(τ)B(τ) − C(τ)) / δ + s·a + r·b − rsδ)G1:
    # scalars on Python ints, group multiplications by py_ecc (independent of cuzk's kernels)
    import importlib

    ecc = importlib.import_module(f"py_ecc.{_PY_ECC[curve_name]}")
    synth = Synthesizer(Cube(), curve=curve_name)
    pk = setup_with_waste(synth.r1cs, ToxicWaste(**WASTE))
    w = synth.synthesize(x=3, out=35)
    r, s = 0x1234567, 0x7654321
    proof = create_proof(pk, w, r, s)
    p = curves.resolve(curve_name).fr.modulus
    t, al, be, de = WASTE["tau"], WASTE["alpha"], WASTE["beta"], WASTE["delta"]
    u, v, wq = _qap_at(synth.r1cs, t, curve_name)
    z = synth.field.to_ints(w.z)
    az, bz, cz = (sum(zi * x for zi, x in zip(z, col)) % p for col in (u, v, wq))
    a = (al + az + r * de) % p
    b = (be + bz + s * de) % p
    n_in = synth.r1cs.n_public + 1
    aux = sum(z[j] * (be * u[j] + al * v[j] + wq[j]) for j in range(n_in, len(z)))
    c = ((aux + az * bz - cz) * pow(de, -1, p) + s * a + r * b - r * s * de) % p

    def ints(pt):
        x, y = ecc.normalize(pt)
        return tuple(getattr(e, "coeffs", (e,)) for e in (x, y))

    cv = curves.get(curve_name)
    assert ints(ecc.multiply(ecc.G1, a)) == tuple((k,) for k in cv.G1.to_ints(proof.a))
    assert ints(ecc.multiply(ecc.G2, b)) == tuple(tuple(k) for k in cv.G2.to_ints(proof.b))
    assert ints(ecc.multiply(ecc.G1, c)) == tuple((k,) for k in cv.G1.to_ints(proof.c))
    assert verify(pk.vk, [35], proof) and not verify(pk.vk, [34], proof)


def test_fast_keys_and_proof_equal_the_generic_reference(curve, case):
    """The pure-Python reference (py_ecc's curve of the same name) gives the same keys and proof
    for the same toxic waste and blinding, and its verifier agrees both ways."""
    from cuzk import reference as ref

    synth, pk, w, _, _ = case
    G1, G2, Fr = curves.get(curve).G1, curves.get(curve).G2, curves.get(curve).Fr  # noqa: N806
    rpk, rvk = ref.generate_parameters(ref.from_r1cs(synth.r1cs), ref.ToxicWaste(**WASTE))
    assert rvk.curve == rpk.qap.r1cs.curve == curve
    want = rpk.to_affine_ints(omit_infinity=True)
    vk = pk.vk
    assert {k: (G2 if k.endswith("g2") else G1).to_ints(getattr(vk, k)) for k in want["vk"]} == want["vk"]
    for k in ("a", "b_g1", "l", "h"):
        assert G1.to_ints(getattr(pk, k)) == want[k], k
    assert G2.to_ints(pk.b_g2) == want["b_g2"]
    proof = create_proof(pk, w, 5, 7)
    rproof = ref.create_proof(rpk, Fr.to_ints(w.z), 5, 7)
    assert (G1.to_ints(proof.a), G2.to_ints(proof.b), G1.to_ints(proof.c)) == rproof.to_affine_ints()
    assert ref.verify(rvk, [35], rproof) and not ref.verify(rvk, [36], rproof)
