"""cuzk against the real snarkjs: its .zkey/.wtns/.r1cs/JSON, its proofs, its verifier.

Artifacts come from scripts/snarkjs_ceremony.py (circom2 --prime bls12381, ptau power 10,
groth16 setup + one contribution), cached under ~/.cache/cuzk/snarkjs; the first run builds
them (a few minutes on two cores, mostly the powers of tau), later runs only call
``snarkjs groth16 verify`` (≈ 1–3 s each). Skipped when node/npm are missing.
"""

from __future__ import annotations

import importlib.util
import json
import os
import struct
import sys
from pathlib import Path

import pytest

from cuzk.curve import G1
from cuzk.curves import BN254
from cuzk.errors import (KeyMismatchError, ProofVerificationError, SnarkjsFormatError, UnsatisfiedConstraint,
                         UnsupportedCurveError)
from cuzk.field import FR, Fr
from cuzk.formats import snarkjs as sj
from cuzk.formats import snarkjs_json as sjj
from cuzk.groth16 import Proof, verify
from cuzk.groth16.prove import check_witness
from cuzk.prover import GpuProver
from cuzk.synth.binfile import read_sections, write_container

BN254_Q = BN254.fq.modulus

_spec = importlib.util.spec_from_file_location("snarkjs_ceremony", Path(__file__).parent.parent / "scripts" / "snarkjs_ceremony.py")
ceremony = importlib.util.module_from_spec(_spec)
sys.modules["snarkjs_ceremony"] = ceremony
_spec.loader.exec_module(ceremony)

_OK, _WHY = ceremony.toolchain_status()
pytestmark = pytest.mark.skipif(not _OK, reason=f"snarkjs interoperability tests skipped: {_WHY}")

POWER = 10  # one ptau for both circuits; the Poseidon circuit has 517 rows
CIRCUITS = {
    "chain": lambda: ceremony.ceremony("chain300", ceremony.chain_source(300), {"x": "3", "k": "7"}, POWER),
    "poseidon": lambda: ceremony.ceremony("poseidon", ceremony.poseidon_source(), {"a": "1", "b": "2"}, POWER),
}
_KEYS: dict = {}


@pytest.fixture(scope="module", params=sorted(CIRCUITS))
def art(request):
    """(folder, proving key with its .r1cs attached) for one circuit."""
    if request.param not in _KEYS:
        d = CIRCUITS[request.param]()
        _KEYS[request.param] = (d, sj.read_zkey(d / "circuit.zkey", r1cs=d / "circuit.r1cs"))
    return _KEYS[request.param]


@pytest.fixture(scope="module")
def chain():
    if "chain" not in _KEYS:
        d = CIRCUITS["chain"]()
        _KEYS["chain"] = (d, sj.read_zkey(d / "circuit.zkey", r1cs=d / "circuit.r1cs"))
    return _KEYS["chain"]


def snarkjs_verifies(folder: Path, public: list, proof: Proof, tmp_path: Path) -> bool:
    sjj.write_proof_json(tmp_path / "proof.json", proof)
    sjj.write_public_json(tmp_path / "public.json", public)
    res = ceremony.snarkjs("groth16", "verify", folder / "verification_key.json", tmp_path / "public.json",
                           tmp_path / "proof.json")
    assert ("OK" in res.stdout) == (res.returncode == 0), res.stdout + res.stderr
    return res.returncode == 0


def test_zkey_matches_snarkjs_verification_key(art):
    d, pk = art
    assert pk.convention == "snarkjs" and isinstance(pk, sj.SnarkjsProvingKey)
    exported = json.loads((d / "verification_key.json").read_text())
    assert sjj.vk_to_json(pk.vk) == exported  # every point, and e(α, β), byte for byte
    r1cs = pk.r1cs
    assert pk.n_constraints == r1cs.n_constraints and pk.n_vars == r1cs.n_vars
    assert pk.domain_size == 2 ** ceremony.power_for(r1cs.n_constraints + r1cs.n_public)
    assert pk.digest == r1cs.digest


