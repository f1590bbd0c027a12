"""``cuzk porep seal|c2|verify``: a 2 KiB sector sealed from a file, its C1 JSON (plain, and in
Curio's envelope) proved with the development key found by its v28 name in a param cache
(tests/dev_keys.py), the proof file accepted by ``verify`` and by ``verify_commit_phase2``; bad
files, ids and missing parameters refused with one line naming what is wrong."""

from __future__ import annotations

import base64
import json
import random

import pytest

from cuzk import cli
from cuzk.cli_porep import read_c1
from cuzk.circuits.filecoin.porep import c2, commit_phase1, fr32_pad, seal
from cuzk.circuits.filecoin.porep.c1 import SealCommitPhase1Output, curio_envelope
from cuzk.errors import VanillaFormatError
from cuzk.serve.filecoin import FilecoinCircuit

from memory_limit_support import run_limited, sparse_file

PROVER, SECTOR, TICKET, SEED = bytes(range(32)), 42, bytes([9] * 32), bytes(range(100, 132))
RAW = random.Random(41).randbytes(2032)


def _seal_args(data, out, *extra):
    return ["porep", "seal", str(data), str(out), "--registered-proof", "5", "--prover-id", PROVER.hex(),
            "--sector-id", str(SECTOR), "--ticket", TICKET.hex(), "--seed", SEED.hex(), *extra]


@pytest.fixture(scope="module")
def c1():
    sealed = seal(fr32_pad(RAW), registered_proof=5, prover_id=PROVER, sector_id=SECTOR, ticket=TICKET)
    return commit_phase1(sealed, SEED)


@pytest.fixture()
def c1_file(tmp_path, c1):
    path = tmp_path / "c1.json"
    path.write_text(c1.to_json())
    return path


def _envelope(c1, sector=SECTOR) -> bytes:
    return json.dumps({"SectorNum": sector, "Phase1Out": base64.b64encode(c1.to_json().encode()).decode(),
                       "SectorSize": 2048}).encode()


def test_seal_writes_the_c1_of_the_native_sealer(tmp_path, c1, capsys):
    (tmp_path / "raw.bin").write_bytes(RAW)
    (tmp_path / "padded.bin").write_bytes(fr32_pad(RAW))
    assert cli.main(_seal_args(tmp_path / "raw.bin", tmp_path / "a.json", "--raw")) == 0
    assert capsys.readouterr().out.split() == ["comm_d", c1.comm_d.hex(), "comm_r", c1.comm_r.hex()]
    assert cli.main(_seal_args(tmp_path / "padded.bin", tmp_path / "b.json")) == 0
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text() == c1.to_json()


@pytest.mark.parametrize("flag, value, message", [
    ("--ticket", "09" * 31, "--ticket: needs 32 bytes"),
    ("--seed", "zz" * 32, "--seed: not hex"),
    ("--registered-proof", "99", "registered"),
])
def test_seal_refuses_bad_ids(tmp_path, capsys, flag, value, message):
    (tmp_path / "raw.bin").write_bytes(RAW)
    args = _seal_args(tmp_path / "raw.bin", tmp_path / "c1.json", "--raw")
    args[args.index(flag) + 1] = value
    assert cli.main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("cuzk porep seal: error:") and message in err
    assert not (tmp_path / "c1.json").exists()


def test_seal_refuses_data_of_another_size(tmp_path, capsys):
    (tmp_path / "raw.bin").write_bytes(RAW[:-1])
    assert cli.main(_seal_args(tmp_path / "raw.bin", tmp_path / "c1.json", "--raw")) == 1
    assert "2031 bytes; a 2048-byte sector holds 2032 unpadded bytes" in capsys.readouterr().err


def test_curio_envelope_round_trip_and_its_refusals(c1):
    doc, text = curio_envelope(_envelope(c1))
    assert doc["SectorNum"] == SECTOR and SealCommitPhase1Output.from_json(text) == c1
    for raw, field in [(b"[]", "envelope"), (b'{"SectorNum": 1}', "envelope"),
                       (b'{"SectorNum": -1, "Phase1Out": "", "SectorSize": 2048}', "envelope.SectorNum"),
                       (b'{"SectorNum": 1, "Phase1Out": "%%", "SectorSize": 2048}', "envelope.Phase1Out")]:
        with pytest.raises(VanillaFormatError) as e:
            curio_envelope(raw)
        assert e.value.path == field and str(e.value).startswith(field)


