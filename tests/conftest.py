import os

import pytest
from hypothesis import HealthCheck, settings

# Deterministic property tests (no unseeded randomness in CI); no per-example deadline because
# the first example of a Numba-backed test includes JIT compilation or cache loading.
settings.register_profile(
    "cuzk",
    derandomize=True,
    deadline=None,
    max_examples=int(os.environ.get("CUZK_HYPOTHESIS_EXAMPLES", "50")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("cuzk")

# Tests never touch the user's key cache: the Engine and `cuzk groth16 prove` default to
# $CUZK_CACHE_DIR (cuzk/engine/keycache.py), so point it at a folder of this test run.
if "CUZK_CACHE_DIR" not in os.environ or os.environ.get("CI"):
    import tempfile

    os.environ["CUZK_CACHE_DIR"] = tempfile.mkdtemp(prefix="cuzk-test-cache-")


@pytest.fixture(scope="module")
def cube(tmp_path_factory):
    """``(folder, params)``: a folder holding the Cube circuit's bellperson keys, for the daemon
    tests that serve it as a ``[[circuits]]`` entry (one per test module)."""
    from serve_support import cube_keys

    folder = tmp_path_factory.mktemp("cube")
    params, _ = cube_keys(folder)
    return folder, params
