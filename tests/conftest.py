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
