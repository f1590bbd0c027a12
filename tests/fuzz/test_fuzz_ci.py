"""CI: a short fuzz budget over every reader (a fixed number of inputs, so it does not depend on
machine speed); any failure outcome fails the test and names the saved input.

The long campaign is ``python -m tests.fuzz --minutes N`` (see tests/fuzz/__main__.py).
"""

from __future__ import annotations

import os
import random

import pytest

from .mutate import MAX_INPUT, mutate
from .runner import FAILURES, format_table, run
from .targets import TARGETS

# ~1,300 inputs per reader over the 23 readers: ~60 s on one worker with a warm Numba cache, two thirds
# of it in the Filecoin documents (a C1 check recomputes its paths and labels: ~50 inputs/s)
CI_INPUTS = int(os.environ.get("CUZK_FUZZ_CI_INPUTS", str(1500 * 20)))


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="the watchdog reads /proc")
def test_short_fuzz_run_finds_no_failures(tmp_path):
    stats = run(minutes=10, max_inputs=CI_INPUTS, seed=12, workers=1, out_dir=tmp_path, timeout_s=30)
    table = format_table(stats)
    print(table)
    assert stats.total == CI_INPUTS and set(stats.targets) == set(TARGETS)
    bad = [f for f in stats.failures if f["outcome"] in FAILURES]
    assert not bad, table + "\n" + "\n".join(f"{f['target']} {f['outcome']} {f['exc']}: {f['msg']} ({f['input']})" for f in bad)
    assert stats.input_memory_ok, table
    # every reader saw both outcomes at least once: a mutator that can never produce an accepted
    # input (or a reader that accepts everything) would make the run meaningless
    for name, t in stats.targets.items():
        assert t.outcomes["rejected"] and t.outcomes["accepted"], f"{name}: {t.outcomes}"


def test_mutations_are_reproducible_and_capped():
    seed = bytes(range(256)) * 4
    a = [mutate(random.Random(f"7:{i}"), seed, [seed[::-1]], "bellperson") for i in range(200)]
    b = [mutate(random.Random(f"7:{i}"), seed, [seed[::-1]], "bellperson") for i in range(200)]
    assert a == b and len(set(a)) > 150 and max(map(len, a)) <= MAX_INPUT
