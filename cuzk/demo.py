"""What ``cuzk demo`` and ``cuzk bench`` run, written against duck-typed stages.

``run_demo``/``run_bench`` take any ``synthesizer`` (``synthesize(**inputs)``), ``prover``
(``prove(synthesized)``), ``make_inputs(k) -> dict`` and ``verify(inputs, proof) -> bool``;
:func:`real_stages` builds those from the real circuit, synthesizer and prover.

The demo shows what the pipeline is for: a prover faster than synthesis waits between jobs while
one synthesis runs at a time, and two syntheses at once close that gap. It proves with the given
stages at concurrency 1; when synthesis is the slower stage it proves again at concurrency 2.
When the prove stage is the slower one (on the CPU backend a proof takes many times a
synthesis), there is no gap to close: the demo says so and reruns the same synthesis against a
:class:`StandInProver`, which sleeps for a share of the measured synthesis time and makes no
proof. Every figure it prints is read from the runs' timelines.

    >>> import io
    >>> st = simulated_stages(0.02, 0.01)             # synthesis twice as long as proving
    >>> r = run_demo(st.synthesizer, st.prover, st.make_inputs, st.verify, n_proofs=3, out=io.StringIO())
    >>> [len(x) for x in r.proofs.values()], r.all_verified, r.stand_in_seconds
    ([3, 3], True, None)
"""

from __future__ import annotations

import json
import math
import statistics
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Callable, Sequence, TextIO

import attrs

from cuzk.errors import BackendUnavailableError, InputError, ProofVerificationError
from cuzk.pipeline import Pipeline
from cuzk.timeline import Timeline, span

__all__ = ["DemoStages", "DemoResult", "BenchRow", "SIZES", "STAND_IN_SHARE", "StandInProver", "real_stages",
           "simulated_stages", "synthesis_seconds", "run_demo", "run_stages_demo", "run_bench",
           "parse_concurrency_list"]

#: ``porep_like`` sizes for ``--size`` (about challenges * (depth + 1) * 270 constraints).
SIZES = {
    "tiny": dict(leaves=2**3, challenges=1),  # ~2^10 constraints
    "small": dict(leaves=2**10, challenges=2),  # ~2^13
    "medium": dict(leaves=2**10, challenges=6),  # ~2^14
    "large": dict(leaves=2**10, challenges=95),  # ~2^18
}

#: The stand-in prover's time per job as a share of one synthesis measured on this machine.
#: Below 1, so synthesis is the slower stage, as when a GPU proves; at 0.6 one synthesis at a
#: time leaves the prover idle about 40 % of the time, and two at once have room to spare.
STAND_IN_SHARE = 0.6


@attrs.frozen
class DemoStages:
    """Everything a demo or benchmark run needs."""

    synthesizer: Any
    prover: Any
    make_inputs: Callable[[int], dict]  #: k -> synthesize() keyword arguments for proof k
    verify: Callable[[dict, Any], bool]  #: (inputs, proof) -> does it verify
    description: str = ""
    backend: str = ""  #: "cuda" or "cpu" (the real prover's backend), "simulated", or "" (other stages)
    note: str = ""  #: where the prove stage runs, and why there


def _backend_note(device: str, requested: str, curve: str) -> str:
    """One line on where the prove stage runs; on the CPU, why no GPU proves."""
    from cuzk.prover import cuda_status

    usable, why = cuda_status()
    if device == "cuda":
        return f"prove stage: the GPU ({why})"
    if requested == "cpu":
        reason = "--device cpu asks for it"
    elif not usable:
        reason = f"no usable GPU here: {why}"
    else:
        reason = f"a GPU is usable, but the CUDA backend has no kernels for {curve} yet"
    return f"prove stage: the CPU backend (Numba kernels), because {reason}"


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
    backend = getattr(prover, "device", device)

    # on the CPU the input accumulation runs on the prover's MSM kernels (compiled for its proofs
    # already), so checking the first proof compiles no point arithmetic of its own
    msm = curves.get(pk.curve).kernels.msm_g1 if backend == "cpu" else None

    def check(inputs: dict, proof) -> bool:
        return bool(verify(vk, circuit.public_inputs(inputs), proof, msm=msm))

    return DemoStages(synth, prover, lambda k: circuit.sample_inputs(seed=k), check,
                      f"{circuit!r}: {synth.r1cs.n_constraints:,} constraints, {pk.curve}", backend,
                      _backend_note(backend, device, pk.curve))


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
                      f"simulated: synthesis {synth_seconds}s, prove {prove_seconds}s", "simulated",
                      "prove stage: simulated (both stages sleep; no proving stack is involved)")


