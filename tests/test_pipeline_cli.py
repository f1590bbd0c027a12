"""The ``cuzk`` CLI and cuzk.demo, on simulated (sleeping) stages."""

import importlib.util
import io
import json
import subprocess
import sys

import pytest

from cuzk import cli, demo
from cuzk.errors import InputError, ProofVerificationError
from cuzk.timeline import Event, EventKind as K, Timeline
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
    # synthesis is the slower stage: the same stages again at concurrency 2, both runs verified
    assert out.count("all verified") == 2 and "concurrency 1 -> 2" in out and "stand-in" not in out
    assert "prove stage: simulated" in out


def test_a_prove_bound_demo_says_so_and_shows_the_gap_with_a_stand_in_prover():
    # the prove stage is the slower one (as on the CPU backend): no gap for concurrency to close,
    # so the same synthesis runs against a prover that sleeps a share of it and makes no proof
    out = io.StringIO()
    st = demo.simulated_stages(0.01, 0.03)
    r = demo.run_demo(st.synthesizer, st.prover, st.make_inputs, st.verify, n_proofs=2, out=out)
    text = " ".join(out.getvalue().split())  # prose is wrapped at 100 columns
    assert "no idle gap for concurrency to close" in text and "stand-in prover" in text
    assert "makes no proof" in text and "concurrency 1 -> 2" in text
    assert list(r.proofs) == [1] and len(r.proofs[1]) == 2  # the real proofs, verified
    assert r.stand_in_seconds == pytest.approx(demo.STAND_IN_SHARE * 0.01, rel=0.5)
    assert sorted(r.timelines) == [1, 2] and all(len(tl.jobs()) == 8 for tl in r.timelines.values())
    cpu = io.StringIO()
    demo.run_demo(st.synthesizer, st.prover, st.make_inputs, st.verify, n_proofs=1, out=cpu, backend="cpu")
    text = " ".join(cpu.getvalue().split())
    assert "On the CPU backend a proof takes" in text and "real synthesis" in text


def _timeline(jobs):
    """A timeline from (synthesis start, synthesis end, prove start, prove end) in ms, one tuple per job."""
    ms = 1_000_000
    ev = []
    for k, (s0, s1, g0, g1) in enumerate(jobs):
        ev += [Event(0, K.JOB_SUBMIT, k), Event(s0 * ms, K.SYNTH_START, k), Event(s1 * ms, K.SYNTH_END, k),
               Event(g0 * ms, K.GPU_START, k), Event(g1 * ms, K.GPU_END, k), Event(g1 * ms, K.JOB_DONE, k)]
    return Timeline.from_events(ev)


ONE_AT_A_TIME = _timeline([(20 * k, 20 * k + 20, 20 * k + 20, 20 * k + 32) for k in range(6)])  # 64 % busy


def test_the_verdict_follows_the_measured_figures():
    # two syntheses side by side: the prover busy throughout, 1.6x the proofs per second
    side_by_side = _timeline([(20 * (k // 2), 20 * (k // 2) + 20, 20 + 12 * k, 32 + 12 * k) for k in range(6)])
    out = io.StringIO()
    demo._compare(ONE_AT_A_TIME, side_by_side, out, asked=0.012)
    assert "prover busy 64.3% -> 100.0%" in out.getvalue() and "the gap it waited in is closed" in out.getvalue()
    # two syntheses sharing one core: each takes twice as long, the prover waits as before
    shared = _timeline([(40 * (k // 2), 40 * (k // 2) + 40, 40 + 20 * k, 52 + 20 * k) for k in range(6)])
    out = io.StringIO()
    demo._compare(ONE_AT_A_TIME, shared, out, asked=0.012)
    text = " ".join(out.getvalue().split())
    assert "closed" not in text and "The gap did not close here" in text and "shared a core" in text
    # the prover kept busy only because the stand-in's sleeps overran: no gain in throughput, no claim
    overran = _timeline([(40 * (k // 2), 40 * (k // 2) + 40, 40 + 20 * k, 60 + 20 * k) for k in range(6)])
    out = io.StringIO()
    demo._compare(ONE_AT_A_TIME, overran, out, asked=0.012)
    text = " ".join(out.getvalue().split())
    assert "the throughput rose only" in text and "sleeps took 0.020s" in text and "is closed" not in text


def test_the_backend_line_says_why_the_cpu_proves(monkeypatch):
    import cuzk.prover

    monkeypatch.setattr(cuzk.prover, "cuda_status", lambda: (False, "CuPy is not importable"))
    assert demo._backend_note("cpu", "auto", "bls12_381") == (
        "prove stage: the CPU backend (Numba kernels), because no usable GPU here: CuPy is not importable")
    assert "--device cpu asks for it" in demo._backend_note("cpu", "cpu", "bls12_381")
    monkeypatch.setattr(cuzk.prover, "cuda_status", lambda: (True, "CUDA device 0 of 1"))
    assert demo._backend_note("cuda", "auto", "bls12_381") == "prove stage: the GPU (CUDA device 0 of 1)"
    assert "no kernels for bls12_377" in demo._backend_note("cpu", "auto", "bls12_377")


@pytest.mark.skipif(importlib.util.find_spec("cuzk.prover") is None, reason="no real prover in this build")
def test_demo_on_the_real_stack(capsys):
    from cuzk.prover import cuda_status

    assert cli.main(["demo", "--size", "tiny", "--proofs", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("cuzk demo: porep_like(leaves=8, challenges=1, arity=2): ") and " constraints, " in out
    assert "Real stages, Pipeline(concurrency=1): 2 proofs, all verified" in out and "concurrency 1 -> 2" in out
    if not cuda_status()[0]:
        assert "prove stage: the CPU backend" in out and "no usable GPU here" in out
        assert "real synthesis, stand-in prover" in out  # a CPU proof takes far longer than a synthesis


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
    assert cli.main(["bench", "--simulate", "x,y"]) == 1  # a cuzk error naming --simulate (a bare ValueError was 2)


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


@pytest.mark.parametrize("value", ["1", "1,2,3", "a,b", "nan,nan", "inf,1", "-1,0"])
def test_a_malformed_simulate_is_one_line_naming_the_option(capsys, value):
    # "1" was "not enough values to unpack" (exit 2); an infinite stage time would sleep for ever
    assert cli.main(["bench", f"--simulate={value}", "--proofs", "1", "--concurrency", "1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("cuzk bench: error: --simulate: expected SYNTH_S,PROVE_S") and err.count("\n") == 1
