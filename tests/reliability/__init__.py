"""Reliability harnesses for cuzk's front ends: fault injection and soak runs.

* :mod:`reliability.kinds`: the faults (exceptions of every kind, hostile objects);
* :mod:`reliability.plan`: seeded episode and job plans;
* :mod:`reliability.stages`: fake fast stages that inject the planned faults;
* :mod:`reliability.target`: the system under test behind submit/cancel/close/status/timeline;
* :mod:`reliability.engine_target`: the same for :class:`cuzk.Engine` (2-3 circuits), with its
  deadlines, repeated request ids and ``evict`` calls, and their checks;
* :mod:`reliability.driver`: one episode (driver, done-callbacks, listeners, bounded closes);
* :mod:`reliability.oracle`: what must hold after an episode;
* :mod:`reliability.run`: the loop over episodes; :mod:`reliability.tally`: counts and the table;
* :mod:`reliability.soak`: many real proofs through one pipeline, with RSS growth.

Used by ``tests/test_reliability_*.py`` (short) and ``benchmarks/fault_run.py`` /
``benchmarks/soak_run.py`` (long), which put ``tests/`` on ``sys.path``.
"""