class StandInProver:
    """A prover that makes no proof: each job sleeps ``seconds`` (using no CPU), the time a prover
    faster than synthesis would take. What it returns is :attr:`NO_PROOF`, never a proof.

    >>> StandInProver(0.0).prove(object()) is StandInProver.NO_PROOF
    True
    """

    NO_PROOF = "no proof: stand-in prover"

    def __init__(self, seconds: float):
        if not seconds >= 0:
            raise InputError(f"the stand-in prover's seconds must be >= 0, got {seconds!r}")
        self.seconds = seconds

    def prove(self, synthesized) -> str:
        time.sleep(self.seconds)
        return self.NO_PROOF


def synthesis_seconds(synthesizer, inputs: Sequence[dict], repeats: int = 3) -> float:
    """Median wall time of ``repeats`` syntheses, one at a time on this thread (call it after a
    first synthesis, so compilation or cache loading is not counted).

    >>> 0.0 <= synthesis_seconds(simulated_stages(0, 0).synthesizer, [{"k": 1}]) < 1
    True
    """
    times = []
    for k in range(repeats):
        t0 = time.perf_counter()
        synthesizer.synthesize(**inputs[k % len(inputs)])
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


@attrs.frozen
class DemoResult:
    """What the demo ran: the concurrency 1 and 2 runs it compares, and the real proofs it checked."""

    timelines: dict  #: concurrency -> Timeline of the compared run (real stages, or synthesis + stand-in)
    proofs: dict  #: concurrency -> the proofs of the run with the given prover, every one verified
    all_verified: bool
    #: the stand-in prover's seconds per job when it made the comparison; None: the given prover did
    stand_in_seconds: float | None = None


_RUN_NAMES = {"cpu": "Real stages", "cuda": "Real stages", "simulated": "Simulated stages"}
#: the demo calls the gap closed when concurrency 2 keeps the prover busy this share of the time
#: and proves this many times as fast as concurrency 1 (at :data:`STAND_IN_SHARE` 0.6 the ideal
#: is 1 / 0.6 = 1.67x; a prover kept busy by sleeps that overran on a crowded machine is not a gain)
_CLOSED, _GAIN = 0.9, 1.2
#: jobs per stand-in run at least: they cost a synthesis each, and a few more rows make the
#: steady state (the window between the first and last prove) longer than the pipeline's fill
_STAND_IN_JOBS = 8


def _say(text: str, out: TextIO) -> None:
    print(textwrap.fill(text, width=100), file=out)


def _prove_all(synthesizer, prover, inputs: list, concurrency: int) -> tuple[Timeline, list]:
    with Pipeline(synthesizer, prover, concurrency=concurrency) as pipe:
        results = [f.result() for f in [pipe.submit(i) for i in inputs]]
    return pipe.timeline, results


def _check(verify, inputs: list, proofs: list, concurrency: int) -> None:
    bad = [k for k, (i, p) in enumerate(zip(inputs, proofs)) if not verify(i, p)]
    if bad:
        raise ProofVerificationError(f"demo proofs {bad} (concurrency={concurrency}) did not verify")


