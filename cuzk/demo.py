"""What ``cuzk demo`` and ``cuzk bench`` run, written against duck-typed stages.

``run_demo``/``run_bench`` take any ``synthesizer`` (``synthesize(**inputs)``), ``prover``
(``prove(synthesized)``), ``make_inputs(k) -> dict`` and ``verify(inputs, proof) -> bool``;
:func:`real_stages` builds those from the real circuit, synthesizer and prover.

    >>> import io
    >>> class S:
    ...     def synthesize(self, x): return x
    >>> class P:
    ...     def prove(self, w): return -w
    >>> out = io.StringIO()
    >>> r = run_demo(S(), P(), lambda k: {"x": k}, lambda inp, proof: proof == -inp["x"], n_proofs=3, out=out)
    >>> [len(x) for x in r.proofs.values()], r.all_verified
    ([3, 3], True)
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence, TextIO

import attrs

from cuzk.errors import BackendUnavailableError, InputError, ProofVerificationError
from cuzk.pipeline import Pipeline
from cuzk.timeline import Timeline, span

__all__ = ["DemoStages", "DemoResult", "BenchRow", "SIZES", "real_stages", "simulated_stages", "run_demo",
           "run_bench", "parse_concurrency_list"]

#: ``porep_like`` sizes for ``--size`` (about challenges * (depth + 1) * 270 constraints).
SIZES = {
    "tiny": dict(leaves=2**3, challenges=1),  # ~2^10 constraints
    "small": dict(leaves=2**10, challenges=2),  # ~2^13
    "medium": dict(leaves=2**10, challenges=6),  # ~2^14
    "large": dict(leaves=2**10, challenges=95),  # ~2^18
}


@attrs.frozen
class DemoStages:
    """Everything a demo or benchmark run needs."""

    synthesizer: Any
    prover: Any
    make_inputs: Callable[[int], dict]  #: k -> synthesize() keyword arguments for proof k
    verify: Callable[[dict, Any], bool]  #: (inputs, proof) -> does it verify
    description: str = ""


def real_stages(size: str = "small", device: str = "auto", *, warm_up: bool = False) -> DemoStages:
    """The real stages: ``porep_like`` at ``size``, :class:`Synthesizer`, development setup, :class:`GpuProver`.

    This is the one place ``cuzk demo``/``cuzk bench`` name the proving stack. ``warm_up``: the
    prover warms its kernels up on a background thread (``GpuProver(warm_up=True)``).

    Raises:
        cuzk.errors.InputError: unknown size.
        cuzk.errors.BackendUnavailableError: the synthesizer or prover is not part of this build yet.
    """
    if size not in SIZES:
        raise InputError(f"unknown demo size {size!r}; choose one of {sorted(SIZES)}")
    try:
        from cuzk import curves
        from cuzk.circuits import porep_like
        from cuzk.groth16 import setup, verify
        from cuzk.prover import GpuProver
        from cuzk.synth import Synthesizer
    except ImportError as e:
        raise BackendUnavailableError(
            f"the real proving stack is not available in this build yet ({e}); "
            "the pipeline works with any synthesize()/prove() objects, see examples/pipeline_experiment.py") from e
    circuit = porep_like(**SIZES[size])
    synth = Synthesizer(circuit)
    pk, vk = setup(synth.r1cs)
    prover = GpuProver(pk, device=device, warm_up=warm_up)

    # on the CPU the input accumulation runs on the prover's MSM kernels (compiled for its proofs
    # already), so checking the first proof compiles no point arithmetic of its own
    msm = curves.get(pk.curve).kernels.msm_g1 if getattr(prover, "device", None) == "cpu" else None

    def check(inputs: dict, proof) -> bool:
        return bool(verify(vk, circuit.public_inputs(inputs), proof, msm=msm))

    return DemoStages(synth, prover, lambda k: circuit.sample_inputs(seed=k), check,
                      f"porep_like {SIZES[size]} on {getattr(prover, 'device', device)}")


class _SleepSynthesizer:
    def __init__(self, seconds: float):
        self.seconds = seconds

    def synthesize(self, k: int):
        time.sleep(self.seconds)
        return k


class _SleepProver:
    def __init__(self, seconds: float):
        self.seconds = seconds

    def prove(self, k: int):
        with span("MSM_A"):
            time.sleep(self.seconds)
        return ("simulated-proof", k)


def simulated_stages(synth_seconds: float = 0.2, prove_seconds: float = 0.1) -> DemoStages:
    """Stages that only sleep: what the pipeline does for a given synthesis/prove time ratio.

    >>> st = simulated_stages(0.0, 0.0)
    >>> st.verify(st.make_inputs(3), st.prover.prove(st.synthesizer.synthesize(**st.make_inputs(3))))
    True
    """
    if not (synth_seconds >= 0 and prove_seconds >= 0):
        raise InputError(f"simulated stage times must be >= 0, got {synth_seconds}, {prove_seconds}")
    return DemoStages(_SleepSynthesizer(synth_seconds), _SleepProver(prove_seconds), lambda k: {"k": k},
                      lambda inputs, proof: proof == ("simulated-proof", inputs["k"]),
                      f"simulated: synthesis {synth_seconds}s, prove {prove_seconds}s")


@attrs.frozen
class DemoResult:
    """Timelines and proofs of the demo's runs, keyed by concurrency."""

    timelines: dict
    proofs: dict
    all_verified: bool


