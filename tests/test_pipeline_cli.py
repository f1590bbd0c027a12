"""The ``cuzk`` CLI and cuzk.demo, on simulated (sleeping) stages."""

import importlib.util
import json
import subprocess
import sys

import pytest

from cuzk import cli, demo
from cuzk.errors import InputError, ProofVerificationError
from cuzk.timeline import EventKind as K, Timeline
from pipeline_support import no_leaked_threads  # noqa: F401  (autouse)


def test_version_and_help(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == "cuzk 0.1.0"
    assert cli.main([]) == 2


def test_info_lists_environment(capsys):
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    for key in ("numba", "threading layer (cuzk choice)", "cache dir", "cupy", "cuda device", "cpu count"):
        assert key in out


def test_waterfall_renders_a_saved_timeline(tmp_path, capsys):
    tl = Timeline()
    for kind in (K.JOB_SUBMIT, K.SYNTH_START, K.SYNTH_END, K.GPU_START, K.GPU_END, K.JOB_DONE):
        tl.record(kind, 1)
    path = tmp_path / "run.jsonl"
    tl.save(path)
    assert cli.main(["waterfall", str(path), "--width", "20"]) == 0
    out = capsys.readouterr().out
    assert "GPU utilization" in out and "P1" in out and "S synthesis" in out
    bad = tmp_path / "bad.jsonl"
    bad.write_text("garbage\n")
    assert cli.main(["waterfall", str(bad)]) == 1
    assert "error" in capsys.readouterr().err


def test_demo_on_simulated_stages(capsys):
    assert cli.main(["demo", "--simulate", "0.02,0.01", "--proofs", "3"]) == 0
    out = capsys.readouterr().out
    assert out.count("all verified") == 2 and "GPU utilization:" in out


def test_bench_writes_traces(tmp_path, capsys):
    trace = tmp_path / "t.json"
    assert cli.main(["bench", "--simulate", "0.01,0.005", "--proofs", "3", "--concurrency", "1,auto",
                     "--trace", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "concurrency=1" in out and "concurrency=auto" in out
    for tag in ("1", "auto"):
        data = json.loads((tmp_path / f"t.c{tag}.json").read_text())
        assert any(e["ph"] == "X" for e in data["traceEvents"])
    assert cli.main(["bench", "--simulate", "0,0", "--concurrency", "0"]) == 1
    assert cli.main(["bench", "--simulate", "x,y"]) == 2


def test_bad_counts_and_unwritable_outputs_are_one_line_errors(tmp_path, capsys):
    for argv in (["demo", "--simulate", "0,0", "--proofs", "0"], ["bench", "--simulate", "0,0", "--proofs", "-1"]):
        with pytest.raises(SystemExit) as e:  # ran no proof and printed a summary of NaNs, exit 0
            cli.main(argv)
        assert e.value.code == 2 and "positive integer" in capsys.readouterr().err
    # an unwritable --trace escaped as a FileNotFoundError traceback
    assert cli.main(["bench", "--simulate", "0,0", "--proofs", "1", "--concurrency", "1",
                     "--trace", str(tmp_path / "no" / "dir" / "t.json")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No such file" in err and "Traceback" not in err
    # --rows 0 was a bare ValueError from max() of nothing (exit 2, "max() arg is an empty sequence")
    path = tmp_path / "t.jsonl"
    tl = Timeline()
    tl.record(K.SYNTH_START, 1)
    tl.record(K.SYNTH_END, 1)
    tl.save(path)
    assert cli.main(["waterfall", str(path), "--rows", "0"]) == 1
    assert "max_rows must be a positive int" in capsys.readouterr().err


@pytest.mark.skipif(importlib.util.find_spec("cuzk.prover") is not None, reason="real prover present")
def test_demo_without_real_stack_says_so(capsys):
    assert cli.main(["demo"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not available" in err


def test_run_demo_rejects_bad_proofs():
    st = demo.simulated_stages(0, 0)
    with pytest.raises(ProofVerificationError, match="did not verify"):
        demo.run_demo(st.synthesizer, st.prover, st.make_inputs, lambda i, p: False, n_proofs=2)
    with pytest.raises(InputError):
        demo.real_stages("galactic")
    with pytest.raises(InputError):
        demo.parse_concurrency_list("1,two")


def test_python_dash_m():
    r = subprocess.run([sys.executable, "-m", "cuzk", "--version"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "cuzk 0.1.0"
