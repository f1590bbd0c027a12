"""The generated point modules must equal a fresh rendering of scripts/gen_curve.py's template."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _generator():
    spec = importlib.util.spec_from_file_location("gen_curve", ROOT / "scripts" / "gen_curve.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", ["g1", "g2"])
def test_generated_module_is_fresh(name):
    gen = _generator()
    on_disk = (ROOT / "cuzk" / "curve" / f"{name}.py").read_text()
    assert on_disk == gen.render(name), f"cuzk/curve/{name}.py is stale: run python3 scripts/gen_curve.py"

