"""Short key-cache soak (tests/reliability/keycache_soak.py): two proving processes map a zkey's
cache entry while the driver edits it in place, truncates it (with no mapping live), replaces,
unlinks, prunes and clears it. Every job ends as a verified proof or a ``cuzk.errors``
exception; no worker dies, nothing else is raised. ``python -m tests.reliability.keycache_soak
--seconds 180`` runs it long (docs/reliability.md)."""

import pytest

from reliability.keycache_soak import run


@pytest.mark.slow
def test_proving_processes_survive_an_operator_editing_and_clearing_their_cache(tmp_path):
    r = run(seconds=10, provers=2, seed=3, folder=tmp_path, min_faults=10)
    assert (r.crashes, r.non_cuzk) == (0, 0), r.samples
    assert r.jobs > 0 and r.proofs > 0 and r.loads > 0
    assert r.faults["edit"] >= 10 and r.inputs >= 20
