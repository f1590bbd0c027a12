"""Fake fast stages that inject the faults a :class:`~reliability.plan.UnitSpec` asks for.

No proving: ``synthesize(u=spec)`` returns a :class:`Witness` carrying the unit's token and a
mix of its payload; ``prove(witness)`` returns ``("proof", job_key, partition, digest)``, so a
result delivered to the wrong job or partition, or computed from the wrong inputs, differs
from :func:`expected_proof`. Every exception a stage raises, and every odd object it returns,
is kept in a :class:`Registry` so the oracle can check identity.

    >>> from reliability.plan import UnitSpec
    >>> reg = Registry()
    >>> u = UnitSpec(("e0.j0", None), 42, "ok", "ok", 0.0)
    >>> FaultProver(reg).prove(FaultSynthesizer(reg).synthesize(u=u)) == expected_proof(u)
    True
"""

from __future__ import annotations

import collections
import threading
import time

from cuzk.timeline import current_stage, span
from reliability.kinds import ERROR_KINDS, Hostile, NoWitnessError, raise_injected

__all__ = ["Witness", "Registry", "FaultSynthesizer", "FaultProver", "expected_proof", "unit_outcome"]

_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15  # odd 64-bit multiplier (2^64 / golden ratio): a cheap bijective mix


def _mix(payload: int) -> int:
    return (payload * _GOLDEN) & _MASK64


def _digest(mixed: int) -> int:
    return mixed ^ (mixed >> 29)


def expected_proof(unit) -> tuple:
    """The proof a unit whose stages succeed must produce."""
    key, part = unit.token
    return ("proof", key, part, _digest(_mix(unit.payload)))


def unit_outcome(unit) -> str:
    """``"fail"`` (a stage raises), ``"none"`` (prove returns None), ``"odd"`` (a Hostile) or ``"ok"``."""
    if unit.synth in ERROR_KINDS or unit.synth == "none_witness":
        return "fail"
    if unit.prove in ERROR_KINDS or unit.prove == "error_in_span":
        return "fail"
    return {"return_none": "none", "return_odd": "odd"}.get(unit.prove, "ok")


class Witness:
    """What the fake synthesizer produces for one unit."""

    __slots__ = ("token", "mixed", "prove", "delay")

    def __init__(self, token, mixed, prove, delay):
        self.token, self.mixed, self.prove, self.delay = token, mixed, prove, delay


class Registry:
    """Thread-safe record of what the stages did: raised exceptions, odd results, fault counts."""

    def __init__(self):
        self._lock = threading.Lock()
        self.raised: dict = {}  # token -> exceptions raised for that unit
        self.no_witness: dict = collections.defaultdict(list)  # (job_id, partition) -> NoWitnessErrors
        self.odd: dict = {}  # token -> the Hostile object prove returned
        self.injected = collections.Counter()  # (stage, kind) -> faults actually executed
        self.calls = collections.Counter()  # (stage, token) -> calls (a unit runs each stage at most once)

    def count(self, stage: str, kind: str, token) -> None:
        with self._lock:
            self.calls[(stage, token)] += 1
            if kind != "ok":
                self.injected[(stage, kind)] += 1

    def raised_for(self, token):
        def record(exc):
            with self._lock:
                self.raised.setdefault(token, []).append(exc)
        return record

    def record_no_witness(self, key, exc) -> None:
        with self._lock:
            self.no_witness[key].append(exc)

    def record_odd(self, token, obj) -> None:
        with self._lock:
            self.odd[token] = obj


class FaultSynthesizer:
    """``synthesize(u=spec)``: the unit's synth fault, else a :class:`Witness`.

    ``estimate_bytes`` is set only when the episode has a memory budget (the pipeline refuses a
    budget without an estimate).
    """

    def __init__(self, registry: Registry, unit_bytes: int | None = None):
        self.registry = registry
        if unit_bytes is not None:
            self.estimate_bytes = lambda: unit_bytes

    def synthesize(self, u):
        kind = u.synth
        self.registry.count("synth", kind, u.token)
        if kind in ERROR_KINDS:
            raise_injected(kind, "synthesis", u.token, u.delay, self.registry.raised_for(u.token))
        w = Witness(u.token, _mix(u.payload), u.prove, u.delay)
        if kind == "slow":
            time.sleep(u.delay)
        elif kind == "odd_witness":
            return Hostile(w)
        elif kind == "none_witness":
            return None
        return w


class FaultProver:
    """``prove(witness)``: the unit's prove fault, else ``("proof", job_key, partition, digest)``."""

    def __init__(self, registry: Registry):
        self.registry = registry

    def prove(self, w):
        if w is None:  # the synthesizer returned None: fail, recording under the stage context
            ctx = current_stage()
            key = None if ctx is None else (ctx.job_id, ctx.partition)
            exc = NoWitnessError(f"prove got None for {key}")
            self.registry.record_no_witness(key, exc)
            raise exc
        if type(w) is Hostile:  # type(), not isinstance/bool: every generic operation on it raises
            w = w.inner
        kind = w.prove
        self.registry.count("prove", kind, w.token)
        if kind in ERROR_KINDS:
            raise_injected(kind, "proving", w.token, w.delay, self.registry.raised_for(w.token))
        if kind == "error_in_span":
            with span("MSM_A"):
                raise_injected("value_error", "proving (in a span)", w.token, 0.0, self.registry.raised_for(w.token))
        if kind == "return_none":
            return None
        if kind == "return_odd":
            obj = Hostile()
            self.registry.record_odd(w.token, obj)
            return obj
        if kind == "slow":
            time.sleep(w.delay)
        key, part = w.token
        if w.mixed & 3 == 0:  # a quarter of the proofs report a sub-span, like a real prover
            with span("MSM_A"):
                pass
        return ("proof", key, part, _digest(w.mixed))
