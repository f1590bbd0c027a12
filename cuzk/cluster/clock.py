"""Per-node clock offsets from round trips, so events recorded on other machines line up.

A node's clock reads ``driver_time + theta``. A call the driver sends at ``t0`` and gets back at
``t1`` (driver clock), which the node received at ``r0`` and answered at ``r1`` (node clock),
bounds ``theta``: the node cannot have received it before it was sent (``r0 - theta >= t0``) nor
answered after the reply arrived (``r1 - theta <= t1``), so ``theta`` lies in
``[r1 - t1, r0 - t0]``; the midpoint of that interval is the round-trip-midpoint estimate.
:class:`ClockOffset` intersects the intervals of every call from one node: the estimate is
the midpoint of the intersection, and any value inside it maps each call's events into that
call's own ``[t0, t1]`` on the driver, so a merged job's stages stay in order. An empty
intersection (a clock stepped or drifted) restarts from the newest interval (``resets``).

    >>> c = ClockOffset.first(t0=1_000, r0=5_400, r1=5_500, t1=1_600)   # node ~4.4 us ahead
    >>> (c.lo, c.hi, c.offset_ns)
    (3900, 4400, 4150)
    >>> c.add(t0=2_000, r0=6_250, r1=6_260, t1=2_300); (c.lo, c.hi, c.offset_ns, c.uncertainty_ns)
    (3960, 4250, 4105, 145)
    >>> c.to_driver(6_255)                                # a node timestamp on the driver's clock
    2150
"""

from __future__ import annotations

import attrs

__all__ = ["ClockOffset", "bounds"]


def bounds(t0: int, r0: int, r1: int, t1: int) -> tuple[int, int]:
    """The interval of offsets (node minus driver, ns) one round trip allows.

    >>> bounds(0, 110, 120, 40)
    (80, 110)
    """
    return r1 - t1, r0 - t0


@attrs.define
class ClockOffset:
    """The offset interval of one node's clock (``node - driver``, ns); see the module docstring."""

    lo: int
    hi: int
    samples: int = 1
    resets: int = 0  #: times the intersection became empty and restarted

    @classmethod
    def first(cls, t0: int, r0: int, r1: int, t1: int) -> "ClockOffset":
        lo, hi = bounds(t0, r0, r1, t1)
        return cls(lo, hi)

    def add(self, t0: int, r0: int, r1: int, t1: int) -> None:
        """Narrow the interval with one more round trip."""
        lo, hi = bounds(t0, r0, r1, t1)
        new_lo, new_hi = max(self.lo, lo), min(self.hi, hi)
        if new_lo > new_hi:  # clocks moved apart: this call's bounds are the freshest truth
            new_lo, new_hi = lo, hi
            self.resets += 1
        self.lo, self.hi = new_lo, new_hi
        self.samples += 1

    @property
    def offset_ns(self) -> int:
        return (self.lo + self.hi) // 2

    @property
    def uncertainty_ns(self) -> int:
        """Half the interval's width: how far the estimate can be from the true offset."""
        return (self.hi - self.lo) // 2

    def to_driver(self, node_ns: int) -> int:
        """A node timestamp on the driver's clock."""
        return node_ns - self.offset_ns

    def as_dict(self) -> dict:
        return {"offset_s": self.offset_ns / 1e9, "uncertainty_s": self.uncertainty_ns / 1e9,
                "samples": self.samples, "resets": self.resets}
