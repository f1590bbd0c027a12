"""snarkjs and circom on bn128 (BN254): a circom circuit compiled with circom's default prime,
set up and proved by snarkjs, is read, proved and verified by cuzk; cuzk's proofs verify in
``snarkjs groth16 verify``; cuzk's own snarkjs-convention setup writes a zkey snarkjs proves
with; mixing the curves raises an error naming both.

Artifacts come from scripts/snarkjs_ceremony.py (cached under ~/.cache/cuzk/snarkjs): a
20-constraint chain at ptau power 6, about 30 s to build the first time.
"""

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from cuzk import curves
from cuzk.errors import KeyMismatchError, UnsupportedCurveError
from cuzk.formats import snarkjs as sj
from cuzk.formats import snarkjs_json as sjj
from cuzk.groth16 import Proof, verify
from cuzk.groth16.prove import check_witness
from cuzk.prover import GpuProver

_spec = importlib.util.spec_from_file_location("snarkjs_ceremony", Path(__file__).parent.parent / "scripts" / "snarkjs_ceremony.py")
ceremony = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("snarkjs_ceremony", ceremony)
_spec.loader.exec_module(ceremony)

_OK, _WHY = ceremony.toolchain_status()
pytestmark = pytest.mark.skipif(not _OK, reason=f"snarkjs interoperability tests skipped: {_WHY}")

N = 20  # chain length: 20 multiplication constraints, domain 2^5 inside a power-6 ptau


@pytest.fixture(scope="module")
def bn():
    d = ceremony.ceremony(f"chain{N}-bn128", ceremony.chain_source(N), {"x": "3", "k": "7"}, 6, curve="bn128")
    return d, sj.read_zkey(d / "circuit.zkey", r1cs=d / "circuit.r1cs")


def _snarkjs_verifies(vk_path: Path, public: list, proof: Proof, tmp_path: Path) -> bool:
    sjj.write_proof_json(tmp_path / "proof.json", proof)
    sjj.write_public_json(tmp_path / "public.json", public)
    res = ceremony.snarkjs("groth16", "verify", vk_path, tmp_path / "public.json", tmp_path / "proof.json")
    assert ("OK" in res.stdout) == (res.returncode == 0), res.stdout + res.stderr
    return res.returncode == 0


def test_bn128_zkey_reads_as_bn254(bn):
    d, pk = bn
    assert pk.curve == "bn254" and pk.r1cs.curve == "bn254"
    assert pk.vk.alpha_g1.shape == (2, 4)
    exported = json.loads((d / "verification_key.json").read_text())
    ours = sjj.vk_to_json(pk.vk)
    assert ours["curve"] == "bn128"
    for k in ("vk_alpha_1", "vk_beta_2", "vk_gamma_2", "vk_delta_2", "IC", "nPublic"):
        assert ours[k] == exported[k], k  # snarkjs's own encoding of every point


def test_snarkjs_proof_verifies_in_cuzk(bn):
    d, pk = bn
    proof = sjj.read_proof_json(d / "proof.json")
    public = sjj.read_public_json(d / "public.json")
    vk = sjj.read_vk_json(d / "verification_key.json")
    assert proof.curve == vk.curve == "bn254"
    assert verify(vk, public, proof) and verify(pk.vk, public, proof)
    assert not verify(vk, [public[0] ^ 1] + public[1:], proof)
    G1 = curves.get("bn254").G1
    assert not verify(vk, public, Proof(a=G1.neg(proof.a), b=proof.b, c=proof.c, curve="bn254"))


def test_cuzk_proof_verifies_in_snarkjs(bn, tmp_path):
    d, pk = bn
    w = pk.witness(d / "witness.wtns")
    assert w.curve == "bn254" and w.public_inputs == sjj.read_public_json(d / "public.json")
    check_witness(w)
    proof = GpuProver(pk, device="cpu", threads=1).prove(w)
    assert json.loads(json.dumps(sjj.proof_to_json(proof)))["curve"] == "bn128"
    assert _snarkjs_verifies(d / "verification_key.json", w.public_inputs, proof, tmp_path)
    bad = [(w.public_inputs[0] + 1) % curves.BN254.fr.modulus] + w.public_inputs[1:]
    assert not _snarkjs_verifies(d / "verification_key.json", bad, proof, tmp_path)


