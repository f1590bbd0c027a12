"""A mutation fuzzer for every cuzk reader (docs/reliability.md).

* :mod:`.targets`: the registry of readers (bellperson ``.params``/``.vk``/proofs, snarkjs
  ``.zkey``/``.wtns``/``.r1cs`` and JSON, the PCE file, saved timelines, zcash point encodings),
  each with an oracle for accepted inputs; one :func:`~.targets.register` call adds a reader.
* :mod:`.seeds`: seed files made by cuzk itself, once per run, in a temp folder.
* :mod:`.mutate`: generic and format-aware mutations (checksums recomputed where there is one).
* :mod:`.worker`: the persistent worker process; :mod:`.runner`: workers, watchdog, table.

Long runs: ``python -m tests.fuzz --minutes 60 --workers 2`` from the repository root (see
:mod:`.__main__`). CI: ``tests/fuzz/test_fuzz_ci.py`` runs a short budget over every target.
"""

__all__ = ["targets", "seeds", "mutate", "worker", "runner"]
