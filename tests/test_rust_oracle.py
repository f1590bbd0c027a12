"""The rust-fil-proofs oracle (tests/oracles/) against independent references.

The oracle seals with rust-fil-proofs itself; these tests check what it hands back with
hashlib and Python ints (Fr32 padding, comm_d's SHA-256 tree), with rust-fil-proofs'
published circuit counts, and with a Groth16 statement built here from trapdoors, so a
broken oracle cannot pass unnoticed. Skipped where cargo is absent.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "oracles"))
from rust_oracle import BLS12_381_R, read_r1cs, read_witness, run_oracle  # noqa: E402

PROVER_ID = bytes(range(32)).hex()
SECTOR_ID = 7
TICKET = bytes([0x5A] * 31 + [0x01]).hex()
SEED = bytes([0xC3] * 32).hex()
PROOF = "5"  # StackedDrg2KiBV1_1


def _fr32_pad(raw: bytes) -> bytes:
    """Fr32 padding by bit arithmetic: 254 data bits, then two zero bits, per 32 bytes."""
    bits = int.from_bytes(raw, "little")
    total = len(raw) * 8
    out = bytearray()
    for start in range(0, total, 254):
        chunk = (bits >> start) & ((1 << 254) - 1)
        out += chunk.to_bytes(32, "little")
    return bytes(out)


def _comm_d(sector: bytes) -> bytes:
    """Root of the binary SHA-256 tree over 32-byte nodes, each hash's top two bits cleared."""
    nodes = [sector[i : i + 32] for i in range(0, len(sector), 32)]
    while len(nodes) > 1:
        nxt = []
        for left, right in zip(nodes[::2], nodes[1::2]):
            h = bytearray(hashlib.sha256(left + right).digest())
            h[31] &= 0x3F  # keeps the digest below the field modulus
            nxt.append(bytes(h))
        nodes = nxt
    return nodes[0]


def _statement_args(sealed: dict) -> list[str]:
    return ["--c1", sealed["dir"] / "c1.json", "--prover-id", PROVER_ID, "--sector-id", str(SECTOR_ID)]


@pytest.fixture(scope="module")
def sealed(tmp_path_factory) -> dict:
    """One 2 KiB sector sealed by the oracle from seeded random data."""
    root = tmp_path_factory.mktemp("oracle")
    raw = random.Random(20240611).randbytes(2032)
    data = root / "data.bin"
    data.write_bytes(raw)
    out = root / "sector"
    res = run_oracle(
        root / "tmp", "seal", "--registered-proof", PROOF, "--sector-size", "2048",
        "--prover-id", PROVER_ID, "--sector-id", str(SECTOR_ID), "--ticket", TICKET,
        "--seed", SEED, "--data", data, "--out", out,
    )
    return {"root": root, "dir": out, "raw": raw, "summary": res.value}


def test_seal_outputs_match_independent_padding_and_comm_d(sealed):
    s = sealed["summary"]
    staged = (sealed["dir"] / "staged.bin").read_bytes()
    assert staged == _fr32_pad(sealed["raw"])
    assert s["comm_d"] == _comm_d(staged).hex()
    assert s["comm_p"] == s["comm_d"]  # one piece fills the sector
    assert len(bytes.fromhex(s["comm_r"])) == 32 and s["comm_r"] != s["comm_d"]
    replica = (sealed["dir"] / "sealed.bin").read_bytes()
    assert len(replica) == 2048 and replica != staged
    assert (s["registered_proof"], s["registered_proof_id"], s["sector_size"]) == ("StackedDrg2KiBV1_1", 5, 2048)


def test_c1_json_is_filecoin_proofs_api_layout(sealed):
    c1 = json.loads((sealed["dir"] / "c1.json").read_bytes())
    s = sealed["summary"]
    assert set(c1) == {"registered_proof", "vanilla_proofs", "comm_r", "comm_d", "replica_id", "seed", "ticket"}
    assert c1["registered_proof"] == "StackedDrg2KiBV1_1"
    assert bytes(c1["comm_r"]).hex() == s["comm_r"]
    assert bytes(c1["comm_d"]).hex() == s["comm_d"]
    assert bytes(c1["seed"]).hex() == SEED and bytes(c1["ticket"]).hex() == TICKET
    # one partition for 2 KiB, holding the two interactive challenges' vanilla proofs
    (partitions,) = c1["vanilla_proofs"].values()
    assert [len(p) for p in partitions] == [2]


