"""snarkjs formats and the "snarkjs" H convention without Node: round trips, malformed files,
the odd-coset H against Python ints, and a snarkjs-shaped key built from τ that proves and verifies.
"""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from hypothesis import given, strategies as st

from cuzk.circuit import Circuit
from cuzk.curve import G1, G2
from cuzk.curves import BN254
from cuzk.errors import (KeyMismatchError, ProofVerificationError, R1csFormatError, SnarkjsFormatError,
                         UnsupportedCurveError)
from cuzk.field import FR, Fr
from cuzk.formats import snarkjs as sj
from cuzk.formats import snarkjs_json as sjj
from cuzk.groth16 import Proof, VerifyingKey, verify
from cuzk.groth16.r1cs_to_qap import compute_h, lagrange_at
from cuzk.curves import get as _get_curve
cpu = _get_curve("bls12_381").kernels  # BLS12-381's CPU kernels
from cuzk.prover import GpuProver
from cuzk.synth import Synthesizer
from cuzk.synth.binfile import read_sections, write_container

BN254_R = BN254.fr.modulus

P = FR.modulus
scalars = st.integers(0, P - 1)


class Cube(Circuit):
    def define(self, cs, x, out):
        x, out = cs.private(x), cs.public(out)
        cs.assert_equal(x * x * x + x + 5, out)


# ---------------------------------------------------------------- .wtns
@given(st.lists(scalars, min_size=1, max_size=20))
def test_wtns_round_trip(tmp_path_factory, values):
    path = tmp_path_factory.mktemp("w") / "w.wtns"
    sj.write_wtns(path, values)
    z = sj.read_wtns(path)
    assert Fr.to_ints(z) == values
    sj.write_wtns(path, z)  # a Montgomery array writes the same file
    assert Fr.to_ints(sj.read_wtns(path)) == values


def _wtns_bytes(n8=32, prime=P, values=(1, 2, 3), count=None, version=2, sections=(1, 2)):
    head = struct.pack("<I", n8) + prime.to_bytes(n8, "little") + struct.pack("<I", len(values) if count is None else count)
    body = b"".join(v.to_bytes(n8, "little") for v in values)
    secs = [s for s in ((1, head), (2, body)) if s[0] in sections]
    out = b"wtns" + struct.pack("<II", version, len(secs))
    for sid, b in secs:
        out += struct.pack("<IQ", sid, len(b)) + b
    return out


@pytest.mark.parametrize("data, error, pattern", [
    (_wtns_bytes()[:30], SnarkjsFormatError, "truncated"),
    (b"wtnz" + _wtns_bytes()[4:], SnarkjsFormatError, "bad magic"),
    (_wtns_bytes(version=1), SnarkjsFormatError, "version 1"),
    (_wtns_bytes(sections=(1,)), SnarkjsFormatError, r"missing section 2 \(values\)"),
    (_wtns_bytes(prime=101), SnarkjsFormatError, "neither BLS12-381's nor BN254's"),
    (_wtns_bytes(count=4), SnarkjsFormatError, "announces 4 values"),
    (_wtns_bytes(values=(1, P)), SnarkjsFormatError, "value 1 is not reduced"),
    (_wtns_bytes() + b"\0", SnarkjsFormatError, "trailing"),
    # a padded prime still matched; the 40-byte values then failed a numpy reshape (ValueError)
    (_wtns_bytes(n8=40), SnarkjsFormatError, "40 bytes, expected 32"),
    (_wtns_bytes(n8=33), SnarkjsFormatError, "33 bytes, expected 32"),
], ids=["truncated", "magic", "version", "missing", "prime", "count", "unreduced", "trailing", "n8-40", "n8-33"])
def test_malformed_wtns(tmp_path, data, error, pattern):
    (tmp_path / "w.wtns").write_bytes(data)
    with pytest.raises(error, match=pattern):
        sj.read_wtns(tmp_path / "w.wtns")


