"""``Timeline.plot()``: what the figure shows, and that nothing in it is hidden or cut off."""

import pytest

from cuzk.timeline import Event, EventKind as K, Timeline
from cuzk.timeline import render

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

MS = 1_000_000


def run(n=5, synth_ms=20, prove_ms=10, sub_spans=("H", "MSM_A")):
    """Concurrency 1: syntheses back to back, each proof (with its sub-steps) right after its synthesis."""
    ev = [Event(0, K.JOB_SUBMIT, k) for k in range(n)]
    for k in range(n):
        s0, s1 = k * synth_ms * MS, (k + 1) * synth_ms * MS
        ev += [Event(s0, K.SYNTH_START, k, worker="cuzk-synth-0"), Event(s1, K.SYNTH_END, k),
               Event(s1, K.GPU_START, k, worker="cuzk-gpu-0"), Event(s1 + prove_ms * MS, K.GPU_END, k),
               Event(s1 + prove_ms * MS, K.JOB_DONE, k)]
        step = prove_ms * MS // max(1, len(sub_spans))
        for i, name in enumerate(sub_spans):
            ev += [Event(s1 + i * step, K.SPAN_START, k, detail={"name": name}),
                   Event(s1 + (i + 1) * step, K.SPAN_END, k, detail={"name": name})]
    return ev


def drawn(fig):
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def legend_of(fig):
    ax = fig.axes[0]
    legends = [ax.get_legend()] if ax.get_legend() else list(fig.legends)
    assert len(legends) == 1
    return legends[0]


@pytest.mark.parametrize("n", [1, 3, 12])
def test_the_legend_covers_no_bar(n):
    # the legend sat at the upper left, over the first job's synthesis bar
    fig = render.plot(run(n=n))
    r = drawn(fig)
    box = legend_of(fig).get_window_extent(r)
    ax = fig.axes[0]
    # each bar's box on the canvas (get_datalim gives it in data coordinates)
    bars = [ax.transData.transform_bbox(c.get_datalim(ax.transData)) for c in ax.collections]
    assert bars and not any(box.overlaps(b) for b in bars)


@pytest.mark.parametrize("n", [1, 3, 12])
def test_labels_title_and_legend_fit_in_the_figure(n):
    # at 1-3 rows the figure was ~1.3-2 inches tall and the x-axis label fell below its bottom edge
    fig = render.plot(run(n=n))
    r = drawn(fig)
    ax = fig.axes[0]
    whole = fig.bbox
    parts = [ax.xaxis.label, ax.title, legend_of(fig), *ax.get_yticklabels()]
    for part in parts:
        b = part.get_window_extent(r)
        assert whole.x0 - 1 <= b.x0 and b.x1 <= whole.x1 + 1 and whole.y0 - 1 <= b.y0 and b.y1 <= whole.y1 + 1, part


def test_the_title_gives_utilization_and_throughput():
    fig = render.plot(run())
    title = fig.axes[0].get_title()
    # 5 x 10 ms of proving in the 20 .. 110 ms window (as in tests/test_timeline_analysis.py)
    assert "GPU utilization 55.6%" in title and "0.018 s/proof" in title and "5 jobs" in title
    assert render.plot(run(), title="mine").axes[0].get_title() == "mine"


def test_the_legend_names_every_kind_of_bar():
    texts = [t.get_text() for t in legend_of(render.plot(run())).get_texts()]
    assert texts[:2] == ["synthesis", "prove"]
    # the thin bars inside a prove bar are its sub-steps: the legend says so and names them
    assert len(texts) == 3 and "sub-step" in texts[2] and "H" in texts[2] and "MSM_A" in texts[2]
    texts = [t.get_text() for t in legend_of(render.plot(run(sub_spans=()))).get_texts()]
    assert texts == ["synthesis", "prove"]


def test_an_axes_of_the_callers_is_drawn_into_and_the_timeline_forwards():
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2)
    assert render.plot(run(), ax=b) is fig and b.collections and not a.collections
    tl = Timeline.from_events(run(n=2))
    assert tl.plot(title="two").axes[0].get_title() == "two"
    plt.close("all")