def test_seal_accepts_padded_data_and_rejects_bad_sizes(sealed, tmp_path):
    staged = sealed["dir"] / "staged.bin"
    args = ["--registered-proof", PROOF, "--prover-id", PROVER_ID, "--sector-id", str(SECTOR_ID),
            "--ticket", TICKET, "--seed", SEED]
    again = run_oracle(tmp_path / "tmp", "seal", *args, "--data", staged, "--out", tmp_path / "a")
    assert again.value["comm_r"] == sealed["summary"]["comm_r"]  # sealing is deterministic
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\xff" * 2048)  # top bits set: not Fr32
    res = run_oracle(tmp_path / "tmp", "seal", *args, "--data", bad, "--out", tmp_path / "b", check=False)
    assert res.returncode == 2 and "Fr32" in res.stderr
    bad.write_bytes(b"\x00" * 100)
    res = run_oracle(tmp_path / "tmp", "seal", *args, "--data", bad, "--out", tmp_path / "c", check=False)
    assert res.returncode == 2 and "2032" in res.stderr


# --- Groth16 statement built here from known trapdoors (py_ecc), in bellperson's byte formats


def _g1_uncompressed(p) -> bytes:
    from py_ecc.optimized_bls12_381 import normalize

    x, y = normalize(p)
    return int(x).to_bytes(48, "big") + int(y).to_bytes(48, "big")


def _g2_uncompressed(p) -> bytes:
    from py_ecc.optimized_bls12_381 import normalize

    x, y = normalize(p)
    x0, x1 = (int(c) for c in x.coeffs)
    y0, y1 = (int(c) for c in y.coeffs)
    return b"".join(v.to_bytes(48, "big") for v in (x1, x0, y1, y0))


def _simulated_key_and_proof(inputs: list[int], rng: random.Random) -> tuple[bytes, bytes]:
    """A verifying key and a proof of it for `inputs`, made from the key's trapdoors.

    With alpha, beta, gamma, delta and the IC scalars known, A = a*G1, B = b*G2 and
    C = ((a*b - alpha*beta - gamma*(ic0 + sum x_i ic_i)) / delta) * G1 satisfy bellperson's
    check for exactly this input vector.
    """
    from py_ecc.bls.point_compression import compress_G1, compress_G2
    from py_ecc.optimized_bls12_381 import G1, G2, multiply

    r = BLS12_381_R
    alpha, beta, gamma, delta, a, b = (rng.randrange(1, r) for _ in range(6))
    ic = [rng.randrange(1, r) for _ in range(len(inputs) + 1)]
    acc = (ic[0] + sum(x * k for x, k in zip(inputs, ic[1:]))) % r
    c = (a * b - alpha * beta - gamma * acc) * pow(delta, -1, r) % r
    vk = (
        _g1_uncompressed(multiply(G1, alpha)) + _g1_uncompressed(multiply(G1, beta))
        + _g2_uncompressed(multiply(G2, beta)) + _g2_uncompressed(multiply(G2, gamma))
        + _g1_uncompressed(multiply(G1, delta)) + _g2_uncompressed(multiply(G2, delta))
        + len(ic).to_bytes(4, "big") + b"".join(_g1_uncompressed(multiply(G1, k)) for k in ic)
    )
    z1, z2 = compress_G2(multiply(G2, b))
    proof = (
        compress_G1(multiply(G1, a)).to_bytes(48, "big")
        + z1.to_bytes(48, "big") + z2.to_bytes(48, "big")
        + compress_G1(multiply(G1, c)).to_bytes(48, "big")
    )
    return vk, proof


@pytest.fixture(scope="module")
def simulated(sealed) -> dict:
    root = sealed["root"]
    res = run_oracle(root / "tmp", "seal-inputs", *_statement_args(sealed))
    (inputs_hex,) = res.value["public_inputs"]  # one partition
    inputs = [int.from_bytes(bytes.fromhex(h), "little") for h in inputs_hex]
    vk, proof = _simulated_key_and_proof(inputs, random.Random(7))
    (root / "sim.vk").write_bytes(vk)
    (root / "sim.proof").write_bytes(proof)
    return {"inputs_hex": inputs_hex, "vk": root / "sim.vk", "proof": root / "sim.proof"}


