"""Filecoin facts ``cuzk serve`` relies on, without a server: the v28 parameter file names derived
from the public parameters equal Filecoin's published ones, the registered-proof numbering is
filecoin-ffi's, and the payload decoders name the field they refuse."""

from __future__ import annotations

import base64
import json
import random
import types

import attrs

import pytest

from cuzk.field import FR
from cuzk.serve.filecoin import (
    REGISTERED_POST_PROOFS, REGISTERED_UPDATE_PROOFS, all_circuit_ids, filecoin_circuit, post_proof, update_proof,
)
from cuzk.serve.payloads import porep_work, post_work
from cuzk.serve.snap import snap_work
from cuzk.serve.validate import RequestError

from serve_support import sectors, snap_request, window_request, winning_request

# Filecoin's parameters.json (rust-fil-proofs), the names a `curio fetch-params` download holds
PUBLISHED = {
    "wpost-2k": "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-"
                "0170db1f394b35d995252228ee359194b13199d259380541dc529fb0099096b0",
    "winning-2k": "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-"
                  "3ea05428c9d11689f23529cde32fd30aabd50f7d2c93657c1d3650bca3e8ea9e",
    "wpost-64g": "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-2-"
                 "2627e4006b67f99cef990c0a47d5426cb7ab0a0ad58fc1061547bf2d28b09def",
    "winning-512m": "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-"
                    "7d739b8cf60f1b0709eeebee7730e297683552e4b69cab6984ec0285663c5781",
    "porep-2k": "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-"
                "032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f",
    "porep-32g": "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-"
                 "82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820",
    "porep-64g": "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-2-sha256_hasher-"
                 "96f1b4a04c5c51e4759bbf224bbc2ef5a42c7100f16ec0637123f16a845ddfb2",
    "snap-2k": "v28-empty-sector-update-merkletree-poseidon_hasher-8-0-0-"
               "fb9e095bebdd77511c0269b967b4d87ba8b8a525edaa0e165de23ba454510194",
    "snap-8m": "v28-empty-sector-update-merkletree-poseidon_hasher-8-0-0-"
               "92180959e1918d26350b8e6cfe217bbdd0a2d8de51ebec269078b364b715ad63",
    "snap-512m": "v28-empty-sector-update-merkletree-poseidon_hasher-8-0-0-"
                 "61fa69f38b9cc771ba27b670124714b4ea77fbeae05e377fb859c4a43b73a30c",
    "snap-32g": "v28-empty-sector-update-merkletree-poseidon_hasher-8-8-0-"
                "3b7f44a9362e3985369454947bc94022e118211e49fd672d52bec1cbfd599d18",
    "snap-64g": "v28-empty-sector-update-merkletree-poseidon_hasher-8-8-2-"
                "102e1444a7e9a97ebf1e3d6855dcc77e66c011ea66f936d9b2c508f87f2f83a7",
}


@pytest.mark.parametrize("cid", sorted(PUBLISHED))
def test_parameter_names_are_filecoins(cid):
    fc = filecoin_circuit(cid)
    assert fc.params_name == PUBLISHED[cid] + ".params" and fc.vk_name == PUBLISHED[cid] + ".vk"


def test_circuit_ids():
    ids = all_circuit_ids()
    assert len(ids) == 20 and {"porep-32g", "wpost-32g", "winning-32g", "snap-32g", "wpost-2k"} <= set(ids)
    assert filecoin_circuit("wpost-3g") is None and filecoin_circuit("cube") is None and filecoin_circuit(3) is None
    assert filecoin_circuit("snap-32g").kind == "snap"
    assert filecoin_circuit("snap-32g").update_params.partition_count == 16


def test_registered_update_proofs_follow_filecoin_ffi():
    # filecoin-ffi's RegisteredUpdateProof, as Curio's abi.RegisteredUpdateProof numbers it
    assert [(p.id, p.name, p.sector_size) for p in REGISTERED_UPDATE_PROOFS.values()] == [
        (0, "StackedDrg2KiBV1", 2048), (1, "StackedDrg8MiBV1", 8 << 20), (2, "StackedDrg512MiBV1", 512 << 20),
        (3, "StackedDrg32GiBV1", 32 << 30), (4, "StackedDrg64GiBV1", 64 << 30)]
    with pytest.raises(Exception, match="unknown registered update proof 5"):
        update_proof(5)


