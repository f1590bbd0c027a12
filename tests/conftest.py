import os

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