def run_demo(synthesizer, prover, make_inputs: Callable[[int], dict], verify: Callable[[dict, Any], bool],
             n_proofs: int = 5, out: TextIO | None = None, width: int = 72) -> DemoResult:
    """Prove ``n_proofs`` jobs with ``Pipeline(concurrency=1)`` then ``(concurrency=2)``; verify
    every proof; print both summaries and waterfalls to ``out`` (stdout by default).

    Raises:
        cuzk.errors.ProofVerificationError: a proof did not verify.
    """
    out = out or sys.stdout
    timelines, proofs = {}, {}
    inputs = [make_inputs(k) for k in range(n_proofs)]
    # One proof outside the timelines, so JIT compilation (or the cache load) does not count
    # as GPU time in the comparison; its cost is printed, not hidden.
    t0 = time.perf_counter()
    warm = prover.prove(synthesizer.synthesize(**make_inputs(n_proofs)))
    if not verify(make_inputs(n_proofs), warm):
        raise ProofVerificationError("the warm-up proof did not verify")
    print(f"warm-up proof (includes JIT compile or cache load): {time.perf_counter() - t0:.2f}s", file=out)
    for concurrency in (1, 2):
        with Pipeline(synthesizer, prover, concurrency=concurrency) as pipe:
            results = [f.result() for f in [pipe.submit(i) for i in inputs]]
        bad = [k for k, (i, p) in enumerate(zip(inputs, results)) if not verify(i, p)]
        if bad:
            raise ProofVerificationError(f"demo proofs {bad} (concurrency={concurrency}) did not verify")
        timelines[concurrency], proofs[concurrency] = pipe.timeline, results
        print(f"\n== Pipeline(concurrency={concurrency}): {n_proofs} proofs, all verified ==", file=out)
        print(pipe.timeline.summary(), file=out)
        print(pipe.timeline.waterfall(width=width), file=out)
    s1, s2 = (timelines[c].summary() for c in (1, 2))
    print(f"\nGPU utilization: {100 * s1.gpu_utilization:.1f}% with concurrency 1 -> "
          f"{100 * s2.gpu_utilization:.1f}% with concurrency 2", file=out)
    # Utilization only rises with concurrency when synthesis is the slower stage; say which one is.
    synth, prove = s1.synth_seconds.mean, s1.gpu_seconds.mean
    slower = "synthesis" if synth > prove else "the prove stage"
    print(f"per proof: synthesis {synth:.3f}s, prove {prove:.3f}s -> {slower} bounds throughput "
          f"({s1.seconds_per_proof:.3f} -> {s2.seconds_per_proof:.3f} s/proof)", file=out)
    return DemoResult(timelines, proofs, True)


@attrs.frozen
class BenchRow:
    """One ``cuzk bench`` setting."""

    concurrency: str  #: "1", "2", "auto"
    proofs: int
    seconds_per_proof: float  #: steady state (GPU window / proofs)
    wall_seconds_per_proof: float  #: including pipeline fill
    gpu_utilization: float
    cpu_contention_ratio: float | None
    cpu_cores_busy: float | None
    final_concurrency: int
    timeline: Timeline

    def line(self) -> str:
        def f(x):
            return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"
        return (f"concurrency={self.concurrency:<5} proofs={self.proofs} s/proof={f(self.seconds_per_proof)} "
                f"wall s/proof={f(self.wall_seconds_per_proof)} GPU util={100 * self.gpu_utilization:.1f}% "
                f"contention={f(self.cpu_contention_ratio)} cores busy={f(self.cpu_cores_busy)} "
                f"(final concurrency {self.final_concurrency})")


def parse_concurrency_list(text: str) -> list:
    """``"1,2,auto"`` -> ``[1, 2, "auto"]``.

    >>> parse_concurrency_list("1, 2,auto")
    [1, 2, 'auto']
    """
    out = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        if part == "auto":
            out.append("auto")
        elif part.isdigit() and int(part) > 0:
            out.append(int(part))
        else:
            raise InputError(f"concurrency must be positive ints or 'auto', got {part!r}")
    if not out:
        raise InputError("no concurrency given")
    return out


def _suffixed(path: str, tag: str, many: bool) -> Path:
    p = Path(path)
    return p.with_name(f"{p.stem}.c{tag}{p.suffix}") if many else p


def run_bench(synthesizer, prover, make_inputs: Callable[[int], dict], n_proofs: int,
              concurrencies: Sequence, trace: str | None = None, png: str | None = None,
              out: TextIO | None = None) -> list[BenchRow]:
    """Run ``n_proofs`` through a pipeline per concurrency setting; print one line each.

    ``trace``/``png`` write a Chrome trace / matplotlib waterfall per setting (``out.c2.json``
    when several settings are run).
    """
    out = out or sys.stdout
    inputs = [make_inputs(k) for k in range(n_proofs)]
    rows = []
    for c in concurrencies:
        with Pipeline(synthesizer, prover, concurrency=c) as pipe:
            for f in [pipe.submit(i) for i in inputs]:
                f.result()
        s = pipe.timeline.summary()
        row = BenchRow(str(c), n_proofs, s.seconds_per_proof, s.wall_seconds_per_proof, s.gpu_utilization,
                       s.cpu_contention_ratio, s.cpu_cores_busy, pipe.concurrency, pipe.timeline)
        rows.append(row)
        print(row.line(), file=out)
        many = len(concurrencies) > 1
        if trace:
            _suffixed(trace, str(c), many).write_text(json.dumps(pipe.timeline.to_chrome_trace()))
        if png:
            pipe.timeline.plot().savefig(_suffixed(png, str(c), many))
    return rows