def test_registered_post_proofs_follow_filecoin_ffi():
    names = [REGISTERED_POST_PROOFS[i].name for i in range(15)]
    assert names[0] == "StackedDrgWinning2KiBV1" and names[4] == "StackedDrgWinning64GiBV1"
    assert names[8] == "StackedDrgWindow32GiBV1" and names[13] == "StackedDrgWindow32GiBV1_2"
    assert [post_proof(i).api_version for i in (0, 5, 10)] == ["1.0", "1.0", "1.2"]
    with pytest.raises(Exception, match="unknown registered PoSt proof 15"):
        post_proof(15)


def _req(**fields):
    base = dict(request_id="", proof_kind=0, sector_size=0, registered_proof=0, priority=0, vanilla_proof=b"",
                vanilla_proofs=[], sector_number=0, miner_id=0, randomness=b"", partition_index=0, comm_r_old=b"",
                comm_r_new=b"", comm_d_new=b"", deadline_unix_ms=0)
    return types.SimpleNamespace(**{**base, **fields})


def _refused(fn, req):
    with pytest.raises(RequestError) as e:
        fn(req)
    assert e.value.code == "INVALID_ARGUMENT"
    return e.value.message


def test_post_decoding():
    secs, r = sectors(2, seed=3), random.Random(9).randrange(FR.modulus)
    work = post_work(_req(**window_request(secs, r)))
    (inputs,) = work.inputs
    assert inputs["comm_r"] == [s.comm_r for s in secs] and len(inputs["siblings"][0]) == 10
    one = post_work(_req(**window_request(secs[:1], r)))
    assert one.inputs[0]["comm_r"] == [secs[0].comm_r] * 2  # a short partition repeats its last sector
    win = post_work(_req(**winning_request(secs[0], r)))
    assert len(win.inputs[0]["comm_r"]) == 66 and all(len(c) == 1 for c in win.inputs[0]["challenges"])
    good = window_request(secs, r)
    assert _refused(post_work, _req(**{**good, "sector_size": 8 << 20})).startswith("sector_size")
    assert _refused(post_work, _req(**{**good, "vanilla_proofs": [b""]})).startswith("vanilla_proofs[0]")
    assert _refused(post_work, _req(**{**good, "vanilla_proof": b"x"})).startswith("vanilla_proof:")
    assert "1..2" in _refused(post_work, _req(**{**good, "vanilla_proofs": good["vanilla_proofs"] * 2}))
    wr = winning_request(secs[0], r)
    assert _refused(post_work, _req(**{**wr, "vanilla_proofs": good["vanilla_proofs"][:1]})).startswith(
        "vanilla_proofs[0]: holds 10 inclusion proofs")


def _c1(**change) -> bytes:
    doc = {"registered_proof": "StackedDrg2KiBV1_1", "vanilla_proofs": {"StackedDrg2KiBV1": [[]]},
           "comm_r": [0] * 32, "comm_d": [0] * 32, "replica_id": [0] * 32, "seed": [0] * 32, "ticket": [0] * 32}
    return json.dumps({**doc, **change}).encode()


def _envelope(c1: bytes, num=7, size=2048) -> bytes:
    return json.dumps({"SectorNum": num, "Phase1Out": base64.b64encode(c1).decode(), "SectorSize": size}).encode()


