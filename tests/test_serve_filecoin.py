"""Filecoin facts ``cuzk serve`` relies on, without a server: the v28 parameter file names derived
from the public parameters equal Filecoin's published ones, the registered-proof numbering is
filecoin-ffi's, and the payload decoders name the field they refuse."""

from __future__ import annotations

import base64
import json
import random
import types

import pytest

from cuzk.field import FR
from cuzk.serve.filecoin import REGISTERED_POST_PROOFS, all_circuit_ids, filecoin_circuit, post_proof
from cuzk.serve.payloads import porep_work, post_work
from cuzk.serve.validate import RequestError

from serve_support import sectors, window_request, winning_request

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
    with pytest.raises(Exception, match="SnapDeals"):
        filecoin_circuit("snap-32g").params_name


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
