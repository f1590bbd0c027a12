"""The kernels' range checks (``cuzk.kernels.checks``): a frozen array found reduced is not
scanned again, anything that could have changed is."""

import gc

import numpy as np
import pytest

from cuzk.curves import BLS12_381
from cuzk.errors import FieldValueError
from cuzk.field.jit import readonly
from cuzk.kernels import checks

R = BLS12_381.fr.modulus


def _count_scans(monkeypatch) -> list:
    calls = []
    real = checks._first_unreduced
    monkeypatch.setattr(checks, "_first_unreduced", lambda *a: calls.append(1) or real(*a))
    return calls


def test_a_frozen_array_is_scanned_once_per_modulus(monkeypatch):
    calls = _count_scans(monkeypatch)
    a = np.zeros((10, 4), np.uint64)
    a.flags.writeable = False
    for _ in range(3):
        assert checks.check_field_rows(a, "a", (4,), R) is a
    assert len(calls) == 1
    checks.check_field_rows(a, "a", (4,), R - 1)  # another modulus: another scan
    assert len(calls) == 2


def test_what_can_change_is_scanned_every_time(monkeypatch):
    calls = _count_scans(monkeypatch)
    a = np.zeros((10, 4), np.uint64)
    a.flags.writeable = False
    checks.check_field_rows(a, "a", (4,), R)
    a.flags.writeable = True  # its owner made writable again: the earlier scan no longer holds
    a[3] = checks.modulus_limbs(R, 4)
    with pytest.raises(FieldValueError, match=r"a\[3\]"):
        checks.check_field_rows(a, "a", (4,), R)
    v = readonly(np.zeros((4, 4), np.uint64))  # a read-only view of writable memory
    checks.check_field_rows(v, "v", (4,), R)
    checks.check_field_rows(v, "v", (4,), R)
    assert len(calls) == 4


def test_an_entry_goes_with_its_array():
    a = np.zeros((10, 4), np.uint64)
    a.flags.writeable = False
    checks.check_field_rows(a, "a", (4,), R)
    key = id(a)
    assert key in checks._REDUCED
    del a
    gc.collect()
    assert key not in checks._REDUCED
