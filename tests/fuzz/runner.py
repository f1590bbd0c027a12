"""The fuzz campaign: persistent workers, a watchdog, outcome counts, failure records, the table.

The parent draws each input (target round-robin, a seed, stacked mutations, all from
``random.Random(f"{seed}:{i}")``), sends it to an idle worker and waits, watching:

* a per-input **timeout** (a hang): the worker is killed and replaced, the input recorded;
* the worker's **RSS** (polled from ``/proc``) against ``baseline + 3 x input + slack``: a
  memory blow-up, killed and replaced; the worker's ``RLIMIT_AS`` catches huge reservations;
* the worker **dying** (a crash: segfault, abort): recorded with its signal, replaced.

Memory, precisely: a worker's *baseline* is its RSS after import and one warm-up pass of every
seed through every reader and oracle. For each input the worker reports its RSS just before
the input and its peak RSS while handling it (the kernel's high-water mark, reset before each
input). Two figures, each held to 3x the largest input of the run:

* per input (``grow``): max over inputs of (peak while handling it - RSS just before it);
* over the run (``peak``): max over inputs of (peak while handling it - the worker's baseline),
  which also counts what earlier inputs left behind (allocator pools, caches: a creep of a few
  MiB that levels off in the first ~20k inputs, measured, is normal; a leak keeps growing).

    >>> stats = run(minutes=0.2, targets=["g1c"], seed=1, workers=1)    # doctest: +SKIP
    >>> stats.failures                                                  # doctest: +SKIP
    []
"""

from __future__ import annotations

import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import attrs

from . import seeds as S
from .mutate import mutate
from .targets import TARGETS
from .worker import FRAME, status_bytes

__all__ = ["run", "RunStats", "OUTCOMES", "FAILURES", "format_table"]

ROOT = Path(__file__).resolve().parents[2]
#: every outcome class, in table order
OUTCOMES = ("rejected", "accepted", "exception", "oracle", "crash", "hang", "memory")
#: the classes that fail a run
FAILURES = ("exception", "oracle", "crash", "hang", "memory")
_MIB = 1 << 20
#: inputs this large or larger enter the growth / size ratio (below, page and arena granularity
#: of the allocator dominates: a 100-byte input may touch a fresh 4 KiB page)
RATIO_MIN = 64 << 10
#: the worker's RSS before its n-th input is noted at this n, to tell creep that levels off from a leak
CREEP_AT = 10_000


@attrs.define
class TargetStats:
    inputs: int = 0
    outcomes: dict = attrs.field(factory=lambda: dict.fromkeys(OUTCOMES, 0))
    max_input: int = 0
    peak_above_baseline: int = 0  #: bytes; the most any input raised a worker above its baseline
    growth: int = 0  #: bytes; the most RSS rose while handling one input (peak - RSS just before)
    ratio: float = 0.0  #: the largest growth / input size over inputs of at least RATIO_MIN bytes
    busy_s: float = 0.0  #: worker wall time spent on this target's inputs


@attrs.define
class RunStats:
    targets: dict = attrs.field(factory=dict)
    failures: list = attrs.field(factory=list)  #: dicts: target, outcome, exc, msg, tb, input path
    baselines: list = attrs.field(factory=list)  #: every worker's baseline RSS (bytes)
    wall_s: float = 0.0
    workers: int = 0
    seed: int = 0
    restarts: int = 0
    creep: list = attrs.field(factory=list)  #: per worker: (RSS before input CREEP_AT, before its last) - baseline

    @property
    def total(self) -> int:
        return sum(t.inputs for t in self.targets.values())

    @property
    def max_input(self) -> int:
        return max((t.max_input for t in self.targets.values()), default=0)

    @property
    def peak_above_baseline(self) -> int:
        return max((t.peak_above_baseline for t in self.targets.values()), default=0)

    @property
    def growth(self) -> int:
        return max((t.growth for t in self.targets.values()), default=0)

    @property
    def input_memory_ok(self) -> bool:
        """The bound per input: no input raised its worker's RSS by more than 3x the largest input."""
        return self.growth <= 3 * self.max_input

    @property
    def memory_ok(self) -> bool:
        """The bound over the run: no worker rose above its warm baseline by more than 3x the largest input."""
        return self.peak_above_baseline <= 3 * self.max_input