def _show(title: str, tl: Timeline, width: int, out: TextIO) -> None:
    s = tl.summary()
    gaps = s.idle_gaps
    print(f"\n-- {title}", file=out)
    print(f"   prover busy {100 * s.gpu_utilization:.1f}%, {s.seconds_per_proof:.3f} s/proof, idle {sum(gaps):.3f}s "
          f"in {len(gaps)} gap{'' if len(gaps) == 1 else 's'}; per proof: synthesis {s.synth_seconds.mean:.3f}s, "
          f"prove {s.gpu_seconds.mean:.3f}s", file=out)
    print(tl.waterfall(width=width), file=out)


def _compare(tl1: Timeline, tl2: Timeline, out: TextIO, asked: float | None = None) -> None:
    """The figures of both runs side by side, and what they show (``asked``: the stand-in's sleep)."""
    s1, s2 = tl1.summary(), tl2.summary()
    u1, u2 = s1.gpu_utilization, s2.gpu_utilization
    gain = s1.seconds_per_proof / s2.seconds_per_proof if s2.seconds_per_proof > 0 else math.nan
    print(f"\nconcurrency 1 -> 2, read from the two timelines: prover busy {100 * u1:.1f}% -> {100 * u2:.1f}%, "
          f"{s1.seconds_per_proof:.3f} -> {s2.seconds_per_proof:.3f} s/proof ({gain:.2f}x the throughput), "
          f"idle {sum(s1.idle_gaps):.3f}s -> {sum(s2.idle_gaps):.3f}s", file=out)
    if u2 >= _CLOSED and gain >= _GAIN:
        _say("Two syntheses at once keep the prover fed: the gap it waited in is closed.", out)
        return
    why = []
    if s2.synth_seconds.mean > 1.5 * s1.synth_seconds.mean:
        busy = "-" if s2.cpu_cores_busy is None else f"{s2.cpu_cores_busy:.2f}"
        why.append(f"with two at once a synthesis took {s2.synth_seconds.mean:.3f}s against "
                   f"{s1.synth_seconds.mean:.3f}s one at a time, so the two shared a core rather than running "
                   f"side by side (this process kept {busy} of {s2.cpu_count} cores busy)")
    if asked is not None and s2.gpu_seconds.mean > 1.3 * asked:
        why.append(f"the stand-in's {asked:.3f}s sleeps took {s2.gpu_seconds.mean:.3f}s: on a busy machine a "
                   f"waking thread waits for a core")
    if u2 <= u1 + 0.05:
        verdict = "The gap did not close here"
    elif gain < _GAIN:
        verdict = f"The prover waits less, but the throughput rose only {gain:.2f}x"
    else:
        verdict = "The gap narrowed but did not close here"
    _say(f"{verdict}{': ' + '; and '.join(why) if why else ''}. `cuzk demo --simulate 0.2,0.1` runs the same "
         "pipeline on stages that both sleep, which needs no free core.", out)


def _why_prove_bound(backend: str, ratio: float) -> str:
    if backend == "cpu":
        return (f"On the CPU backend a proof takes {ratio:.0f}x as long as a synthesis: the prover never waits "
                "for one, so there is no idle gap for concurrency to close (a second synthesis would only take "
                "cores from the prover). With a GPU a proof can take less time than its synthesis, and then "
                "the prover waits between jobs; the runs below model that case.")
    return (f"The prove stage takes {ratio:.1f}x as long as synthesis: the prover never waits for one, so "
            "there is no idle gap for concurrency to close. The runs below model a prover faster than synthesis.")


