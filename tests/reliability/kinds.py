"""The faults a stage, a done-callback or a timeline listener can inject, and the odd objects.

Every exception made here is a fresh object, so the oracle can check a job failed with the
*original* exception (identity), never another job's. Exceptions raised by callbacks and
listeners carry ``cuzk_injected = True`` so the driver can tell them from a real Ctrl-C.

    >>> exc = make_error("value_error", "synth", ("e0.j1", None))
    >>> isinstance(exc, ValueError), is_injected(exc)   # a stage's fault: the oracle tracks it by identity
    (True, False)
    >>> is_injected(KeyboardInterrupt())
    False
"""

from __future__ import annotations

import time

__all__ = [
    "SYNTH_FAULTS", "PROVE_FAULTS", "ERROR_KINDS", "BASE_KINDS", "InjectedError", "InjectedBaseError",
    "FrozenError", "HostileReprError", "NoWitnessError", "Hostile", "make_error", "raise_injected",
    "is_injected", "callback_base_exception", "callback_error",
]


class InjectedError(Exception):
    """A custom ``Exception`` subclass."""


class InjectedBaseError(BaseException):
    """A custom ``BaseException`` subclass (not an ``Exception``)."""


class FrozenError(Exception):
    """Refuses a ``__notes__`` attribute, so ``add_note`` raises AttributeError. (Refusing every
    attribute breaks ``contextlib``, which sets ``__traceback__``: not a fault worth injecting.)"""

    def __setattr__(self, name, value):
        if name == "__notes__":
            raise AttributeError(f"{type(self).__name__} takes no notes")
        super().__setattr__(name, value)


class HostileReprError(Exception):
    """Its ``str``/``repr`` raise: a pipeline that formats it outside logging would crash."""

    def __str__(self):
        raise InjectedError("str() of a hostile exception")

    def __repr__(self):
        raise InjectedError("repr() of a hostile exception")


class NoWitnessError(Exception):
    """The fake prover's answer to a synthesizer that returned None."""


class Hostile:
    """A stage result that fails every generic operation (truth, equality, hashing, length,
    iteration, repr). A pipeline may only pass it on; the fake prover unwraps ``inner``."""

    __slots__ = ("inner",)
    __hash__ = None  # type: ignore[assignment]  (unhashable: dict/set use would raise TypeError)

    def __init__(self, inner=None):
        self.inner = inner

    def __bool__(self):
        raise InjectedError("bool() of a hostile stage result")

    def __eq__(self, other):
        raise InjectedError("== on a hostile stage result")

    def __len__(self):
        raise InjectedError("len() of a hostile stage result")

    def __iter__(self):
        raise InjectedError("iter() of a hostile stage result")

    def __repr__(self):
        raise InjectedError("repr() of a hostile stage result")


#: Kinds that make a stage raise (BaseException kinds included).
ERROR_KINDS = ("value_error", "custom_error", "notes_tuple", "frozen_error", "hostile_repr", "delayed_error",
               "keyboard_interrupt", "system_exit", "generator_exit", "custom_base")
#: The BaseException kinds among them.
BASE_KINDS = ("keyboard_interrupt", "system_exit", "generator_exit", "custom_base")

# (kind, weight): most units succeed so partitioned jobs and long runs see successes too. The
# weights are per unit; a job of k units fails with probability about 1 - ok_share**k.
SYNTH_FAULTS = (
    ("ok", 80), ("slow", 4), ("odd_witness", 3), ("none_witness", 1),
    ("value_error", 2), ("custom_error", 1), ("notes_tuple", 1), ("frozen_error", 1), ("hostile_repr", 1),
    ("delayed_error", 1), ("keyboard_interrupt", 1), ("system_exit", 1), ("generator_exit", 1), ("custom_base", 1),
)
PROVE_FAULTS = (
    ("ok", 80), ("slow", 4), ("return_none", 2), ("return_odd", 2), ("error_in_span", 1),
    ("value_error", 2), ("custom_error", 1), ("notes_tuple", 1), ("frozen_error", 1), ("hostile_repr", 1),
    ("delayed_error", 1), ("keyboard_interrupt", 1), ("system_exit", 1), ("generator_exit", 1), ("custom_base", 1),
)


def make_error(kind: str, where: str, token) -> BaseException:
    """A fresh exception of ``kind`` (one of ``ERROR_KINDS``; ``delayed_error`` makes a ValueError)."""
    msg = f"injected {kind} in {where} of {token}"
    if kind in ("value_error", "delayed_error"):
        return ValueError(msg)
    if kind == "custom_error":
        return InjectedError(msg)
    if kind == "notes_tuple":
        exc = ValueError(msg)
        exc.__notes__ = ("a note set by the raiser, as a tuple",)  # add_note() on it raises TypeError
        return exc
    if kind == "frozen_error":
        return FrozenError(msg)
    if kind == "hostile_repr":
        return HostileReprError(msg)
    if kind == "keyboard_interrupt":
        return KeyboardInterrupt(msg)
    if kind == "system_exit":
        return SystemExit(msg)
    if kind == "generator_exit":
        return GeneratorExit(msg)
    if kind == "custom_base":
        return InjectedBaseError(msg)
    raise AssertionError(f"not an error kind: {kind}")


def raise_injected(kind: str, where: str, token, delay: float, record) -> None:
    """Raise a fresh ``kind`` exception after calling ``record(exc)`` (sleeping ``delay`` first
    for ``delayed_error``)."""
    if kind == "delayed_error":
        time.sleep(delay)
    exc = make_error(kind, where, token)
    record(exc)
    raise exc


def _mark(exc: BaseException) -> BaseException:
    exc.cuzk_injected = True
    return exc


def is_injected(exc: BaseException) -> bool:
    """Whether ``exc`` was raised by an injected callback or listener fault."""
    return getattr(exc, "cuzk_injected", False) is True


#: BaseException types a done-callback or listener raises (cycled through by the caller's rng).
_CALLBACK_BASE = (SystemExit, KeyboardInterrupt, InjectedBaseError, GeneratorExit)


def callback_base_exception(index: int, where: str) -> BaseException:
    """A marked BaseException (SystemExit, KeyboardInterrupt, custom, GeneratorExit by ``index``)."""
    return _mark(_CALLBACK_BASE[index % len(_CALLBACK_BASE)](f"injected in {where}"))


def callback_error(where: str) -> BaseException:
    """A marked ordinary exception from a callback or listener."""
    return _mark(InjectedError(f"injected in {where}"))