class Worker:
    """One ``tests.fuzz.worker`` process, its pipes and its scratch folder."""

    def __init__(self, seed_dir, names, log, as_limit_mib: int, startup_timeout: float):
        self.scratch = tempfile.mkdtemp(prefix="cuzk-fuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
        # one Numba thread per worker (two workers share two cores); a fixed glibc mmap threshold,
        # so freed multi-MiB buffers go back to the OS instead of raising the RSS baseline
        env = dict(os.environ, NUMBA_NUM_THREADS="1", MALLOC_MMAP_THRESHOLD_="131072",
                   PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.fuzz.worker", str(seed_dir), ",".join(names), str(as_limit_mib), self.scratch],
            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env)
        self.fd = self.proc.stdout.fileno()
        self.buf = b""
        self.job = None  # (index, target, payload, sent at)
        self.done = 0
        self.rss_at = self.rss_last = None  # RSS before input CREEP_AT, before the latest input
        line = self._line(time.monotonic() + startup_timeout)
        if line is None:
            self.kill()
            raise RuntimeError(f"fuzz worker did not start (exit {self.proc.returncode}); see the worker log")
        self.baseline = json.loads(line)["rss"]

    def _line(self, deadline):
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                return None
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                self.proc.wait()
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def send(self, job) -> None:
        _, name, payload, _ = job
        self.job = job
        self.proc.stdin.write(FRAME.pack(len(name), len(payload)) + name.encode() + payload)
        self.proc.stdin.flush()

    def poll_reply(self):
        """A complete reply line if one is buffered or readable now, else None."""
        if b"\n" not in self.buf:
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return "EOF"
            self.buf += chunk
        if b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            return line
        return None

    def rss(self) -> int:
        return status_bytes("VmRSS", str(self.proc.pid))

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        shutil.rmtree(self.scratch, ignore_errors=True)


def _draw(i: int, seed: int, names, seeds_by_kind):
    rng = random.Random(f"{seed}:{i}")
    target = TARGETS[names[i % len(names)]]
    own = seeds_by_kind[target.kind]
    others = own + ([rng.choice(list(seeds_by_kind.values()))[0]] if rng.random() < 0.05 else [])
    return target.name, mutate(rng, rng.choice(own), others, target.fmt)


def _record(stats, out_dir, idx, name, payload, outcome, exc, msg, tb):
    fdir = Path(out_dir) / "failures"
    fdir.mkdir(parents=True, exist_ok=True)
    p = fdir / f"{idx:09d}-{name}.bin"
    p.write_bytes(payload)
    (fdir / f"{idx:09d}-{name}.txt").write_text(f"{outcome} {exc}: {msg}\n\n{tb or ''}")
    stats.failures.append({"index": idx, "target": name, "outcome": outcome, "exc": exc, "msg": msg[:300],
                           "input": str(p), "size": len(payload)})


def run(*, minutes: float = 1.0, max_inputs: int | None = None, targets=None, seed: int = 0, workers: int = 2,
        out_dir=None, timeout_s: float = 10.0, slack_mib: int = 256, as_limit_mib: int = 1024,
        startup_timeout: float = 600.0, progress=None) -> RunStats:
    """Fuzz ``targets`` (default: all) for ``minutes`` or ``max_inputs`` inputs, whichever ends first.

    Args:
        workers: persistent worker processes (each handles one input at a time).
        out_dir: where seeds, the worker log and failing inputs go (default: a temp folder).
        timeout_s: per-input time limit (a hang).
        slack_mib: the watchdog kills a worker whose RSS passes baseline + 3 x input + this.
        as_limit_mib: each worker's address space may grow this much past its warm size.
        progress: called with the stats about every 10 s (for long runs).

    Returns:
        RunStats; ``failures`` lists every failing input (saved under ``out_dir/failures``).
    """
    names = sorted(targets or TARGETS)
    unknown = set(names) - set(TARGETS)
    if unknown:
        raise ValueError(f"unknown fuzz targets {sorted(unknown)}; known: {sorted(TARGETS)}")
    out_dir = Path(out_dir or tempfile.mkdtemp(prefix="cuzk-fuzz-run-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    seed_dir = S.make_seeds(out_dir / "seeds")
    kinds = {TARGETS[n].kind for n in names}
    seeds_by_kind = {k: [Path(p).read_bytes() for p in S.seed_files(seed_dir, k)] for k in kinds}
    stats = RunStats(targets={n: TargetStats() for n in names}, workers=workers, seed=seed)
    log = open(out_dir / "worker.log", "ab")
    pool: list[Worker] = []

    def spawn():
        w = Worker(seed_dir, names, log, as_limit_mib, startup_timeout)
        stats.baselines.append(w.baseline)
        return w

    def finish(w, outcome, exc="", msg="", tb=None, rss_peak=None, rss_before=None):
        idx, name, payload, sent = w.job
        ts = stats.targets[name]
        ts.inputs += 1
        ts.outcomes[outcome] += 1
        ts.max_input = max(ts.max_input, len(payload))
        ts.busy_s += time.monotonic() - sent
        if rss_peak is not None:
            ts.peak_above_baseline = max(ts.peak_above_baseline, rss_peak - w.baseline)
        if rss_before is not None:
            ts.growth = max(ts.growth, rss_peak - rss_before)
            if len(payload) >= RATIO_MIN:
                ts.ratio = max(ts.ratio, (rss_peak - rss_before) / len(payload))
            w.done += 1
            w.rss_last = rss_before
            if w.done == CREEP_AT:
                w.rss_at = rss_before
        if outcome in FAILURES:
            _record(stats, out_dir, idx, name, payload, outcome, exc, msg, tb)
        w.job = None

    try:
        pool = [spawn() for _ in range(workers)]
        start = time.monotonic()
        end = start + minutes * 60
        next_progress = start + 10
        i = 0
        while True:
            now = time.monotonic()
            more = now < end and (max_inputs is None or i < max_inputs)
            for w in pool:
                if w.job is None and more:
                    w.send((i, *_draw(i, seed, names, seeds_by_kind), time.monotonic()))
                    i += 1
                    more = now < end and (max_inputs is None or i < max_inputs)
            busy = [w for w in pool if w.job is not None]
            if not busy:
                break
            ready = select.select([w.fd for w in busy], [], [], 0.05)[0]
            for k, w in enumerate(pool):
                if w.job is None:
                    continue
                reply = w.poll_reply() if w.fd in ready or b"\n" in w.buf else None
                if reply == "EOF":
                    code = w.proc.wait()
                    why = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
                    finish(w, "crash", "", f"worker died ({why})")
                elif reply is not None:
                    r = json.loads(reply)
                    finish(w, r["o"], r.get("e", ""), r.get("m", ""), r.get("tb"), r["h"], r["r0"])
                    continue
                else:
                    age = time.monotonic() - w.job[3]
                    if age > timeout_s:
                        finish(w, "hang", "", f"no answer within {timeout_s} s")
                    elif age > 0.05 and (rss := w.rss()) > w.baseline + 3 * len(w.job[2]) + slack_mib * _MIB:
                        finish(w, "memory", "", f"RSS {rss / _MIB:.0f} MiB > baseline "
                               f"{w.baseline / _MIB:.0f} MiB + 3 x input + {slack_mib} MiB", rss_peak=rss)
                    else:
                        continue
                w.kill()  # crash, hang or memory: replace the worker
                stats.restarts += 1
                t0 = time.monotonic()
                pool[k] = spawn()
                for other in pool:  # the start-up blocked this loop: not the other inputs' time
                    if other.job is not None:
                        other.job = (*other.job[:3], other.job[3] + time.monotonic() - t0)
            if progress and time.monotonic() > next_progress:
                stats.wall_s = time.monotonic() - start
                progress(stats, i)
                next_progress = time.monotonic() + 10
        stats.wall_s = time.monotonic() - start
    finally:
        for w in pool:
            if w.rss_last is not None:
                stats.creep.append((None if w.rss_at is None else w.rss_at - w.baseline, w.rss_last - w.baseline, w.done))
            w.kill()
        log.close()
    return stats


def _mib(x: int) -> str:
    return f"{x / _MIB:.2f}"


def format_table(stats: RunStats) -> str:
    """The per-reader table and the run's totals (what ``python -m tests.fuzz`` prints)."""
    head = ("target", "inputs", *OUTCOMES, "max in KiB", "peak MiB", "grow MiB", "grow/in", "in/s")
    rows = []
    for name, t in sorted(stats.targets.items()):
        rate = t.inputs / t.busy_s if t.busy_s else 0.0
        rows.append((name, str(t.inputs), *(str(t.outcomes[o]) for o in OUTCOMES), f"{t.max_input / 1024:.1f}",
                     _mib(t.peak_above_baseline), _mib(t.growth), f"{t.ratio:.2f}", f"{rate:.0f}"))
    tot = {o: sum(t.outcomes[o] for t in stats.targets.values()) for o in OUTCOMES}
    rows.append(("TOTAL", str(stats.total), *(str(tot[o]) for o in OUTCOMES), f"{stats.max_input / 1024:.1f}",
                 _mib(stats.peak_above_baseline), _mib(stats.growth),
                 f"{max((t.ratio for t in stats.targets.values()), default=0):.2f}",
                 f"{stats.total / stats.wall_s:.0f}" if stats.wall_s else "-"))
    widths = [max(len(r[i]) for r in (head, *rows)) for i in range(len(head))]
    fmt = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
    lines = [fmt(head), "  ".join("-" * w for w in widths), *map(fmt, rows)]
    n_fail = sum(tot[o] for o in FAILURES)
    base = stats.baselines
    lines += [
        "",
        f"inputs {stats.total} in {stats.wall_s:.0f} s with {stats.workers} workers = {stats.total / max(stats.wall_s, 1e-9):.0f} "
        f"inputs/s; seed {stats.seed}; worker restarts {stats.restarts}",
        f"failures (exception + oracle + crash + hang + memory): {n_fail}",
        f"worker baseline RSS (after import + warm-up): {_mib(min(base, default=0))}..{_mib(max(base, default=0))} MiB; "
        f"peak RSS above baseline: {_mib(stats.peak_above_baseline)} MiB; largest input {_mib(stats.max_input)} MiB; "
        f"bound 3 x largest input = {_mib(3 * stats.max_input)} MiB: {'OK' if stats.memory_ok else 'EXCEEDED'}",
        f"largest RSS growth within one input: {_mib(stats.growth)} MiB: {'OK' if stats.input_memory_ok else 'EXCEEDED'}",
        "worker RSS just before an input, above baseline (creep): " + "; ".join(
            f"worker {k}: {'-' if at is None else _mib(at)} MiB at input {CREEP_AT}, {_mib(last)} MiB at its last ({n})"
            for k, (at, last, n) in enumerate(stats.creep)),
        "peak MiB = max over inputs of (worker peak RSS while handling the input - that worker's baseline); "
        "grow MiB = max over inputs of (that peak - RSS just before the input); grow/in = the largest such growth / "
        f"input size over inputs >= {RATIO_MIN >> 10} KiB; in/s = inputs / worker time on them",
    ]
    return "\n".join(lines)