def test_wtns_of_each_curve_and_a_mismatch(tmp_path):
    (tmp_path / "bn.wtns").write_bytes(_wtns_bytes(prime=BN254_R))
    assert sj.wtns_curve(tmp_path / "bn.wtns") == "bn254"
    assert sj.read_wtns(tmp_path / "bn.wtns").shape[1] == 4
    with pytest.raises(UnsupportedCurveError, match="BN254 .bn128.*BLS12-381 .bls12381."):
        sj.read_wtns(tmp_path / "bn.wtns", curve="bls12_381")
    sj.write_wtns(tmp_path / "w.wtns", [1, 35, 3], curve="bn128")
    assert sj.wtns_curve(tmp_path / "w.wtns") == "bn254"


def test_duplicate_section_is_refused():
    blob = b"wtns" + struct.pack("<II", 2, 2) + (struct.pack("<IQ", 1, 0)) * 2
    with pytest.raises(SnarkjsFormatError, match="section 1 appears twice"):
        read_sections(blob, b"wtns", (2,), "w")


# ---------------------------------------------------------------- .r1cs
def test_r1cs_round_trip_and_bn128(tmp_path):
    r1cs = Synthesizer(Cube()).r1cs
    r1cs.write(tmp_path / "c.r1cs")
    back = sj.read_r1cs(tmp_path / "c.r1cs")
    assert back.digest == r1cs.digest
    sec = {k: bytes(v) for k, v in read_sections((tmp_path / "c.r1cs").read_bytes(), b"r1cs", (1,), "c").items()}
    bn = Synthesizer(Cube(), curve="bn128").r1cs
    bn.write(tmp_path / "bn.r1cs")
    back = sj.read_r1cs(tmp_path / "bn.r1cs")
    assert back.curve == "bn254" and back.digest == bn.digest
    del sec[2]
    write_container(tmp_path / "nocons.r1cs", b"r1cs", 1, sorted(sec.items()))
    with pytest.raises((SnarkjsFormatError, R1csFormatError), match="missing section 2"):
        sj.read_r1cs(tmp_path / "nocons.r1cs")


# ---------------------------------------------------------------- JSON
def test_proof_and_vk_json_round_trip(tmp_path):
    rng = np.random.default_rng(7)
    proof = Proof(a=G1.random(1, rng)[0], b=G2.random(1, rng)[0], c=G1.identity())
    sjj.write_proof_json(tmp_path / "p.json", proof)
    obj = json.loads((tmp_path / "p.json").read_text())
    assert obj["pi_a"][2] == "1" and obj["pi_b"][2] == ["1", "0"] and obj["pi_c"] == ["0", "1", "0"]
    back = sjj.read_proof_json(tmp_path / "p.json")
    assert all(np.array_equal(getattr(back, k), getattr(proof, k)) for k in "abc")
    g1, g2 = G1.random(4, rng), G2.random(3, rng)
    vk = VerifyingKey(alpha_g1=g1[0], beta_g1=G1.identity(), beta_g2=g2[0], gamma_g2=g2[1], delta_g1=G1.identity(),
                      delta_g2=g2[2], ic=g1[1:])
    sjj.write_vk_json(tmp_path / "vk.json", vk)
    assert sjj.read_vk_json(tmp_path / "vk.json") == vk
    sjj.write_public_json(tmp_path / "pub.json", [0, P - 1])
    assert sjj.read_public_json(tmp_path / "pub.json") == [0, P - 1]


@pytest.mark.parametrize("curve", ["bls12_381", "bn254"])
@given(seed=st.integers(0, 2**32 - 1), identity=st.sets(st.sampled_from("abc")))
def test_the_compact_texts_are_json_dumps_of_the_objects(curve, seed, identity):
    # cuzk serve writes proof.json / public.json in one format step each: the same text
    g = _get_curve(curve)
    rng = np.random.default_rng(seed)
    pts = {"a": g.G1.random(1, rng)[0], "b": g.G2.random(1, rng)[0], "c": g.G1.random(1, rng)[0]}
    for k in identity:
        pts[k] = (g.G2 if k == "b" else g.G1).identity()
    proof = Proof(**pts, curve=curve)
    compact = (",", ":")
    assert sjj.proof_json_text(proof) == json.dumps(sjj.proof_to_json(proof), separators=compact)
    public = [int(x) for x in rng.integers(0, 2**62, size=seed % 5)] + [2**255 - 19] * (seed % 2)
    assert sjj.public_json_text(public) == json.dumps(sjj.public_to_json(public), separators=compact)


