"""The Filecoin Engine example runs end to end: WindowPoSt at CRITICAL beside sealing at NORMAL."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_window_post_example_runs(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "filecoin_window_post.py"),
                        "--sectors", "3", "--challenges", "1", "--seal-jobs", "3"],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "WindowPoSt: 2 partition proofs verified" in r.stdout
    assert "sealing: 3 proofs verified" in r.stdout
