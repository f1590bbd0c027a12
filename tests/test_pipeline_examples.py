"""The pipeline examples run end to end on simulated stages."""

import subprocess
import sys
from pathlib import Path

import pytest

from pipeline_support import no_leaked_threads  # noqa: F401  (autouse)

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("script, args, expect", [
    ("pipeline_experiment.py", ["--synth", "0.02", "--prove", "0.01", "--proofs", "4"], "concurrency 2: GPU utilization"),
    ("storage_provider_app.py", ["--duration", "0.5", "--synth", "0.02", "--prove", "0.01"], "cuzk_jobs_done_total"),
])
def test_example_runs(tmp_path, script, args, expect):
    extra = ["--out", str(tmp_path)] if script == "pipeline_experiment.py" else []
    r = subprocess.run([sys.executable, str(ROOT / "examples" / script), *args, *extra],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert expect in r.stdout


def test_experiment_makes_its_out_folder(tmp_path):
    # --out named a folder that did not exist: FileNotFoundError at the first trace written
    out = tmp_path / "new" / "folder"
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "pipeline_experiment.py"), "--synth", "0.01",
                        "--prove", "0.005", "--proofs", "2", "--out", str(out)],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (out / "cuzk_c2_trace.json").is_file() and (out / "cuzk_c2.jsonl").is_file()
