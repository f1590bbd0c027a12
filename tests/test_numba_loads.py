"""Cached kernels load without Numba's compiler registries (cuzk/_numba_loads.py), and the
``cuzk`` processes that ask for it end without the interpreter's tear-down (cuzk/cli_exit.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import cuzk  # noqa: F401 (installs the load)
from cuzk import _numba_loads

# a fresh process: a cached kernel, then a new compile that calls it (Numba links the cached
# library into the new code) and one that needs numpy implementations from the registries
_PROBE = textwrap.dedent("""
    import sys
    import numpy as np
    from numba import njit
    from cuzk import _numba_loads
    from cuzk.field import Fr
    from cuzk.curves.bls12_381 import ntt_kernels
    three, two = Fr.from_ints([3]), Fr.from_ints([2])
    got = Fr.to_ints(ntt_kernels.powers(three, two, 5))
    assert got == [3 * 2**i for i in range(5)], got
    print("registries", "numba.np.linalg" in sys.modules)
    print("pending", _numba_loads.pending_libraries())
    from numba.core.registry import cpu_target
    engine = cpu_target.target_context.codegen()._engine
    # a name no machine code defines: every pending library is parsed, then Numba's own answer
    print("unknown", engine.is_symbol_defined("cuzk_no_such_symbol"), _numba_loads.pending_libraries())
    @njit
    def linked(c, g, n):
        return ntt_kernels.powers(c, g, n)[n - 1, 0]
    print("linked", linked(three, two, 5) == ntt_kernels.powers(three, two, 5)[4, 0])
    @njit
    def total(x):
        return np.cumsum(x)[-1] + np.median(x)  # numpy implementations from the skipped registries
    print("compiled", total(np.ones(4)))
""")


def _probe():
    r = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.split("\n")


def test_installed_on_this_numba():
    assert _numba_loads.installed()
    assert _numba_loads.install()  # idempotent


def test_cached_load_skips_the_compile_work_and_compiles_still_work():
    _probe()  # fills the on-disk cache if this run has not yet (then the registries load: a compile)
    out = _probe()
    assert "registries False" in out  # the cached kernels loaded without them
    pending = int(next(line for line in out if line.startswith("pending")).split()[1])
    assert pending >= 2  # Fr's and the NTT's libraries: linking bitcode not parsed
    assert "unknown False 0" in out
    assert "linked True" in out  # linking a cached library into new code parsed it then
    assert "compiled 5.0" in out  # a compile afterwards found every registry it needs


def test_exit_process_flushes_and_keeps_the_status(tmp_path):
    script = textwrap.dedent("""
        import atexit, sys, types
        from cuzk.cli_exit import exit_process
        atexit.register(lambda: print("atexit ran"))
        print("partial line", end="")
        print("to stderr", file=sys.stderr, end="")
        exit_process(int(sys.argv[1]), types.SimpleNamespace(fast_exit=sys.argv[2] == "fast"))
    """)
    for status, mode in [(0, "fast"), (3, "fast"), (0, "normal"), (4, "normal")]:
        r = subprocess.run([sys.executable, "-c", script, str(status), mode], capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == status
        assert r.stderr.endswith("to stderr")
        # a fast exit skips atexit hooks; a normal one runs them
        assert r.stdout == ("partial line" if mode == "fast" else "partial lineatexit ran\n")


@pytest.mark.parametrize("argv,fast", [
    (["groth16", "prove", "k.zkey", "w.wtns", "p.json", "q.json"], True),
    (["groth16", "verify", "vk.json", "q.json", "p.json"], True),
    (["demo"], False),  # an Engine: its close and multiprocessing's clean-up run at exit
    (["info"], False),
    (["keys", "list"], False),
    (["porep", "c2", "c1.json", "proof.bin"], False),  # an Engine job of the partitions
    (["porep", "verify", "c1.json", "proof.bin"], True),
    (["porep", "seal", "d", "c1.json", "--registered-proof", "5", "--prover-id", "0", "--sector-id", "1",
      "--ticket", "0", "--seed", "0"], True),
])
def test_only_commands_without_a_tear_down_exit_fast(argv, fast):
    from cuzk.cli import build_parser

    assert getattr(build_parser().parse_args(argv), "fast_exit", False) is fast
