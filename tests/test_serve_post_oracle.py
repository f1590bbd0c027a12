"""``cuzk serve`` proves PoSt requests built from rust-fil-proofs' own vanilla proofs, and
filecoin-proofs' verifier accepts the proof bytes it answers.

tests/test_serve_post.py sends vanilla proofs cuzk itself wrote, so a mistake in the bincode
layout would cancel out there. Here the bytes in ``vanilla_proofs`` are the ones
filecoin-proofs-api's ``generate_single_vanilla_proof`` returns for 2 KiB sectors sealed by
rust-fil-proofs (tests/oracles/post_sectors.py), as Curio passes them on; the daemon's answers
go to ``verify_window_post`` / ``verify_winning_post`` through the Rust oracle with cuzk's
verifying keys. The same for 8 MiB sectors (slow): six levels of Merkle path per challenge, the
keys from tests/dev_keys.py read by the daemon from its param cache. Skipped where grpc or cargo
is absent."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

grpc = pytest.importorskip("grpc")

sys.path.insert(0, str(Path(__file__).resolve().parent / "oracles"))
from post_sectors import RANDOMNESS, STATEMENTS, STATEMENTS_8M, make_oracle_post  # noqa: E402

import cuzk  # noqa: E402
from cuzk.formats.bellperson import vk_to_bytes  # noqa: E402
from cuzk.serve.filecoin import circuit_id, filecoin_circuit, post_proof  # noqa: E402
from cuzk.serve.proto.cuzk.v1 import proving_pb2 as pb  # noqa: E402

from dev_keys import dev_param_cache  # noqa: E402
from post_keys_support import post_keys  # noqa: E402
from serve_support import serving  # noqa: E402

A = pb.AwaitProofResponse


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    oracle = make_oracle_post(tmp_path_factory.mktemp("post-oracle"))
    folder = tmp_path_factory.mktemp("params")
    vks = {}
    # WindowPoSt's key goes to the param cache, where the daemon reads it by its v28 name
    fc = filecoin_circuit("wpost-2k")
    _, pk, vks["wpost-2k"] = post_keys("window")
    pk.write(folder / fc.params_name)
    (folder / fc.vk_name).write_bytes(vks["wpost-2k"].to_bytes())
    # WinningPoSt's is handed over in memory, as tests/test_serve_post.py does: its first checked
    # read from a file takes ~50 s on two cores
    engine = cuzk.Engine(device="cpu", memory_budget=None)
    _, pk, vks["winning-2k"] = post_keys("winning")
    engine.register("winning-2k", cuzk.Synthesizer(filecoin_circuit("winning-2k").circuit()), pk, priority="critical")
    with serving(folder, engine=engine) as (_, client):
        yield oracle, client, vks


def _circuit(st) -> str:
    """The daemon's circuit id for the statement's registered proof (as it routes a request)."""
    return circuit_id(post_proof(st.registered_proof).kind, st.sector_size)


def _prove(client, oracle, st, partition):
    per = filecoin_circuit(_circuit(st)).post_counts[1] if st.kind == "window" else 1
    ids = st.sector_ids[partition * per:(partition + 1) * per]
    r = client.prove(proof_kind=3 if st.kind == "window" else 4, sector_size=st.sector_size,
                     registered_proof=st.registered_proof, vanilla_proofs=oracle.vanilla_bytes(st.name, ids),
                     randomness=RANDOMNESS, miner_id=1000, partition_index=partition,
                     request_id=f"oracle-{st.name}-{partition}")
    assert r.status == A.COMPLETED, r.error_message
    assert len(r.proof) == 192
    return r.proof


def _check(oracle, st, vk, proof) -> None:
    ok = oracle.verify(st.name, vk_to_bytes(vk), proof)
    assert (ok.returncode, ok.value["valid"]) == (0, True), ok.stderr
    # the key file the daemon reads is the one filecoin-proofs looks for
    assert Path(ok.value["vk"]).name == filecoin_circuit(_circuit(st)).vk_name
    other = (int.from_bytes(RANDOMNESS, "little") + 1).to_bytes(32, "little")
    bad = oracle.verify(st.name, vk_to_bytes(vk), proof, randomness=other)
    assert (bad.returncode, bad.value["valid"]) == (1, False), bad.stderr


@pytest.mark.parametrize("name", list(STATEMENTS))
def test_filecoin_proofs_accepts_what_serve_proves_from_rust_fil_proofs_vanilla(served, name):
    oracle, client, vks = served
    st = STATEMENTS[name]
    # WindowPoSt: one request per partition, the proofs concatenated, as Curio submits them
    proof = b"".join(_prove(client, oracle, st, k) for k in range(st.partitions))
    _check(oracle, st, vks[_circuit(st)], proof)


@pytest.fixture(scope="module")
def oracle_8m(tmp_path_factory):
    return make_oracle_post(tmp_path_factory.mktemp("post-oracle-8m"), 8 << 20)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(STATEMENTS_8M))
def test_filecoin_proofs_accepts_what_serve_proves_of_8mib_sectors(oracle_8m, name):
    st = STATEMENTS_8M[name]
    folder, vk = dev_param_cache(_circuit(st), seed=8)
    with serving(folder, timeout=600, key_cache=folder / "keys") as (_, client):
        proof = b"".join(_prove(client, oracle_8m, st, k) for k in range(st.partitions))
    _check(oracle_8m, st, vk, proof)
