"""Notebook-style experiment: what does concurrency buy, and where does the time go?

Run as a script (``python examples/pipeline_experiment.py``) or cell by cell (``# %%``) in an
editor/notebook. By default the stages are simulated (they sleep for the given synthesis and
prove times, so the GPU-idle problem is visible on any machine); pass ``--real small`` to use
the real porep_like circuit and prover. examples/pipeline_experiment.ipynb is the notebook of the
same experiment, with real synthesis and the waterfalls as pictures.
"""

# %% Setup
import argparse
import json
import tempfile
from pathlib import Path

from cuzk import demo
from cuzk.errors import BackendUnavailableError
from cuzk.pipeline import Pipeline

ap = argparse.ArgumentParser()
ap.add_argument("--real", metavar="SIZE", help="porep_like size for the real stages (tiny, small, ...)")
ap.add_argument("--synth", type=float, default=0.2, help="simulated synthesis seconds")
ap.add_argument("--prove", type=float, default=0.1, help="simulated prove seconds")
ap.add_argument("--proofs", type=int, default=8)
ap.add_argument("--out", default=tempfile.gettempdir(), help="where traces/plots go")
args, _ = ap.parse_known_args()

stages = demo.real_stages(args.real, "auto") if args.real else demo.simulated_stages(args.synth, args.prove)
print("stages:", stages.description)
inputs = [stages.make_inputs(k) for k in range(args.proofs)]

# %% One after another vs two syntheses at once
timelines = {}
for concurrency in (1, 2):
    with Pipeline(stages.synthesizer, stages.prover, concurrency=concurrency) as pipe:
        proofs = list(pipe.map(inputs))
    assert all(stages.verify(i, p) for i, p in zip(inputs, proofs))
    timelines[concurrency] = pipe.timeline
    s = pipe.timeline.summary()
    print(f"\n--- concurrency={concurrency} ---")
    print(s)
    print(pipe.timeline.waterfall(width=60))

# %% The numbers a host would act on
for c, tl in timelines.items():
    s = tl.summary()
    print(f"concurrency {c}: GPU utilization {100 * s.gpu_utilization:.1f}%, "
          f"{s.seconds_per_proof:.3f} s/proof, median idle gap {sorted(s.idle_gaps)[len(s.idle_gaps) // 2] if s.idle_gaps else 0:.3f}s")

# %% Per-job breakdown of the slower run
for b in timelines[1].jobs()[:4]:
    print(f"job {b.job_id}: queue {b.queue_wait_s:.3f}s, synth {b.synth_s:.3f}s, "
          f"channel {b.channel_wait_s:.3f}s, gpu {b.gpu_s:.3f}s")

# %% Save for Perfetto / `cuzk waterfall`, and plot if matplotlib is installed
out = Path(args.out)
out.mkdir(parents=True, exist_ok=True)  # a new folder is fine: --out names where results go
(out / "cuzk_c2_trace.json").write_text(json.dumps(timelines[2].to_chrome_trace()))
timelines[2].save(out / "cuzk_c2.jsonl")
print(f"\nwrote {out / 'cuzk_c2_trace.json'} (open in ui.perfetto.dev) and {out / 'cuzk_c2.jsonl'} "
      f"(render with: cuzk waterfall {out / 'cuzk_c2.jsonl'})")
try:
    fig = timelines[2].plot()
    fig.savefig(out / "cuzk_c2.png")
    print("wrote", out / "cuzk_c2.png")
except BackendUnavailableError as e:
    print("no plot:", e)
