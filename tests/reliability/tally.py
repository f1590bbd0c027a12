"""Counters of a fault run and the table it prints.

Violations are what the oracle forbids (lost or double-resolved futures, wrong results or
exceptions, unrequested cancels, leaked threads, timeline or status inconsistencies, hangs);
notes are things worth knowing that are allowed (an id reuse refused while the old job's
partitions were still in flight, a callback's SystemExit caught by a worker).

    >>> t = Tally()
    >>> t.violation("lost", "job e0.j1 never resolved")
    >>> t.ok, t.violations["lost"]
    (False, 1)
"""

from __future__ import annotations

import collections
import threading

__all__ = ["Tally", "VIOLATION_KINDS", "ENGINE_VIOLATION_KINDS", "KNOWN_DEFECTS"]

#: Printed in this order (zeros included) so a clean run shows every check it made.
VIOLATION_KINDS = (
    "lost", "wait-blind", "double-resolved", "wrong-result", "wrong-exception", "unrequested-cancel", "leaked-threads",
    "timeline", "status", "hang", "close-interrupted", "submit-refused", "auto-id-refused", "reuse-refused",
    "cancel-id-held", "harness-error",
)
#: Checks only an Engine run makes (reliability.engine_target): deadlines, request ids, evict(),
#: and the two deadline defects its first long run found (see KNOWN_DEFECTS).
ENGINE_VIOLATION_KINDS = ("deadline", "request-id", "evict", "expiry-leak", "expired-cancelled")

#: Violation kinds of defects reported to the lead and tracked by strict xfail tests in
#: tests/test_reliability_faults.py; CI tolerates them (and only them) until they are fixed.
#: Remove an entry when its fix lands (its xfail test then passes and fails as strict).
KNOWN_DEFECTS: dict[str, str] = {}  # all seven found by the long runs are fixed (see the tests)

_EXAMPLES = 5  # messages kept per violation kind


class Tally:
    """Everything one run counted; episodes add to it as they finish. ``kinds``: the violation
    kinds this run checks (printed in that order)."""

    def __init__(self, kinds=VIOLATION_KINDS):
        self.kinds = tuple(kinds)
        self.jobs = 0
        self.followup_jobs = 0  # submitted by done-callbacks and listeners
        self.units = 0
        self.episodes = 0
        self.seconds = 0.0
        self.outcomes = collections.Counter()  # done / failed / cancelled (jobs)
        self.unit_terminals = collections.Counter()  # JOB_DONE / JOB_FAILED / JOB_CANCELLED (units)
        self.faults = collections.Counter()  # (stage, kind) -> executed
        self.actions = collections.Counter()  # driver/callback/listener actions performed
        self.configs = collections.Counter()  # (setting, value) -> episodes
        self.notes = collections.Counter()
        self.violations = collections.Counter()
        self.examples: dict = collections.defaultdict(list)
        self._lock = threading.Lock()  # callbacks and listeners count from worker threads

    def violation(self, kind: str, message: str) -> None:
        assert kind in self.kinds, kind
        with self._lock:
            self.violations[kind] += 1
            if len(self.examples[kind]) < _EXAMPLES:
                self.examples[kind].append(message)

    def note(self, what: str, n: int = 1) -> None:
        with self._lock:
            self.notes[what] += n

    def act(self, what: str, n: int = 1) -> None:
        with self._lock:
            self.actions[what] += n

    @property
    def ok(self) -> bool:
        return not sum(self.violations.values())

    @property
    def new_violations(self) -> dict:
        """Violations of kinds not in :data:`KNOWN_DEFECTS`."""
        return {k: n for k, n in self.violations.items() if n and k not in KNOWN_DEFECTS}

    def table(self, title: str) -> str:
        rate = self.jobs / self.seconds if self.seconds else float("nan")
        out = [title,
               f"  episodes {self.episodes}, jobs {self.jobs} ({self.followup_jobs} submitted by callbacks/listeners), "
               f"units {self.units}, {self.seconds:.1f} s, {rate:.0f} jobs/s"]
        out.append("  configurations (episodes): " + ", ".join(
            f"{k}={v}:{n}" for (k, v), n in sorted(self.configs.items(), key=lambda kv: (kv[0][0], str(kv[0][1])))))
        out.append("  faults injected (executed in a stage):")
        for stage in ("synth", "prove"):
            row = sorted(((k, n) for (s, k), n in self.faults.items() if s == stage), key=lambda kn: -kn[1])
            out.append(f"    {stage:<6} total {sum(n for _, n in row):>7}: " + ", ".join(f"{k} {n}" for k, n in row))
        out.append("  actions: " + ", ".join(f"{k} {n}" for k, n in sorted(self.actions.items())))
        out.append("  job outcomes: " + ", ".join(f"{k} {self.outcomes[k]}" for k in ("done", "failed", "cancelled"))
                   + (f" (failed: {self.outcomes['expired']} expired their deadline)" if self.outcomes["expired"] else ""))
        out.append("  unit terminal events: " + ", ".join(f"{k} {n}" for k, n in sorted(self.unit_terminals.items())))
        if self.notes:
            out.append("  notes (allowed):")
            out += [f"    {k}: {n}" for k, n in sorted(self.notes.items())]
        known = sum(self.violations[k] for k in KNOWN_DEFECTS)
        out.append(f"  violations: {sum(self.violations.values())} ({known} of known defects, marked *)")
        for kind in self.kinds:
            mark = "*" if kind in KNOWN_DEFECTS else " "
            out.append(f"   {mark}{kind:<18} {self.violations[kind]}")
            out += [f"      e.g. {m}" for m in self.examples.get(kind, ())]
        return "\n".join(out)