def test_snarkjs_proof_verifies_in_cuzk(art):
    d, pk = art
    proof = sjj.read_proof_json(d / "proof.json")
    public = sjj.read_public_json(d / "public.json")
    vk = sjj.read_vk_json(d / "verification_key.json")
    assert verify(vk, public, proof) and verify(pk.vk, public, proof)
    assert not verify(vk, [public[0] ^ 1] + public[1:], proof)
    assert not verify(vk, public, Proof(a=G1.neg(proof.a), b=proof.b, c=proof.c))


def test_wtns_gives_the_snarkjs_public_signals(art):
    d, pk = art
    w = pk.witness(d / "witness.wtns")
    assert w.public_inputs == sjj.read_public_json(d / "public.json")
    check_witness(w)  # c = C·z from the .r1cs: every row holds
    assert w.digest == pk.digest


def test_cuzk_proof_verifies_in_snarkjs(art, tmp_path):
    d, pk = art
    w = pk.witness(d / "witness.wtns")
    proof = GpuProver(pk, device="cpu").prove(w)  # verified by cuzk before it is returned
    assert snarkjs_verifies(d, w.public_inputs, proof, tmp_path)
    tampered = [(w.public_inputs[0] + 1) % FR.modulus] + w.public_inputs[1:]
    assert not snarkjs_verifies(d, tampered, proof, tmp_path)


def test_zkey_without_r1cs_proves_and_catches_bad_witness(chain):
    d, _ = chain
    pk = sj.read_zkey(d / "circuit.zkey", checked=False)
    assert pk.r1cs is None
    z = sj.read_wtns(d / "witness.wtns")
    proof = GpuProver(pk, device="cpu").prove(pk.witness(z))
    assert verify(pk.vk, pk.witness(z).public_inputs, proof)
    bad = z.copy()
    bad[-1] = Fr.add(bad[-1:], Fr.one(1))[0]  # an internal wire off by one: c = a·b hides it ...
    with pytest.raises(ProofVerificationError):  # ... so the verify-before-return catches it
        GpuProver(pk, device="cpu").prove(pk.witness(bad))


def test_unsatisfied_wtns_with_r1cs_names_the_row(chain, tmp_path):
    d, pk = chain
    z = sj.read_wtns(d / "witness.wtns")
    z[-1] = Fr.add(z[-1:], Fr.one(1))[0]
    sj.write_wtns(tmp_path / "bad.wtns", z)
    with pytest.raises(UnsatisfiedConstraint, match="constraint"):
        GpuProver(pk, device="cpu").prove(pk.witness(tmp_path / "bad.wtns"))


def test_wtns_of_wrong_size(chain, tmp_path):
    d, pk = chain
    z = sj.read_wtns(d / "witness.wtns")
    sj.write_wtns(tmp_path / "short.wtns", z[:-1])
    with pytest.raises(KeyMismatchError, match=r"\.wtns has \d+ values but the zkey has \d+ wires"):
        pk.witness(tmp_path / "short.wtns")


def test_r1cs_other_circuit_is_refused(chain):
    d, _ = chain
    other = CIRCUITS["poseidon"]()
    with pytest.raises(KeyMismatchError, match="r1cs"):
        sj.read_zkey(d / "circuit.zkey", r1cs=other / "circuit.r1cs", checked=False)


def test_cuzk_written_r1cs_is_read_by_snarkjs(chain, tmp_path):
    d, pk = chain
    pk.r1cs.write(tmp_path / "c.r1cs")
    res = ceremony.snarkjs("r1cs", "info", tmp_path / "c.r1cs")
    assert res.returncode == 0, res.stderr
    assert f"# of Constraints: {pk.n_constraints}" in res.stdout
    assert sj.read_r1cs(tmp_path / "c.r1cs").digest == pk.r1cs.digest