def test_circom_wasm_synthesizer_on_the_default_prime(bn):
    pytest.importorskip("wasmtime")
    from cuzk.formats.snarkjs_wasm import synthesizer_from_circom

    d, pk = bn
    synth = synthesizer_from_circom(d / "circuit.r1cs", d / "circuit.wasm", check=True)
    assert synth.r1cs.curve == synth.calculator.curve == "bn254"
    w = synth.synthesize(x=3, k=7)
    assert w.curve == "bn254" and np.array_equal(w.z, sj.read_wtns(d / "witness.wtns"))
    assert verify(pk.vk, w.public_inputs, GpuProver(pk, device="cpu", threads=1).prove(w))


def test_cuzk_setup_on_bn128_gives_a_zkey_snarkjs_proves_with(bn, tmp_path):
    from cuzk.formats.snarkjs_setup import setup_snarkjs
    from cuzk.formats.snarkjs_write import write_zkey

    d, _ = bn
    pk = setup_snarkjs(sj.read_r1cs(d / "circuit.r1cs"), np.random.default_rng(5))
    assert pk.curve == "bn254"
    write_zkey(pk, tmp_path / "c.zkey")
    back = sj.read_zkey(tmp_path / "c.zkey")
    assert back.curve == "bn254" and back.vk == pk.vk
    res = ceremony.snarkjs("groth16", "prove", tmp_path / "c.zkey", d / "witness.wtns", tmp_path / "p.json",
                           tmp_path / "pub.json")
    assert res.returncode == 0, res.stdout + res.stderr
    sj_proof, public = sjj.read_proof_json(tmp_path / "p.json"), sjj.read_public_json(tmp_path / "pub.json")
    assert verify(pk.vk, public, sj_proof)
    sjj.write_vk_json(tmp_path / "vk.json", pk.vk)
    ours = GpuProver(pk, device="cpu", threads=1).prove(pk.witness(d / "witness.wtns"))
    assert _snarkjs_verifies(tmp_path / "vk.json", public, ours, tmp_path)


def test_cli_detects_the_curve(bn, tmp_path, capsys):
    from cuzk import cli_groth16

    d, _ = bn
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    assert cli_groth16.main(["prove", str(d / "circuit.zkey"), str(d / "witness.wtns"), str(proof), str(public),
                             "--device", "cpu", "--r1cs", str(d / "circuit.r1cs"), "--no-cache"]) == 0
    assert json.loads(proof.read_text())["curve"] == "bn128"
    assert cli_groth16.main(["verify", str(d / "verification_key.json"), str(public), str(proof)]) == 0
    assert capsys.readouterr().out.strip() == "OK!"


def test_mixed_curves_name_both(bn, tmp_path):
    d, pk = bn
    # a BLS12-381 witness of the right length for the bn128 zkey
    sj.write_wtns(tmp_path / "bls.wtns", [1] * pk.n_vars, curve="bls12_381")
    assert sj.wtns_curve(tmp_path / "bls.wtns") == "bls12_381"
    with pytest.raises(UnsupportedCurveError, match="BLS12-381.*BN254|BN254.*BLS12-381"):
        pk.witness(tmp_path / "bls.wtns")
    # a proof of the other curve against this key
    bn_vk = sjj.vk_from_json({**json.loads((d / "verification_key.json").read_text()), "curve": "bn128"})
    from cuzk.curve import G1, G2

    other = Proof(a=G1.generator(), b=G2.generator(), c=G1.generator())
    with pytest.raises(KeyMismatchError, match="BLS12-381.*BN254|BN254.*BLS12-381"):
        verify(bn_vk, [7] * bn_vk.n_public, other)
    with pytest.raises(UnsupportedCurveError, match="'secp256k1'"):
        sjj.proof_from_json({"pi_a": [], "pi_b": [], "pi_c": [], "curve": "secp256k1"})
