"""The key cache under what a long-running daemon meets (cuzk/engine/keycache.py, keysource.py,
keyfile.py, cuzk/cli_keys.py): damaged small records, a ``cuzk keys clear`` racing first loads,
cache files changed or truncated by hand, sources that are not keys, a ``--dir`` that is a file.

Each case must end in the key, a rebuild or a ``cuzk.errors`` exception, never in another
exception or a dead process.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from cuzk.engine import keycache
from cuzk.engine.keyarrays import same_key
from cuzk.engine.keycache import KeyCache
from cuzk.engine.keysource import SourceRecord
from cuzk.errors import CuzkError, KeyCacheFormatError, ParamsFormatError, SnarkjsFormatError
from cuzk.formats.snarkjs import read_zkey, write_wtns
from cuzk.formats.snarkjs_setup import setup_snarkjs
from cuzk.formats.snarkjs_write import write_zkey
from cuzk.groth16 import ProvingKey, ToxicWaste, setup_with_waste
from cuzk.synth import Synthesizer

from test_groth16_support import WASTE, CubeTag

DEEP = "[" * 50_000  # inside the 64 KiB a record reader reads; json.loads alone raises RecursionError


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """A small circuit's .params, .zkey and .wtns."""
    d = tmp_path_factory.mktemp("keys")
    synth = Synthesizer(CubeTag())
    setup_with_waste(synth.r1cs, ToxicWaste(**WASTE)).write(d / "c.params")
    write_zkey(setup_snarkjs(synth.r1cs, waste=ToxicWaste(**WASTE)), d / "c.zkey")
    write_wtns(d / "c.wtns", synth.synthesize(x=3, out=35, tag=9).z)
    return d / "c.params", d / "c.zkey", d / "c.wtns"


def _damage_records(cache_dir: Path) -> int:
    """Replace every source record and stamp by deeply nested JSON; how many there were."""
    files = [*(cache_dir / "sources").glob("*.json"), *(cache_dir / "verified").glob("*.json")]
    for p in files:
        p.write_text(DEEP)
    return len(files)


# ---------------------------------------------------------------------------- damaged records
def test_a_deeply_nested_source_record_means_hash_the_source_again(keys, tmp_path):
    params, _, _ = keys
    KeyCache(tmp_path).load(params)
    assert _damage_records(tmp_path) == 2  # one source record, one stamp
    key, info = KeyCache(tmp_path).load(params)
    assert info.hit and info.source_check == "full hash" and info.data_check == "full"
    assert same_key(key, ProvingKey.read(params))
    rec = SourceRecord.load(tmp_path / "sources", str(params))  # rewritten whole
    assert rec is not None and rec.digest == info.digest


@pytest.mark.parametrize("text", [DEEP, "[]", "{}", '{"source": 1}', "nul", "\xff", '{"a": ' * 30 + "1" + "}" * 30])
def test_every_damaged_record_reads_as_none(tmp_path, text):
    src = str(tmp_path / "k.params")
    Path(SourceRecord.path_in(tmp_path, src)).write_text(text, errors="surrogateescape")
    assert SourceRecord.load(tmp_path, src) is None
    with pytest.raises(KeyCacheFormatError):
        SourceRecord.parse(text.encode(errors="surrogateescape"), "record")


def test_a_record_with_fields_of_the_wrong_type_reads_as_none(tmp_path):
    src = str(tmp_path / "k.params")
    good = {"source": src, "size": 1, "mtime_ns": 2, "inode": 3, "device": 4, "digest": "a" * 64,
            "sampled": "b" * 64, "kind": "params"}
    SourceRecord(**good).save(tmp_path)
    assert SourceRecord.load(tmp_path, src) == SourceRecord(**good)
    for field, value in (("size", "1"), ("digest", ["a"]), ("digest", "../" * 20), ("kind", "pem"), ("inode", True),
                         ("mtime_ns", 1.5), ("sampled", None)):
        with pytest.raises(KeyCacheFormatError, match=field):
            SourceRecord.parse(__import__("json").dumps({**good, field: value}).encode(), "record")


def test_cli_keys_load_and_groth16_prove_survive_nested_records(keys, tmp_path, capsys):
    from cuzk import cli_groth16, cli_keys

    params, zkey, wtns = keys
    d = str(tmp_path / "cache")
    assert cli_keys.main(["--dir", d, "load", str(params)]) == 0
    _damage_records(Path(d))
    assert cli_keys.main(["--dir", d, "load", str(params)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("hit")
    args = [str(zkey), str(wtns), str(tmp_path / "proof.json"), str(tmp_path / "public.json"), "--device", "cpu",
            "--key-cache", d]
    assert cli_groth16.main(["prove", *args]) == 0
    _damage_records(Path(d))
    assert cli_groth16.main(["prove", *args]) == 0, capsys.readouterr().err