def test_cli_prove_and_verify(chain, tmp_path, capsys):
    from cuzk import cli_groth16

    d, _ = chain
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    assert cli_groth16.main(["prove", str(d / "circuit.zkey"), str(d / "witness.wtns"), str(proof), str(public),
                             "--device", "cpu", "--r1cs", str(d / "circuit.r1cs")]) == 0
    vk = str(d / "verification_key.json")
    assert cli_groth16.main(["verify", vk, str(public), str(proof)]) == 0
    assert capsys.readouterr().out.strip() == "OK!"
    json.dump(["5"] + json.loads(public.read_text())[1:], open(tmp_path / "bad.json", "w"))
    assert cli_groth16.main(["verify", vk, str(tmp_path / "bad.json"), str(proof)]) == 1
    assert "Invalid proof" in capsys.readouterr().out
    assert cli_groth16.main(["prove", str(d / "witness.wtns"), str(d / "witness.wtns"), str(proof), str(public)]) == 1
    assert "bad magic" in capsys.readouterr().err
    assert cli_groth16.main(["verify", vk, str(tmp_path / "missing.json"), str(proof)]) == 1
    assert "No such file" in capsys.readouterr().err
    # through cuzk's own CLI a format error and a file error carry the same prefix
    from cuzk import cli

    assert cli.main(["groth16", "prove", str(d / "witness.wtns"), str(d / "witness.wtns"), str(proof), str(public)]) == 1
    assert capsys.readouterr().err.startswith("cuzk groth16 prove: error: ")
    assert cli.main(["groth16", "verify", vk, str(tmp_path / "missing.json"), str(proof)]) == 1
    assert capsys.readouterr().err.startswith("cuzk groth16 verify: error: ")


def test_cli_processes_end_at_once_with_their_output(chain, tmp_path):
    """``python -m cuzk groth16 prove|verify`` as processes: they end with os._exit
    (cuzk/cli_exit.py), and their files, stdout (a pipe, so buffered) and status still arrive."""
    import subprocess

    d, _ = chain
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    env = dict(os.environ, CUZK_CACHE_DIR=str(tmp_path / "cache"))

    def cuzk(*args):
        return subprocess.run([sys.executable, "-m", "cuzk", "groth16", *map(str, args)], capture_output=True,
                              text=True, timeout=600, env=env)

    r = cuzk("prove", d / "circuit.zkey", d / "witness.wtns", proof, public, "--device", "cpu", "-v")
    assert r.returncode == 0 and "prove" in r.stderr, r.stderr[-2000:]
    vk = d / "verification_key.json"
    r = cuzk("verify", vk, public, proof)
    assert (r.returncode, r.stdout.strip()) == (0, "OK!")
    assert ceremony.snarkjs("groth16", "verify", vk, public, proof).returncode == 0
    json.dump(["5"] + json.loads(public.read_text())[1:], open(tmp_path / "bad.json", "w"))
    r = cuzk("verify", vk, tmp_path / "bad.json", proof)
    assert (r.returncode, r.stdout.strip()) == (1, "Invalid proof")
    r = cuzk("prove", d / "witness.wtns", d / "witness.wtns", proof, public)
    assert r.returncode == 1 and r.stderr.startswith("cuzk groth16 prove: error: ")


# ---------------------------------------------------------------- malformed zkeys
def _rewrite(src: Path, dst: Path, edit) -> Path:
    sec = {k: bytes(v) for k, v in read_sections(src.read_bytes(), b"zkey", (1,), str(src)).items()}
    sec = edit(sec)
    write_container(dst, b"zkey", 1, sorted(sec.items()))
    return dst