def test_seal_inputs_count(sealed, simulated):
    # 2 KiB StackedCircuit: replica_id, comm_d, comm_r and 18 per challenge, 2 challenges
    assert len(simulated["inputs_hex"]) == 39
    assert all(int.from_bytes(bytes.fromhex(h), "little") < BLS12_381_R for h in simulated["inputs_hex"])


@pytest.mark.parametrize("method", ["bellperson", "filecoin-proofs"])
def test_verify_seal_accepts_the_statement_and_rejects_a_changed_one(sealed, simulated, method):
    tmp = sealed["root"] / f"tmp-{method}"
    common = ["--vk", simulated["vk"], "--proof", simulated["proof"], "--method", method]
    ok = run_oracle(tmp, "verify-seal", *common, *_statement_args(sealed))
    assert ok.returncode == 0 and ok.value["valid"] is True
    assert ok.value["public_inputs"] == [simulated["inputs_hex"]]
    # another seed changes the challenges, hence the public inputs: the proof must fail
    other_seed = bytes([0xC4] * 32).hex()
    bad = run_oracle(tmp, "verify-seal", *common, *_statement_args(sealed), "--seed", other_seed, check=False)
    assert bad.returncode == 1 and bad.value["valid"] is False
    other_sector = [a if a != str(SECTOR_ID) else "8" for a in map(str, _statement_args(sealed))]
    bad = run_oracle(tmp, "verify-seal", *common, *other_sector, check=False)
    assert bad.returncode == 1 and bad.value["valid"] is False


def test_verify_seal_rejects_a_truncated_proof(sealed, simulated, tmp_path):
    short = tmp_path / "short.proof"
    short.write_bytes(simulated["proof"].read_bytes()[:191])
    res = run_oracle(tmp_path / "tmp", "verify-seal", "--vk", simulated["vk"], "--proof", short,
                     *_statement_args(sealed), check=False)
    assert res.returncode == 2 and "192" in res.stderr


# --- R1CS dump of the production 2 KiB partition


@pytest.mark.slow
def test_dump_r1cs_counts_and_rows(sealed, simulated):
    root = sealed["root"]
    out = root / "p0.r1cs"
    res = run_oracle(root / "tmp", "dump-r1cs", "--c1", sealed["dir"] / "c1.json", "--partition", "0", "--out", out)
    v = res.value
    # StackedDrg2KiBV1_1, partition 0 of 1: rust-fil-proofs' StackedCircuit as synthesized
    # (bellperson's BenchCS agrees inside the oracle); bellperson's prover adds one
    # input * 0 = 0 row per input on top of these.
    assert (v["num_inputs"], v["num_aux"], v["num_constraints"]) == (40, 2_685_673, 2_687_921)
    assert v["satisfied"] and v["public_inputs_match_verifier"]
    assert v["public_inputs"] == simulated["inputs_hex"]

    r1cs = read_r1cs(out)
    wit = read_witness(Path(v["witness"]))
    assert (r1cs.num_inputs, r1cs.num_aux, r1cs.num_constraints) == (40, 2_685_673, 2_687_921)
    assert (wit.num_inputs, wit.num_aux) == (40, 2_685_673)
    assert wit.value(0) == 1
    assert [wit.value(i) for i in range(1, 40)] == [int.from_bytes(bytes.fromhex(h), "little") for h in v["public_inputs"]]

    def dot(m, i, override=None):
        total = 0
        for col, coeff in m.row(i, r1cs.coeffs):
            val = override[1] if override and override[0] == col else wit.value(col)
            total += coeff * val
        return total % BLS12_381_R

    rng = random.Random(3)
    rows = rng.sample(range(r1cs.num_constraints), 300) + [0, r1cs.num_constraints - 1]
    for i in rows:
        assert dot(r1cs.a, i) * dot(r1cs.b, i) % BLS12_381_R == dot(r1cs.c, i), i
    # the check can fail: a row x * x = x (booleanity, as SHA-256 gadgets emit) broken by x = 2
    flipped = 0
    for i in rows:
        terms = r1cs.a.row(i, r1cs.coeffs)
        if len(terms) == 1 and terms[0][0] >= r1cs.num_inputs:
            col = terms[0][0]
            lhs = dot(r1cs.a, i, (col, 2)) * dot(r1cs.b, i, (col, 2)) % BLS12_381_R
            if lhs != dot(r1cs.c, i, (col, 2)):
                flipped += 1
    assert flipped > 0
