"""A fault run: episodes until ``jobs`` jobs were planned, each checked by the oracle.

    >>> tally = fault_run(jobs=30, seed=3, episode_jobs=(10, 20))
    >>> tally.new_violations, tally.jobs >= 30
    ({}, True)
"""

from __future__ import annotations

import random
import time

from reliability.driver import Episode
from reliability.logs import captured_logs
from reliability.oracle import check_episode
from reliability.plan import Planner
from reliability.tally import Tally
from reliability.target import pipeline_target

__all__ = ["fault_run"]


def fault_run(jobs: int, seed: int, *, episode_jobs=(40, 200), make_target=pipeline_target,
              planner: Planner | None = None, progress=None, stop_on_hang: bool = True) -> Tally:
    """Push at least ``jobs`` jobs (follow-ups from callbacks and listeners included) through
    fresh targets, ``episode_jobs`` (min, max) planned jobs each; returns the tally.

    ``make_target(cfg, synthesizer, prover, timeline)`` builds the system under test (default:
    a :class:`cuzk.pipeline.Pipeline`); ``progress(tally)`` is called after each episode. A hung
    close stops the run when ``stop_on_hang`` (its threads may still hold the CPU).
    """
    planner = planner or Planner(seed)
    sizes = random.Random(f"{seed}:sizes")
    tally = Tally()
    t0 = time.perf_counter()
    index = 0
    with captured_logs(tally):
        while tally.jobs < jobs:  # jobs submitted (a close mid-run refuses the rest of its episode)
            n = min(sizes.randint(*episode_jobs), max(1, jobs - tally.jobs))
            cfg = planner.episode(index, n)
            for key, value in (("concurrency", cfg.concurrency), ("lookahead", cfg.lookahead),
                               ("gpu_workers", cfg.gpu_workers), ("budget", cfg.memory_budget is not None)):
                tally.configs[(key, value)] += 1
            ep = Episode(cfg, planner, make_target, tally)
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
