"""A fault run: episodes until ``jobs`` jobs were planned, each checked by the oracle.

    >>> tally = fault_run(jobs=30, seed=3, episode_jobs=(10, 20))
    >>> tally.new_violations, tally.jobs >= 30
    ({}, True)
    >>> fault_run(jobs=30, seed=3, episode_jobs=(10, 20), target="engine").new_violations
    {}
"""

from __future__ import annotations

import random
import time

from reliability.driver import Episode
from reliability.logs import captured_logs
from reliability.oracle import check_episode
from reliability.plan import Planner
from reliability.tally import ENGINE_VIOLATION_KINDS, VIOLATION_KINDS, Tally
from reliability.target import pipeline_target

__all__ = ["fault_run", "TARGETS"]

#: What ``fault_run(target=...)`` accepts.
TARGETS = ("pipeline", "engine")


def fault_run(jobs: int, seed: int, *, episode_jobs=(40, 200), make_target=None,
              planner: Planner | None = None, progress=None, stop_on_hang: bool = True,
              target: str = "pipeline") -> Tally:
    """Push at least ``jobs`` jobs (follow-ups from callbacks and listeners included) through
    fresh targets, ``episode_jobs`` (min, max) planned jobs each; returns the tally.

    ``target``: ``"pipeline"`` (a :class:`cuzk.pipeline.Pipeline` per episode) or ``"engine"``
    (a :class:`cuzk.Engine` with 2-3 circuits, its deadlines, repeated request ids and evict
    calls: :mod:`reliability.engine_target`). ``make_target(cfg, synthesizer, prover, timeline)``
    overrides how the system under test is built; ``progress(tally)`` is called after each
    episode. A hung close stops the run when ``stop_on_hang`` (its threads may still hold the CPU).
    """
    if target == "pipeline":
        episode_cls, kinds = Episode, VIOLATION_KINDS
        make_target = make_target or pipeline_target
        planner = planner or Planner(seed)
    elif target == "engine":
        from reliability.engine_target import EngineEpisode, EnginePlanner, engine_target

        episode_cls, kinds = EngineEpisode, VIOLATION_KINDS + ENGINE_VIOLATION_KINDS
        make_target = make_target or engine_target
        planner = planner or EnginePlanner(seed)
    else:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    sizes = random.Random(f"{seed}:sizes")
    tally = Tally(kinds)
    t0 = time.perf_counter()
    index = 0
    with captured_logs(tally):
        while tally.jobs < jobs:  # jobs submitted (a close mid-run refuses the rest of its episode)
            n = min(sizes.randint(*episode_jobs), max(1, jobs - tally.jobs))
            cfg = planner.episode(index, n)
            for key, value in (("concurrency", cfg.concurrency), ("lookahead", cfg.lookahead),
                               ("gpu_workers", cfg.gpu_workers), ("budget", cfg.memory_budget is not None)):
                tally.configs[(key, value)] += 1
            ep = episode_cls(cfg, planner, make_target, tally)
            ep.run()
            for (stage, kind), count in ep.registry.injected.items():
                tally.faults[(stage, kind)] += count
            check_episode(ep)
            tally.seconds = time.perf_counter() - t0
            index += 1
            if progress is not None:
                progress(tally)
            if ep.hung and stop_on_hang:
                break
    tally.seconds = time.perf_counter() - t0
    return tally
