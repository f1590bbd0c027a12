"""The 32 GiB StackedCircuit partition cuzk traces with stamping has bellperson's own count: the
Rust oracle's ``count-blank`` (tests/oracles/rust-fil-proofs/README.md) synthesizes filecoin-proofs'
blank circuit of the registered proof into bellperson's ``BenchCS``, the circuit Filecoin's
Groth16 parameters were generated for. Skipped where cargo is absent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "oracles"))
from rust_oracle import oracle_binary  # noqa: E402

from cuzk.circuits.filecoin.porep.circuit import StackedCircuit  # noqa: E402
from cuzk.synth.placement import pce_sizes  # noqa: E402
from cuzk.synth.program import trace  # noqa: E402


# bellperson's BenchCS takes ~50 CPU-s per registered proof (114 s wall for one alone on the
# loaded 2-core host, 10 MB); both ids run at once, beside cuzk's ~20 s stamped trace (~3 GiB):
# 2.2 CPU-min in all, 4 min wall at a load average of 26
@pytest.mark.slow
def test_32gib_partition_count_is_bellpersons(tmp_path):
    binary = oracle_binary()
    # StackedDrg32GiBV1 and V1_1: the same circuit, different porep ids and API versions
    procs = {pid: subprocess.Popen([str(binary), "--tmp", str(tmp_path / "tmp"), "count-blank", "--registered-proof",
                                    str(pid)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for pid in (3, 8)}
    try:
        cs, _ = trace(StackedCircuit(32 << 30))
        ours = (pce_sizes(cs)["rows"], cs.n_public + 1)
        del cs
        assert ours == (130_278_541, 328)
        for pid, proc in procs.items():
            out, err = proc.communicate(timeout=1200)
            assert proc.returncode == 0, err
            theirs = json.loads(out)
            assert theirs["sector_size"] == 32 << 30 and theirs["challenges_in_partition"] == 18
            assert (theirs["num_constraints"], theirs["num_inputs"]) == ours, (pid, theirs)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
