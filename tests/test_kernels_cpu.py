"""The CPU backend's interface (docs/kernel-contracts.md) and its thread runner."""

import inspect
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuzk.errors import InputError
from cuzk.kernels import cpu_threads
from cuzk.curves import get as _get_curve
cpu = _get_curve("bls12_381").kernels  # BLS12-381's CPU kernels

CONTRACT = {
    "ntt": ["values", "inverse", "shift", "root_generator", "threads"],
    "h_pointwise": ["a", "b", "c", "z_inv"],
    "msm_g1": ["points", "scalars", "threads"],
    "msm_g2": ["points", "scalars", "threads"],
    "batch_mul_g1": ["base", "scalars", "threads"],
    "batch_mul_g2": ["base", "scalars", "threads"],
}


def test_public_names_and_signatures_follow_the_contract():
    for name, params in CONTRACT.items():
        sig = inspect.signature(getattr(cpu, name))
        assert list(sig.parameters) == params, name
    ntt = inspect.signature(cpu.ntt).parameters
    assert all(ntt[p].kind is inspect.Parameter.KEYWORD_ONLY for p in CONTRACT["ntt"][1:])
    # root_generator None: the curve's Fr generator (7 for BLS12-381, bellperson's)
    assert (ntt["inverse"].default, ntt["shift"].default, ntt["root_generator"].default) == (False, None, None)


def test_cuda_backend_has_the_same_signatures():
    """Same names, kinds and defaults for every contract parameter (CUDA may add device options)."""
    cuda_backend = pytest.importorskip("cuzk.kernels.cuda", reason="CUDA backend not importable here")
    cuda = cuda_backend.kernels_for(_get_curve("bls12_381").cuda)
    for name, params in CONTRACT.items():
        if name.startswith("batch_mul"):  # Groth16 setup's, CPU only
            continue
        theirs = inspect.signature(getattr(cuda, name)).parameters
        ours = inspect.signature(getattr(cpu, name)).parameters
        assert list(theirs)[: len(params)] == params, name
        for p in params:
            assert (theirs[p].kind, theirs[p].default) == (ours[p].kind, ours[p].default), (name, p)


def test_resolve_threads():
    assert cpu_threads.resolve_threads(None) == cpu_threads.available_cores() >= 1
    assert cpu_threads.resolve_threads(np.int64(3)) == 3
    for bad in (0, -1, 1.0, True, "2"):
        with pytest.raises(InputError, match="threads"):
            cpu_threads.resolve_threads(bad)


def test_run_phases_orders_phases_and_runs_every_task_once():
    log = []
    lock = threading.Lock()

    def note(tag):
        with lock:
            log.append(tag)

    phases = [[(note, (("a", i),)) for i in range(7)], [], [(note, (("b", i),)) for i in range(5)]]
    cpu_threads.run_phases(3, phases)
    assert sorted(log[:7]) == [("a", i) for i in range(7)]
    assert sorted(log[7:]) == [("b", i) for i in range(5)]
    assert not [t for t in threading.enumerate() if t.name.startswith("cuzk-kernel")]


def test_run_phases_uses_several_threads():
    seen = set()
    barrier = threading.Barrier(2, timeout=30)  # passes only if two tasks run at the same time

    def task():
        seen.add(threading.get_ident())
        barrier.wait()

    cpu_threads.run_phases(2, [[(task, ()), (task, ())]])
    assert len(seen) == 2


def test_run_phases_reraises_the_task_error_and_stops():
    ran = []

    def boom():
        raise ValueError("kernel failed")

    with pytest.raises(ValueError, match="kernel failed"):
        cpu_threads.run_phases(2, [[(boom, ()), (ran.append, (1,))], [(ran.append, (2,))]])
    assert 2 not in ran
    assert not [t for t in threading.enumerate() if t.name.startswith("cuzk-kernel")]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=4), st.integers(0, 30), st.integers(1, 3))
def test_staged_parts_stack_then_pad_with_zero_rows(sizes, extra, threads):
    # stack_rows (the CPU backend's stage(..., rows=m), and the host runtime's) equals numpy's
    # concatenate + zero padding, on any thread count, for empty parts and no padding too
    from cuzk.kernels import staged_rows

    rng = np.random.default_rng(sum(sizes) + extra)
    parts = [rng.integers(0, 1 << 63, size=(n, 4), dtype=np.uint64) for n in sizes]
    rows = sum(sizes) + extra
    want = np.concatenate(parts + [np.zeros((extra, 4), np.uint64)])
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(staged_rows, "_TASK_ROWS", 8)  # several tasks per part, and threads, at these sizes
        np.testing.assert_array_equal(staged_rows.stack_rows(parts, rows, threads), want)
    got, = cpu.stage(tuple(parts), rows=rows, threads=threads)
    np.testing.assert_array_equal(got, want)
    if extra:
        with pytest.raises(InputError, match="rows must be an int >= the parts'"):
            staged_rows.stack_rows(parts + [np.zeros((extra + 1, 4), np.uint64)], rows)
    with pytest.raises(InputError, match="part 1 has rows of"):
        staged_rows.stack_rows([parts[0], np.zeros((1, 3), np.uint64)], rows + 1)