@pytest.mark.parametrize("case, error, pattern", [
    ("truncated", SnarkjsFormatError, "truncated"),
    ("magic", SnarkjsFormatError, "bad magic"),
    ("version", SnarkjsFormatError, "version 2"),
    ("no H section", SnarkjsFormatError, r"missing section 9 \(H\)"),
    ("plonk", SnarkjsFormatError, "PLONK"),
    ("bn128", UnsupportedCurveError, "bn128"),
    ("bad point", SnarkjsFormatError, "H section \\(9\\) point 3 is not on the curve"),
    ("short section", SnarkjsFormatError, "B2 section"),
])
def test_malformed_zkey(chain, tmp_path, case, error, pattern):
    d, _ = chain
    src, dst = d / "circuit.zkey", tmp_path / "bad.zkey"
    data = src.read_bytes()
    if case == "truncated":
        dst.write_bytes(data[: len(data) // 2])
    elif case == "magic":
        dst.write_bytes(b"zkex" + data[4:])
    elif case == "version":
        dst.write_bytes(data[:4] + struct.pack("<I", 2) + data[8:])
    elif case == "no H section":
        _rewrite(src, dst, lambda s: {k: v for k, v in s.items() if k != 9})
    elif case == "plonk":
        _rewrite(src, dst, lambda s: {**s, 1: struct.pack("<I", 2)})
    elif case == "bn128":
        _rewrite(src, dst, lambda s: {**s, 2: s[2][:4] + BN254_Q.to_bytes(48, "little") + s[2][52:]})
    elif case == "bad point":
        def corrupt(s):
            h = bytearray(s[9])
            h[3 * 96 + 5] ^= 1  # x of point 3 (well below q): off the curve
            return {**s, 9: bytes(h)}
        _rewrite(src, dst, corrupt)
    elif case == "short section":
        _rewrite(src, dst, lambda s: {**s, 7: s[7][:-192]})
    with pytest.raises(error, match=pattern):
        sj.read_zkey(dst)


# ---------------------------------------------------------------- circom WASM in-process
def test_synthesizer_from_circom_matches_snarkjs_witness(art):
    pytest.importorskip("wasmtime", reason="the optional wasmtime extra is not installed")
    from cuzk.errors import InputError
    from cuzk.formats.snarkjs_wasm import synthesizer_from_circom

    d, pk = art
    synth = synthesizer_from_circom(d / "circuit.r1cs", d / "circuit.wasm", check=True)
    inputs = {k: int(v) for k, v in json.loads((d / "input.json").read_text()).items()}
    w = synth.synthesize(**inputs)
    assert (w.z == sj.read_wtns(d / "witness.wtns")).all()  # the same witness as `snarkjs wtns calculate`
    assert w.digest == pk.digest and w.public_inputs == sjj.read_public_json(d / "public.json")
    proof = GpuProver(pk, device="cpu").prove(w)
    assert verify(pk.vk, w.public_inputs, proof)
    name = sorted(inputs)[0]
    with pytest.raises(InputError, match="no input signal 'nope'"):
        synth.synthesize(**inputs, nope=1)
    with pytest.raises(InputError, match="takes 1 values, got 2"):
        synth.synthesize(**{**inputs, name: [1, 2]})
    with pytest.raises(InputError, match="input values were given"):
        synth.synthesize(**{k: v for k, v in inputs.items() if k != name})


def test_cli_prove_goes_through_the_key_cache_and_writes_both_outputs_or_neither(chain, tmp_path, capsys):
    from cuzk import cli_groth16

    d, _ = chain
    cache = tmp_path / "keys"
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    args = [str(d / "circuit.zkey"), str(d / "witness.wtns"), str(proof), str(public), "--device", "cpu",
            "--key-cache", str(cache), "-v"]
    assert cli_groth16.main(["prove", *args]) == 0
    assert "checked read, cached" in capsys.readouterr().err
    assert cli_groth16.main(["prove", *args]) == 0
    assert "key cache hit" in capsys.readouterr().err
    vk = str(d / "verification_key.json")
    assert cli_groth16.main(["verify", vk, str(public), str(proof)]) == 0
    capsys.readouterr()
    # public.json cannot be written (a directory): proof.json is not written either, no temp files
    before = sorted(p.name for p in tmp_path.iterdir())
    new_proof, blocked = tmp_path / "p2.json", tmp_path / "adir"
    blocked.mkdir()
    assert cli_groth16.main(["prove", str(d / "circuit.zkey"), str(d / "witness.wtns"), str(new_proof), str(blocked),
                             "--device", "cpu", "--key-cache", str(cache)]) == 1
    assert "directory" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(before + ["adir"])
    assert list(blocked.iterdir()) == []
    # the proof path a directory: nothing left beside it either
    assert cli_groth16.main(["prove", str(d / "circuit.zkey"), str(d / "witness.wtns"), str(blocked), str(public),
                             "--device", "cpu", "--key-cache", str(cache)]) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(before + ["adir"])