def _bad_proof(edit):
    rng = np.random.default_rng(3)
    obj = sjj.proof_to_json(Proof(a=G1.random(1, rng)[0], b=G2.random(1, rng)[0], c=G1.random(1, rng)[0]))
    edit(obj)
    return obj


@pytest.mark.parametrize("edit, error, pattern", [
    # BLS12-381 coordinates labelled bn128: larger than BN254's q
    (lambda o: o.update(curve="bn128"), SnarkjsFormatError, r"outside \[0, q\)"),
    (lambda o: o.update(curve="secp256k1"), UnsupportedCurveError, "'secp256k1'; cuzk supports 'bls12381', 'bn128'"),
    (lambda o: o.update(protocol="plonk"), SnarkjsFormatError, "plonk"),
    (lambda o: o.pop("pi_c"), SnarkjsFormatError, "missing field 'pi_c'"),
    (lambda o: o["pi_a"].__setitem__(1, str(int(o["pi_a"][1]) ^ 1)), SnarkjsFormatError, "pi_a: the point is not on the curve"),
    (lambda o: o["pi_a"].__setitem__(0, str(2**384)), SnarkjsFormatError, "outside"),
    (lambda o: o["pi_a"].__setitem__(2, "2"), SnarkjsFormatError, "only affine"),
    (lambda o: o["pi_b"].__setitem__(0, "7"), SnarkjsFormatError, "G2 point"),
    (lambda o: o["pi_c"].__setitem__(0, "x1"), SnarkjsFormatError, "not a decimal"),
])
def test_malformed_proof_json(edit, error, pattern):
    with pytest.raises(error, match=pattern):
        sjj.proof_from_json(_bad_proof(edit))


def test_malformed_public_and_vk_json(tmp_path):
    with pytest.raises(SnarkjsFormatError, match=r"\[1\].*outside"):
        sjj.public_from_json(["1", str(P)])
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(SnarkjsFormatError, match="not valid JSON"):
        sjj.read_vk_json(tmp_path / "x.json")
    # bad UTF-8 escaped as UnicodeDecodeError; deep nesting as RecursionError, or a segfault of
    # json's C parser once py_ecc (imported by the tests' oracle) raised the recursion limit
    for name, raw, match in (("utf8", b'{"IC": "\xff\xfe"}', "UnicodeDecodeError"),
                             ("deep", b"[" * 100_000 + b"]" * 100_000, "nested deeper than 64")):
        (tmp_path / name).write_bytes(raw)
        with pytest.raises(SnarkjsFormatError, match=f"not valid JSON .*{match}"):
            sjj.read_public_json(tmp_path / name)
    assert sjj.loads_bounded("[" * 64 + "]" * 64, "x") is not None
    with pytest.raises(SnarkjsFormatError, match="nPublic = 3"):
        sjj.vk_from_json({"nPublic": 3, "IC": [["0", "1", "0"]]})


@pytest.mark.parametrize("text", ["3_5", " 35", "35\n", "+35", "-0", "\u0663\u0665", "\uff13\uff15", "3.5", "0x23", ""])
def test_numbers_are_ascii_decimal_strings_only(text):
    # int() read all but the last three as a number (35 or 0): a public.json snarkjs refuses verified
    with pytest.raises(SnarkjsFormatError, match=r"\[0\]: .* is not a decimal number"):
        sjj.public_from_json([text])
    edited = lambda o: o["pi_a"].__setitem__(2, text)  # noqa: E731 - z of a proof point, the same reader
    with pytest.raises(SnarkjsFormatError, match=r"pi_a: .* is not a decimal number"):
        sjj.proof_from_json(_bad_proof(edited))
    assert sjj.public_from_json(["35", "0035", 35]) == [35, 35, 35]  # JSON integers are unambiguous too


def test_a_long_number_is_refused_before_int_and_not_echoed_whole():
    for value in ("9" * 100_000, "x" * 100_000, 10 ** 1000):
        with pytest.raises(SnarkjsFormatError) as e:
            sjj.public_from_json([value])
        assert len(str(e.value)) < 200, str(e.value)[:300]