def test_c2_refuses_a_broken_c1_naming_its_field(tmp_path, c1, capsys):
    doc = json.loads(c1.to_json())
    doc["comm_d"] = doc["comm_d"][:31]
    bad = tmp_path / "c1.json"
    bad.write_text(json.dumps(doc))
    assert cli.main(["porep", "c2", str(bad), str(tmp_path / "proof.bin"), "--param-cache", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("cuzk porep c2: error:") and "comm_d" in err
    envelope = tmp_path / "env.json"
    envelope.write_bytes(json.dumps({"SectorNum": 1, "Phase1Out": "not base64!", "SectorSize": 2048}).encode())
    assert cli.main(["porep", "c2", str(envelope), str(tmp_path / "proof.bin"), "--param-cache", str(tmp_path)]) == 1
    assert "Phase1Out: is not base64" in capsys.readouterr().err
    assert not (tmp_path / "proof.bin").exists()


def test_c2_without_parameters_names_the_file_it_looked_for(tmp_path, c1, c1_file, capsys):
    reordered = tmp_path / "reordered.json"  # another writer's field order is still a C1, not an envelope
    doc = json.loads(c1.to_json())
    reordered.write_text(json.dumps({k: doc[k] for k in reversed(list(doc))}))
    for path in (c1_file, reordered):
        assert cli.main(["porep", "c2", str(path), str(tmp_path / "proof.bin"), "--param-cache", str(tmp_path)]) == 1
        err = capsys.readouterr().err
        assert f"no parameter file {tmp_path / FilecoinCircuit('porep', 2048).params_name}" in err
    assert cli.main(["porep", "verify", str(c1_file), str(tmp_path / "proof.bin"), "--param-cache", str(tmp_path)]) == 1
    assert f"no verifying key {tmp_path / FilecoinCircuit('porep', 2048).vk_name}" in capsys.readouterr().err
    assert cli.main(["porep", "c2", str(tmp_path / "missing.json"), str(tmp_path / "proof.bin")]) == 1
    assert capsys.readouterr().err.startswith("cuzk porep c2: error: [Errno 2] No such file or directory")
    assert cli.main(["porep", "c2", str(c1_file), str(tmp_path / "proof.bin"), "--ones-blocks", "3"]) == 1
    assert capsys.readouterr().err.startswith("cuzk porep c2: error: block must be one of (2, 4, 8), got 3")


@pytest.mark.slow  # a 2.7M-constraint partition: ~1 min to trace and prove, minutes more where no dev key exists yet
def test_c2_from_files_verifies_and_verify_rejects_another_proof(tmp_path, c1, c1_file, capsys):
    from dev_keys import dev_param_cache

    folder, vk = dev_param_cache("porep-2k", seed=5)
    out = tmp_path / "proof.bin"
    common = ["--param-cache", str(folder)]
    assert cli.main(["porep", "c2", str(c1_file), str(out), *common, "--key-cache", str(folder / "keys"),
                     "--device", "cpu", "--ones-blocks", "4"]) == 0, capsys.readouterr().err
    assert "1 partition(s) of StackedDrg2KiBV1_1, verified" in capsys.readouterr().out
    data = out.read_bytes()
    assert len(data) == c2.PROOF_BYTES and c2.verify_commit_phase2(c1, vk, data)
    # the same sector from Curio's envelope: verify reads it too
    envelope = tmp_path / "envelope.json"
    envelope.write_bytes(_envelope(c1))
    assert cli.main(["porep", "verify", str(envelope), str(out), *common]) == 0
    assert capsys.readouterr().out == "OK!\n"
    # −A instead of A (the compressed sign bit flipped): still points, no longer a proof of this sector
    flipped = tmp_path / "flipped.bin"
    flipped.write_bytes(bytes([data[0] ^ 0x20]) + data[1:])
    assert cli.main(["porep", "verify", str(c1_file), str(flipped), *common]) == 1
    assert capsys.readouterr().out == "Invalid proof\n"
    assert cli.main(["porep", "verify", str(c1_file), str(tmp_path / "c1.json"), *common]) == 1
    assert "bytes; a StackedDrg2KiBV1_1 proof is 1 partition(s) x 192 = 192 bytes" in capsys.readouterr().err


def test_an_envelope_too_large_for_any_c1_is_refused_before_it_is_read(tmp_path, c1, capsys, monkeypatch):
    import cuzk.circuits.filecoin.porep.c1 as c1_module

    envelope = tmp_path / "envelope.json"
    envelope.write_bytes(_envelope(c1))
    monkeypatch.setattr(c1_module, "MAX_C1_JSON_BYTES", 3 * 1024)  # the bound scales with the C1's
    assert cli.main(["porep", "verify", str(envelope), str(tmp_path / "proof.bin"), "--param-cache", str(tmp_path)]) == 1
    assert "more than an envelope of the largest C1 output" in capsys.readouterr().err



@pytest.fixture(scope="module")
def vk_file(tmp_path_factory):
    import numpy as np

    from cuzk import Synthesizer, groth16
    from cuzk.circuits import Cube

    _, vk = groth16.setup(Synthesizer(Cube()).r1cs, rng=np.random.default_rng(1))
    path = tmp_path_factory.mktemp("vk") / "cube.vk"
    path.write_bytes(vk.to_bytes())
    return path


def test_files_are_sized_before_they_are_read(tmp_path, c1_file, vk_file):
    # each was read whole first: gigabytes of a sparse file, /dev/zero until memory ran out
    big = sparse_file(tmp_path / "big.bin")
    proof = tmp_path / "proof.bin"
    proof.write_bytes(bytes(192))
    seal_raw = lambda data: _seal_args(data, tmp_path / "out.json", "--raw")  # noqa: E731
    cases = [
        (seal_raw(big), f"{big}: {4 << 30} bytes; a 2048-byte sector holds 2032 unpadded bytes"),
        (seal_raw("/dev/zero"), "/dev/zero: not a regular file (a character device); the sector's payload must be one"),
        (_seal_args("/dev/zero", tmp_path / "out.json"), "/dev/zero: not a regular file (a character device)"),
        (["porep", "verify", c1_file, big, "--vk", vk_file],
         f"{big}: {4 << 30} bytes; a StackedDrg2KiBV1_1 proof is 1 partition(s) x 192 = 192 bytes"),
        (["porep", "verify", c1_file, "/dev/zero", "--vk", vk_file], "/dev/zero: not a regular file"),
        (["porep", "verify", c1_file, proof, "--vk", big], f"{big}: {4 << 30} bytes; a verifying key (.vk) is at most"),
        (["porep", "verify", c1_file, proof, "--vk", "/dev/zero"], "/dev/zero: not a regular file"),
        (["porep", "verify", "/dev/zero", proof, "--vk", vk_file], "/dev/zero: not a regular file"),
    ]
    for (argv, message), (status, err) in zip(cases, run_limited([argv for argv, _ in cases])):
        assert status == 1 and message in err and err.count("\n") == 1, (argv, err)
    assert not (tmp_path / "out.json").exists()


def test_seal_names_a_sector_file_of_another_size_and_a_cache_dir_that_is_a_file(tmp_path, capsys):
    # an empty file was "cannot mmap an empty file" (no file named, exit 2); the cache dir "File exists"
    (tmp_path / "empty").write_bytes(b"")
    assert cli.main(_seal_args(tmp_path / "empty", tmp_path / "c1.json")) == 1
    assert (f"{tmp_path / 'empty'}: 0 bytes; a 2048-byte sector's Fr32-padded data is 2048 bytes"
            in capsys.readouterr().err)
    (tmp_path / "padded.bin").write_bytes(fr32_pad(RAW))
    (tmp_path / "afile").write_bytes(b"x")
    for cache, why in ((tmp_path / "afile", "exists and is not a directory"),
                       (tmp_path / "afile" / "sub", "cannot make the directory: Not a directory")):
        assert cli.main(_seal_args(tmp_path / "padded.bin", tmp_path / "c1.json", "--cache-dir", str(cache))) == 1
        err = capsys.readouterr().err
        assert err == f"cuzk porep seal: error: --cache-dir {cache}: {why}\n"
    assert not (tmp_path / "c1.json").exists()


def test_an_envelope_whose_sector_size_is_not_its_c1s_is_refused(tmp_path, c1, capsys):
    envelope = tmp_path / "envelope.json"
    doc = json.loads(_envelope(c1))
    envelope.write_text(json.dumps({**doc, "SectorSize": 32 << 30}))
    with pytest.raises(VanillaFormatError) as e:
        read_c1(envelope)
    assert e.value.path == f"{envelope}.SectorSize"
    argv = ["porep", "verify", str(envelope), str(tmp_path / "proof.bin"), "--param-cache", str(tmp_path)]
    assert cli.main(argv) == 1
    assert (f"{envelope}.SectorSize: {32 << 30} differs from the sector size of its StackedDrg2KiBV1_1 C1 output, "
            "2048") in capsys.readouterr().err
    envelope.write_bytes(_envelope(c1))
    assert read_c1(envelope) == c1
