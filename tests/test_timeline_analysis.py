"""Analysis and renderers on hand-built event lists with known answers (no clocks involved)."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from cuzk.errors import BackendUnavailableError, InputError
from cuzk.timeline import Event, EventKind as K, Timeline
from cuzk.timeline import analysis as A
from cuzk.timeline import render
from cuzk.timeline.summary import summary
from pipeline_support import no_leaked_threads  # noqa: F401  (autouse)

MS = 1_000_000


def sequential_run(n=5, synth_ms=20, prove_ms=10):
    """What concurrency 1 does: syntheses back to back, each proof starts when its synthesis ends."""
    ev = [Event(0, K.JOB_SUBMIT, k) for k in range(n)]
    for k in range(n):
        s0, s1 = k * synth_ms * MS, (k + 1) * synth_ms * MS
        ev += [Event(s0, K.SYNTH_START, k, worker="cuzk-synth-0"), Event(s1, K.SYNTH_END, k, worker="cuzk-synth-0"),
               Event(s1, K.CHAN_SEND, k), Event(s1, K.GPU_PICKUP, k),
               Event(s1, K.GPU_START, k, worker="cuzk-gpu-0"), Event(s1 + prove_ms * MS, K.GPU_END, k, worker="cuzk-gpu-0"),
               Event(s1 + prove_ms * MS, K.JOB_DONE, k)]
    return ev


def test_sequential_run_summary_has_known_numbers():
    s = summary(sequential_run())
    # window 20 ms .. 110 ms; GPU busy 5 x 10 ms
    assert s.window == pytest.approx((0.020, 0.110))
    assert s.gpu_utilization == pytest.approx(50 / 90)
    assert s.idle_gaps == pytest.approx((0.010,) * 4)
    assert s.idle_gap_histogram == {"<50ms": 4, "50-500ms": 0, ">500ms": 0}
    assert s.seconds_per_proof == pytest.approx(0.090 / 5)
    assert s.wall_seconds_per_proof == pytest.approx(0.110 / 5)
    assert s.fill_seconds == pytest.approx(0.020)
    assert s.synth_seconds.mean == pytest.approx(0.020) and s.synth_seconds.p95 == pytest.approx(0.020)
    assert s.gpu_seconds.p50 == pytest.approx(0.010)
    assert s.queue_wait_seconds.max == pytest.approx(0.080) and s.queue_wait_seconds.p50 == pytest.approx(0.040)
    assert s.channel_wait_seconds.max == 0
    assert s.jobs_done == 5 and s.jobs_failed == 0
    assert [g.seconds for g in s.switch_gaps] == pytest.approx([0.010] * 4)
    assert s.switch_gaps[0].previous == (0, None) and s.switch_gaps[0].next == (1, None)
    text = str(s)
    assert "GPU utilization" in text and "55.6%" in text


def test_overlapping_gpu_workers_use_the_union():
    ev = [Event(0, K.GPU_START, 1, worker="g0"), Event(10 * MS, K.GPU_END, 1),
          Event(5 * MS, K.GPU_START, 2, worker="g1"), Event(20 * MS, K.GPU_END, 2),
          Event(30 * MS, K.GPU_START, 3, worker="g0"), Event(40 * MS, K.GPU_END, 3)]
    s = summary(ev)
    assert s.gpu_utilization == pytest.approx(30 / 40)
    assert s.idle_gaps == pytest.approx((0.010,))
    # switch 1->2 overlaps (0 s idle); 2->3 leaves 10 ms
    assert [g.seconds for g in s.switch_gaps] == pytest.approx([0.0, 0.010])


def test_custom_window_counts_edges_as_idle():
    s = summary(sequential_run(), window=(0.0, 0.2))
    assert s.window_seconds == pytest.approx(0.2)
    assert s.gpu_utilization == pytest.approx(0.050 / 0.2)
    assert s.idle_gaps[0] == pytest.approx(0.020) and s.idle_gaps[-1] == pytest.approx(0.090)


@pytest.mark.parametrize("bad", [(1.0, 1.0), (2.0, 1.0), ("a", 1), 5])
def test_bad_window_rejected(bad):
    with pytest.raises(InputError, match="window"):
        summary(sequential_run(), window=bad)


def test_empty_and_partial_timelines():
    s = summary([])
    assert s.jobs_done == 0 and s.gpu_utilization == 0 and math.isnan(s.seconds_per_proof)
    assert "-" in str(s)
    # an unmatched end (start lost to the ring buffer) and an open start are left out
    ev = [Event(0, K.GPU_END, 1), Event(5, K.GPU_START, 2)]
    assert A.spans(ev) == ()
    assert A.job_breakdowns(ev)[1].status == "running"


def test_job_breakdowns_status_and_error():
    ev = [Event(0, K.JOB_SUBMIT, "a", 0), Event(0, K.JOB_SUBMIT, "a", 1),
          Event(MS, K.SYNTH_START, "a", 0), Event(3 * MS, K.SYNTH_END, "a", 0, detail={"error": "ValueError"}),
          Event(3 * MS, K.JOB_FAILED, "a", 0, detail={"error": "ValueError"}),
          Event(3 * MS, K.JOB_CANCELLED, "a", 1)]
    b0, b1 = A.job_breakdowns(ev)
    assert (b0.status, b0.error, b0.queue_wait_s, b0.synth_s, b0.gpu_s) == ("failed", "ValueError", 0.001, 0.002, None)
    assert (b1.status, b1.total_s) == ("cancelled", 0.003)
    assert A.spans(ev)[0].error == "ValueError"
    s = summary(ev)
    assert (s.jobs_failed, s.jobs_cancelled) == (1, 1)


def test_cpu_contention_and_cores_busy():
    ev = [Event(0, K.SYNTH_START, 1, detail={"thread_cpu_ns": 0, "process_cpu_ns": 0}),
          Event(1000 * MS, K.SYNTH_END, 1, detail={"thread_cpu_ns": 500 * MS, "process_cpu_ns": 1500 * MS}),
          Event(1000 * MS, K.GPU_START, 1, detail={"thread_cpu_ns": 0, "process_cpu_ns": 1500 * MS}),
          Event(3000 * MS, K.GPU_END, 1, detail={"thread_cpu_ns": 100, "process_cpu_ns": 4500 * MS})]
    sp = A.spans(ev)
    assert sp[0].thread_cpu_s == pytest.approx(0.5) and sp[0].process_cpu_s == pytest.approx(1.5)
    s = summary(ev)
    assert s.cpu_contention_ratio == pytest.approx(2.0)
    assert s.cpu_cores_busy == pytest.approx(1.5)  # 3 CPU-seconds over the 2-second GPU window


def test_kernel_utilization_from_sub_spans():
    ev = [Event(0, K.GPU_START, 1), Event(10 * MS, K.GPU_END, 1),
          Event(1 * MS, K.SPAN_START, 1, detail={"name": "H"}), Event(3 * MS, K.SPAN_END, 1, detail={"name": "H"}),
          Event(3 * MS, K.SPAN_START, 1, detail={"name": "MSM_A"}),
          Event(7 * MS, K.SPAN_END, 1, detail={"name": "MSM_A"})]
    s = summary(ev)
    assert s.kernel_utilization == pytest.approx({"H": 0.2, "MSM_A": 0.4, "ALL": 0.6})
    assert {sp.stage for sp in A.spans(ev) if sp.is_sub_span} == {"H", "MSM_A"}


def test_concurrency_changes_reported():
    ev = [Event(5 * MS, K.CONCURRENCY, detail={"value": 2, "reason": "prove stage idle"})]
    assert summary(ev).concurrency_changes == ((0.005, 2, "prove stage idle"),)
    assert "concurrency -> 2" in str(summary(ev))


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=40))
def test_stats_match_numpy(values):
    s = A.stats(values)
    assert s.count == len(values)
    assert s.mean == pytest.approx(np.mean(values), rel=1e-9, abs=1e-6)
    assert s.p50 == pytest.approx(np.percentile(values, 50), rel=1e-9, abs=1e-6)
    assert s.p95 == pytest.approx(np.percentile(values, 95), rel=1e-9, abs=1e-6)
    assert (s.min, s.max) == (min(values), max(values))


intervals = st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)).map(sorted).map(tuple), max_size=12)


@given(intervals, st.tuples(st.integers(0, 60), st.integers(0, 60)).map(sorted).map(tuple))
def test_union_matches_brute_force(ivs, window):
    covered = {t for s, e in ivs for t in range(s, e)}
    assert A.union_seconds(ivs) * 1e9 == pytest.approx(len(covered))
    in_window = {t for t in covered if window[0] <= t < window[1]}
    assert A.union_seconds(ivs, window) * 1e9 == pytest.approx(len(in_window))
    merged = A.merge_intervals(ivs)
    assert all(a[1] < b[0] for a, b in zip(merged, merged[1:]))


@given(st.lists(st.floats(0, 5, allow_nan=False), max_size=30))
def test_histogram_counts_every_gap(gaps):
    h = A.gap_histogram(gaps)
    assert sum(h.values()) == len(gaps)
    assert h["<50ms"] == sum(g < 0.05 for g in gaps)


def test_waterfall_exact_rows():
    ev = [Event(0, K.JOB_SUBMIT, 1), Event(0, K.SYNTH_START, 1), Event(4, K.SYNTH_END, 1),
          Event(4, K.GPU_START, 1), Event(8, K.GPU_END, 1), Event(8, K.JOB_DONE, 1),
          Event(0, K.JOB_SUBMIT, 2), Event(4, K.SYNTH_START, 2), Event(8, K.SYNTH_END, 2),
          Event(8, K.GPU_START, 2), Event(12, K.GPU_END, 2), Event(12, K.JOB_DONE, 2),
          Event(0, K.JOB_SUBMIT, 3), Event(12, K.JOB_FAILED, 3)]
    rows = render.waterfall(ev, width=12).splitlines()
    assert rows[1:4] == ["P1  SSSSGGGG", "P2  ....SSSSGGGG", "P3  ...........x"]
    assert rows[-1].startswith("S synthesis")
    assert "earlier rows not shown" in render.waterfall(ev, width=12, max_rows=2)


def test_waterfall_on_timeline_and_html():
    tl = Timeline.from_events(sequential_run(n=3))
    text = tl.waterfall(width=30)
    assert text.count("S") >= 3 and "G" in text
    html = tl._repr_html_()
    assert html.startswith("<div") and "GPU utilization" in html and "&lt;50ms" in html


def test_plot_needs_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        with pytest.raises(BackendUnavailableError, match="matplotlib"):
            render.plot(sequential_run())
    else:
        import matplotlib
        matplotlib.use("Agg")
        fig = render.plot(sequential_run())
        assert len(fig.axes[0].collections) == 10


def test_chrome_trace_spans_and_threads():
    trace = render.to_chrome_trace(sequential_run(n=2))["traceEvents"]
    spans = [e for e in trace if e["ph"] == "X"]
    assert len(spans) == 4
    assert {e["cat"] for e in spans} == {"synth", "gpu"}
    gpu = [e for e in spans if e["cat"] == "gpu"]
    assert gpu[0]["ts"] == pytest.approx(20_000) and gpu[0]["dur"] == pytest.approx(10_000)
    names = {e["args"]["name"] for e in trace if e["name"] == "thread_name"}
    assert {"cuzk-synth-0", "cuzk-gpu-0"} <= names
