"""Seeded plans: what each episode's pipeline looks like and what each job and unit will do.

An *episode* is one pipeline from creation to ``close``; the run is a sequence of episodes, each
planned from ``random.Random(f"{seed}:{episode}")`` so a failing episode can be replayed alone.
Thread interleavings are not reproducible; the plans (faults, configuration, actions) are.

    >>> p = Planner(seed=1)
    >>> cfg = p.episode(0, n_jobs=10)
    >>> cfg.lookahead in (0, 1, 2) and cfg.gpu_workers in (1, 2, 3)
    True
    >>> job = p.job(cfg, 0)
    >>> job.units[0].token[0]
    'e0.j0'
"""

from __future__ import annotations

import random

from reliability.kinds import PROVE_FAULTS, SYNTH_FAULTS

__all__ = ["UnitSpec", "JobPlan", "EpisodeConfig", "Planner", "LISTENER_KINDS", "CALLBACK_KINDS"]

#: What a timeline listener may do on the events it sees (an episode picks a few).
LISTENER_KINDS = ("status", "metrics", "submit", "cancel", "raise", "raise_base")
#: What a job's extra done-callbacks may do (after the counting one, which is always first).
CALLBACK_KINDS = ("raise", "raise_base", "submit", "reuse_self", "cancel_other", "close")


class UnitSpec:
    """What one unit (a job, or one partition) does; passed as ``synthesize(u=spec)``.

    ``token`` is ``(job_key, partition)``: ``job_key`` is unique per submitted job even when its
    job id is a reused one, so a result delivered to the wrong job is detectable.
    """

    __slots__ = ("token", "payload", "synth", "prove", "delay")

    def __init__(self, token, payload: int, synth: str, prove: str, delay: float):
        self.token, self.payload, self.synth, self.prove, self.delay = token, payload, synth, prove, delay

    def __repr__(self):
        return f"<unit {self.token} synth={self.synth} prove={self.prove}>"


class JobPlan:
    """One job: its units, how it is submitted, and what the driver does to it."""

    __slots__ = ("key", "units", "partitioned", "priority", "id_mode", "cancel", "callbacks", "deadline")

    def __init__(self, key, units, partitioned, priority, id_mode, cancel, callbacks, deadline=None):
        self.key, self.units, self.partitioned = key, units, partitioned
        self.priority, self.id_mode, self.cancel, self.callbacks = priority, id_mode, cancel, callbacks
        # seconds from submit to the job's deadline (negative: already past); None: no deadline.
        # Only the Engine planner (reliability.engine_target) sets one: a Pipeline has no deadlines
        self.deadline = deadline


class EpisodeConfig:
    """One pipeline's settings and the episode-wide actions."""

    __slots__ = ("index", "n_jobs", "concurrency", "lookahead", "gpu_workers", "memory_budget", "unit_bytes",
                 "listeners", "close_at", "close_wait", "close_cancel", "pace")

    def __init__(self, **kw):
        for name in self.__slots__:
            setattr(self, name, kw[name])

    def describe(self) -> str:
        budget = "none" if self.memory_budget is None else f"{self.memory_budget}B/{self.unit_bytes}B"
        close = ("end" if self.close_at is None
                 else f"at job {self.close_at} (wait={self.close_wait}, cancel_futures={self.close_cancel})")
        return (f"episode {self.index}: {self.n_jobs} jobs, concurrency={self.concurrency!r}, "
                f"lookahead={self.lookahead}, gpu_workers={self.gpu_workers}, memory budget {budget}, "
                f"listeners={sorted(self.listeners)}, close {close}")


def _weighted(rng: random.Random, table) -> str:
    kinds, weights = zip(*table)
    return rng.choices(kinds, weights)[0]


class Planner:
    """Draws episode configurations and job plans; one rng per episode."""

    def __init__(self, seed: int, synth_faults=SYNTH_FAULTS, prove_faults=PROVE_FAULTS):
        self.seed = seed
        self.synth_faults, self.prove_faults = synth_faults, prove_faults
        self.rng = random.Random(seed)

    def episode(self, index: int, n_jobs: int) -> EpisodeConfig:
        rng = self.rng = random.Random(f"{self.seed}:{index}")
        budgeted = rng.random() < 0.3
        unit_bytes = 1000
        listeners = {k for k in LISTENER_KINDS if rng.random() < 0.3}
        close_at = rng.randrange(n_jobs) if rng.random() < 0.3 else None
        return EpisodeConfig(
            index=index, n_jobs=n_jobs,
            concurrency=rng.choice([1, 2, 3, "auto"]), lookahead=rng.randint(0, 2), gpu_workers=rng.randint(1, 3),
            # 1 to 4 units' worth, sometimes less than one unit (a unit bigger than the budget runs alone)
            memory_budget=rng.choice([500, 1000, 2500, 4000]) if budgeted else None,
            unit_bytes=unit_bytes if budgeted else None,
            listeners=listeners, close_at=close_at, close_wait=rng.random() < 0.5,
            close_cancel=rng.random() < 0.5,
            # how often the driver waits for a recent job, so cancels also hit running jobs
            pace=rng.choice([0.0, 0.05, 0.2]),
        )

    def job(self, cfg: EpisodeConfig, n: int, key: str | None = None) -> JobPlan:
        """Plan job ``n`` of episode ``cfg`` (``key`` overrides the job key, for follow-up jobs).

        Each job has its own rng seeded by its key: follow-up jobs planned on worker threads
        (callbacks, listeners) neither race on a shared rng nor shift the driver's plans.
        """
        key = key or f"e{cfg.index}.j{n}"
        rng = random.Random(f"{self.seed}:{key}")
        partitioned = rng.random() < 0.3
        n_units = rng.randint(1, 4) if partitioned else 1
        units = []
        for k in range(n_units):
            token = (key, k if partitioned else None)
            units.append(UnitSpec(token, rng.getrandbits(62), _weighted(rng, self.synth_faults),
                                  _weighted(rng, self.prove_faults), rng.choice([0.0, 0.0005, 0.002])))
        r = rng.random()
        # auto: the pipeline numbers it; reuse: the id of a resolved job; int: a small explicit int,
        # near the pipeline's own numbering (users mix them); fresh: the job key
        id_mode = "auto" if r < 0.2 else "reuse" if r < 0.3 else "int" if r < 0.33 else "fresh"
        r = rng.random()
        cancel = "now" if r < 0.05 else "later" if r < 0.12 else "none"
        callbacks = [k for k, p in zip(CALLBACK_KINDS, (0.03, 0.02, 0.02, 0.02, 0.02, 0.002)) if rng.random() < p]
        return JobPlan(key, units, partitioned, rng.randint(0, 3), id_mode, cancel, callbacks)