# ---------------------------------------------------------------- the snarkjs H convention
@given(st.lists(scalars, min_size=24, max_size=24))
def test_odd_coset_h_matches_python_ints(vals):
    m = 8
    a, b, c = (vals[i * m:(i + 1) * m] for i in range(3))
    w_m = FR.root_of_unity_for(3, 5)
    w_2m = FR.root_of_unity_for(4, 5)
    inv_m = pow(m, -1, P)

    def at(evals, x):  # the interpolant of evals over <ω_m>, evaluated at x
        coeffs = [sum(e * pow(w_m, -i * k, P) for i, e in enumerate(evals)) * inv_m % P for k in range(m)]
        return sum(ck * pow(x, k, P) for k, ck in enumerate(coeffs)) % P

    pts = [w_2m * pow(w_m, i, P) % P for i in range(m)]
    want = [(at(a, x) * at(b, x) - at(c, x)) % P for x in pts]
    got = compute_h(*(Fr.from_ints(v) for v in (a, b, c)), cpu, convention="snarkjs")
    assert Fr.to_ints(got) == want


def _snarkjs_style_key(synth, tau, alpha, beta, gamma, delta):
    """What ``snarkjs groth16 setup`` computes, from the toxic waste, on Python ints."""
    r1cs = synth.r1cs
    n, n_in, n_c = r1cs.n_vars, r1cs.n_public + 1, r1cs.n_constraints
    m = 2 ** (n_c + r1cs.n_public).bit_length()
    lag = Fr.to_ints(lagrange_at(tau, m, root_generator=5))
    lag2 = Fr.to_ints(lagrange_at(tau, 2 * m, root_generator=5))
    u, v, w = [0] * n, [0] * n, [0] * n
    for row, rows in enumerate(r1cs.rows_as_ints()):
        for acc, terms in zip((u, v, w), rows):
            for i, coeff in terms.items():
                acc[i] = (acc[i] + coeff * lag[row]) % P
    for s in range(n_in):  # the per-input A rows
        u[s] = (u[s] + lag[n_c + s]) % P

    def g1(xs):
        return G1.mul_many(np.broadcast_to(G1.generator(), (len(xs), 2, 6)), [x % P for x in xs])

    def g2(xs):
        return G2.mul_many(np.broadcast_to(G2.generator(), (len(xs), 2, 2, 6)), [x % P for x in xs])

    k = [(beta * u[i] + alpha * v[i] + w[i]) % P for i in range(n)]
    gi, di = pow(gamma, -1, P), pow(delta, -1, P)
    vk = VerifyingKey(alpha_g1=g1([alpha])[0], beta_g1=g1([beta])[0], beta_g2=g2([beta])[0], gamma_g2=g2([gamma])[0],
                      delta_g1=g1([delta])[0], delta_g2=g2([delta])[0], ic=g1([x * gi for x in k[:n_in]]))
    return sj.SnarkjsProvingKey(
        vk=vk, h=g1([lag2[2 * i + 1] * di for i in range(m)]), l=g1([x * di for x in k[n_in:]]),
        a=g1(u), b_g1=g1(v), b_g2=g2(v), convention="snarkjs", digest=r1cs.digest, n_constraints=n_c,
        matrix_a=r1cs.a, matrix_b=r1cs.b, r1cs=None,
    )


def test_snarkjs_convention_proves_from_a_tau_built_key():
    synth = Synthesizer(Cube())
    pk = _snarkjs_style_key(synth, tau=123456789, alpha=11, beta=13, gamma=17, delta=19)
    z = synth.synthesize(x=3, out=35).z
    w = pk.witness(z)
    assert w.public_inputs == [35]
    proof = GpuProver(pk, device="cpu").prove(w, r=5, s=6)  # verified before return
    assert verify(pk.vk, [35], proof)
    assert not verify(pk.vk, [36], proof)
    bad = z.copy()
    bad[2] = Fr.from_ints([4])[0]  # x = 4 does not give out = 35
    with pytest.raises(ProofVerificationError):
        GpuProver(pk, device="cpu").prove(pk.witness(bad))
    with pytest.raises(KeyMismatchError, match="values but the zkey has"):
        pk.witness(z[:-1])