def run_demo(synthesizer, prover, make_inputs: Callable[[int], dict], verify: Callable[[dict, Any], bool],
             n_proofs: int = 5, out: TextIO | None = None, width: int = 72, *, backend: str = "") -> DemoResult:
    """Prove ``n_proofs`` jobs with ``Pipeline(concurrency=1)``, verify every proof, then compare
    concurrency 1 with 2 where synthesis is the slower stage; print waterfalls and figures to
    ``out`` (stdout by default).

    With synthesis the slower stage, the comparison is a second run of the same stages at
    concurrency 2 (verified too). With the prove stage the slower one, it runs the same
    synthesizer against a :class:`StandInProver` sleeping :data:`STAND_IN_SHARE` of one
    synthesis (:func:`synthesis_seconds`), at concurrency 1 and 2, at least 8 jobs each.
    ``backend`` (``"cpu"``, ``"cuda"``, ``"simulated"``, ``""``) only chooses the wording.

    Raises:
        cuzk.errors.ProofVerificationError: a proof did not verify.
    """
    out = out or sys.stdout
    inputs = [make_inputs(k) for k in range(n_proofs)]
    # One proof outside the timelines, so JIT compilation (or the cache load) does not count
    # as prove time in the comparison; its cost is printed, not hidden.
    t0 = time.perf_counter()
    warm = prover.prove(synthesizer.synthesize(**make_inputs(n_proofs)))
    if not verify(make_inputs(n_proofs), warm):
        raise ProofVerificationError("the warm-up proof did not verify")
    print(f"warm-up proof (includes JIT compile or cache load): {time.perf_counter() - t0:.2f}s, verified", file=out)
    name = _RUN_NAMES.get(backend, "Stages")

    tl1, proofs1 = _prove_all(synthesizer, prover, inputs, 1)
    _check(verify, inputs, proofs1, 1)
    _show(f"{name}, Pipeline(concurrency=1): {n_proofs} proofs, all verified", tl1, width, out)
    s1 = tl1.summary()
    synth, prove = s1.synth_seconds.mean, s1.gpu_seconds.mean
    if synth > prove:  # the prover waits for synthesis: concurrency 2 can close the gap, with these stages
        tl2, proofs2 = _prove_all(synthesizer, prover, inputs, 2)
        _check(verify, inputs, proofs2, 2)
        _show(f"{name}, Pipeline(concurrency=2): {n_proofs} proofs, all verified", tl2, width, out)
        _compare(tl1, tl2, out)
        return DemoResult({1: tl1, 2: tl2}, {1: proofs1, 2: proofs2}, True)

    print(file=out)
    _say(_why_prove_bound(backend, prove / synth if synth > 0 else math.inf), out)
    alone = synthesis_seconds(synthesizer, inputs)
    stand_in = StandInProver(STAND_IN_SHARE * alone)
    jobs = [make_inputs(k) for k in range(max(n_proofs, _STAND_IN_JOBS))]
    real = "real synthesis" if backend in ("cpu", "cuda") else "the same synthesis"
    print(f"\n== Synthesis-bound: {real}, stand-in prover ==", file=out)
    _say(f"The stand-in prover sleeps {stand_in.seconds:.3f}s per job, {STAND_IN_SHARE}x the {alone:.3f}s one "
         "synthesis takes here alone (median of 3): a prover faster than synthesis, as a GPU can be. It makes "
         "no proof, so these runs have nothing to verify; their figures are measured like the ones above.", out)
    timelines = {}
    for concurrency in (1, 2):
        timelines[concurrency], _ = _prove_all(synthesizer, stand_in, jobs, concurrency)
        _show(f"Pipeline(concurrency={concurrency}): {len(jobs)} jobs", timelines[concurrency], width, out)
    _compare(timelines[1], timelines[2], out, stand_in.seconds)
    return DemoResult(timelines, {1: proofs1}, True, stand_in.seconds)


def run_stages_demo(stages: DemoStages, n_proofs: int = 5, out: TextIO | None = None, width: int = 72) -> DemoResult:
    """``cuzk demo``: say what the stages are and where the prove stage runs, then :func:`run_demo`.

    >>> import io
    >>> out = io.StringIO()
    >>> r = run_stages_demo(simulated_stages(0.01, 0.02), n_proofs=2, out=out)  # proving is the slower stage
    >>> sorted(r.timelines), list(r.proofs), r.stand_in_seconds > 0, "stand-in prover" in out.getvalue()
    ([1, 2], [1], True, True)
    """
    out = out or sys.stdout
    print(f"cuzk demo: {stages.description}", file=out)
    if stages.note:
        _say(stages.note, out)
    return run_demo(stages.synthesizer, stages.prover, stages.make_inputs, stages.verify, n_proofs=n_proofs,
                    out=out, width=width, backend=stages.backend)


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
