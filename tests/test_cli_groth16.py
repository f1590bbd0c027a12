"""``cuzk groth16 prove|verify`` arguments refused before any work, with one line and status 1."""

from __future__ import annotations

import pytest

from cuzk import cli


@pytest.mark.parametrize("spelling", ["same.json", "./same.json", "sub/../same.json"])
def test_prove_refuses_one_file_for_proof_and_public(tmp_path, monkeypatch, capsys, spelling):
    # both were written in turn to the one path: public.json's bytes were left, exit 0
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    argv = ["groth16", "prove", "missing.zkey", "missing.wtns", "same.json", spelling, "--device", "cpu", "--no-cache"]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("cuzk groth16 prove: error: ") and "each output needs its own file" in err
    assert "same.json" in err and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sub"]
