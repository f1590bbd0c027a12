"""The Engine's package (DESIGN §8): a multi-circuit proving service built on :mod:`cuzk.pipeline`.

Building blocks, each usable on its own:

* :mod:`cuzk.engine.keycache` — the disk tier of proving keys (checked once, then memory-mapped);
* :mod:`cuzk.engine.executors` — where synthesis runs: the calling threads, or worker processes;
* :mod:`cuzk.engine.status_http` and :mod:`cuzk.prometheus` — the status endpoint and
  the metrics text.

    >>> from cuzk.engine.keycache import KeyCache        # doctest: +SKIP
"""

__all__: list[str] = []