def test_porep_envelope_decoding():
    base = dict(proof_kind=1, sector_size=2048, registered_proof=5, sector_number=7)
    vk = lambda fc: None  # noqa: E731 - never reached: every case is refused before proving
    cases = {
        b"": "vanilla_proof: is empty", b"\xff": "vanilla_proof: is not JSON", b"[]": "vanilla_proof: must be",
        b'{"SectorNum": 7}': "vanilla_proof: must be",
        b'{"SectorNum": -1, "Phase1Out": "", "SectorSize": 2048}': "vanilla_proof.SectorNum",
        b'{"SectorNum": 7, "Phase1Out": 5, "SectorSize": 2048}': "vanilla_proof.Phase1Out",
        _envelope(_c1(), num=8): "vanilla_proof.SectorNum: 8 differs",
        _envelope(_c1(), size=4096): "vanilla_proof.SectorSize",
        _envelope(b"{}"): "vanilla_proof.Phase1Out",
        _envelope(_c1(registered_proof="StackedDrg2KiBV1")): "vanilla_proof.Phase1Out: is a StackedDrg2KiBV1 C1",
        _envelope(_c1()): "vanilla_proof.Phase1Out",  # no challenges in its one partition
    }
    for raw, start in cases.items():
        msg = _refused(lambda q: porep_work(q, vk), _req(**base, vanilla_proof=raw))
        assert msg.startswith(start), (raw[:60], msg)
    assert _refused(lambda q: porep_work(q, vk), _req(**{**base, "registered_proof": 3})).startswith("sector_size")
    assert _refused(lambda q: porep_work(q, vk), _req(**{**base, "registered_proof": 20})).startswith("registered_proof")


@pytest.fixture(scope="module")
def updated():
    from cuzk.circuits.filecoin.porep import fr32_pad, seal
    from cuzk.circuits.filecoin.update import update

    sealed = seal(fr32_pad(random.Random(51).randbytes(2032)), registered_proof=5, prover_id=bytes(32), sector_id=3,
                  ticket=bytes([2] * 32))
    return update(sealed, fr32_pad(random.Random(52).randbytes(2032)))


def test_snap_decoding(updated):
    from cuzk.circuits.filecoin.update import partition_proofs

    (proof,) = partition_proofs(updated)
    good = snap_request(updated, [proof])
    work = snap_work(_req(**good), None)
    assert work.circuit.id == "snap-2k" and work.partitioned and len(work.inputs) == 1
    assert work.inputs[0]["comm_r_new"] == int.from_bytes(updated.comm_r_new, "little")
    cp = proof.challenge_proofs[3]
    leaf = (int.from_bytes(cp.proof_r_new.leaf, "little") + 1).to_bytes(32, "little")
    tampered = attrs.evolve(proof, challenge_proofs=[
        *proof.challenge_proofs[:3], attrs.evolve(cp, proof_r_new=attrs.evolve(cp.proof_r_new, leaf=leaf)),
        *proof.challenge_proofs[4:]])
    cases = {
        "registered_proof: unknown registered update proof 5": {"registered_proof": 5},
        "sector_size: 2048 does not match registered_proof StackedDrg8MiBV1": {"registered_proof": 1},
        "randomness: does not apply": {"randomness": bytes(32)},
        "vanilla_proof: does not apply": {"vanilla_proof": b"{}"},
        "partition_index: does not apply": {"partition_index": 1},
        "comm_r_old: must be 32 bytes": {"comm_r_old": updated.comm_r_old[:31]},
        "comm_d_new: is not a canonical": {"comm_d_new": b"\xff" * 32},
        "comm_r_new: is not Poseidon(comm_c": {"comm_r_new": updated.comm_r_old},
        "comm_d_new: is not the root": {"comm_d_new": updated.comm_r_new},
        "vanilla_proofs: a 2048-byte sector's update has 1 partitions": {"vanilla_proofs": []},
        "vanilla_proofs[0]: is not a bincode PartitionProof": {"vanilla_proofs": [b"garbage"]},
        "vanilla_proofs[0]: is not a bincode": {"vanilla_proofs": [good["vanilla_proofs"][0][:-1]]},
        "vanilla_proofs[0]: challenge_proofs[3].proof_r_new.leaf": {"vanilla_proofs": [tampered.to_bincode()]},
    }
    for start, change in cases.items():
        msg = _refused(lambda q: snap_work(q, None), _req(**{**good, **change}))
        assert msg.startswith(start), (start, msg)
    swapped = _req(**{**good, "comm_r_new": updated.comm_r_old})
    assert "(in vanilla_proofs[0])" in _refused(lambda q: snap_work(q, None), swapped)
