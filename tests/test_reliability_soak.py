"""Short soak: 200 real Cube proofs through one Pipeline on the CPU backend; every
proof verifies, no synthesized witness outlives the pipeline or exceeds the bound on live
witnesses, and the Timeline's ring buffer stays at its bound. ``benchmarks/soak_run.py`` runs
the same driver for 10,000 proofs and measures RSS growth (too noisy to assert on 200 proofs)."""

from pipeline_support import no_leaked_threads  # noqa: F401  (autouse)
from reliability.soak import rss_bytes, soak


def test_two_hundred_real_proofs_verify_and_leak_no_witness():
    r = soak(200, warmup=120, verify_every=4, capacity=1000, report_every=40)
    assert (r.proofs, r.failed) == (200, 0)
    assert r.verified == 50 and r.verify_rate == 1.0
    assert r.alive_end == 0
    assert 1 <= r.alive_max <= r.alive_bound
    assert r.timeline_len == (1000, 1000) and r.dropped > 0  # the buffer was full and stayed at its bound
    assert [n for n, _, _ in r.trace] == [120, 160, 200]


def test_rss_reads_this_process():
    assert 10 * 2**20 < rss_bytes() < 64 * 2**30
