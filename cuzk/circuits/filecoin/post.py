"""Fallback PoSt (WindowPoSt / WinningPoSt), as rust-fil-proofs' ``FallbackPoStCircuit``.

Per sector: comm_r is public; comm_c and comm_r_last are private; the circuit enforces
``comm_r = Poseidon_2(comm_c, comm_r_last)`` (neptune, MerkleTree tag), then per challenge a
:func:`~cuzk.circuits.filecoin.por.por_challenge` of the challenged leaf against comm_r_last
with its packed path as a public input. Public inputs per sector: comm_r, then one packed path
per challenge; a partition with fewer sectors than ``sector_count`` repeats its last sector.
Counts: ``sector_count * (313 + challenge_count * PoR)``, with PoR = 530 per arity-8 level,
314 per arity-2 level, 2 more for the packed path and the root equality.

    >>> from cuzk.synth import Synthesizer
    >>> r = Synthesizer(FallbackPoSt(2048, challenge_count=5, sector_count=3)).r1cs
    >>> r.n_constraints, r.n_public + 1
    (16869, 19)
"""

from __future__ import annotations

import attrs

from cuzk.circuit import Circuit
from cuzk.circuits.filecoin.challenges import (
    challenge_index, check_api_version, check_randomness, check_u64, leaf_challenge,
)
from cuzk.circuits.filecoin.por import por_challenge
from cuzk.circuits.filecoin.porep.circuit_num import enforce_equal, inputize
from cuzk.circuits.filecoin.poseidon import _field_ints, poseidon_circuit_hash, poseidon_hash
from cuzk.circuits.filecoin.shapes import (
    WINDOW_POST_CHALLENGE_COUNT, WINDOW_POST_SECTOR_COUNT, WINNING_POST_CHALLENGE_COUNT, shape_for_sector,
)
from cuzk.errors import InputError

__all__ = ["FallbackPoSt", "PostSector", "window_post", "winning_post", "winning_post_sectors"]


@attrs.frozen(eq=False)
class PostSector:
    """A sector as its prover holds it: id, comm_c, and its replica tree (tree_r_last).

    ``tree`` is a :class:`~cuzk.circuits.filecoin.tree.FilecoinTree` or anything with ``shape``,
    ``root``, ``leaf(c)`` and ``path(c)`` (e.g. the sparse tree of a 32 GiB sector).
    """

    sector_id: int = attrs.field(converter=lambda v: check_u64(v, "sector_id"))
    comm_c: int = attrs.field(converter=lambda v: _field_ints([v], "comm_c")[0])
    tree: object = None

    @property
    def comm_r_last(self) -> int:
        return self.tree.root

    @property
    def comm_r(self) -> int:
        """Poseidon_2(comm_c, comm_r_last), the sector's public replica commitment."""
        return poseidon_hash([self.comm_c, self.comm_r_last])


def _count(x, what: str) -> int:
    if not isinstance(x, int) or isinstance(x, bool) or x < 1:
        raise InputError(f"{what} must be a positive int, got {x!r}")
    return x


class FallbackPoSt(Circuit):
    """``sector_count`` sectors × ``challenge_count`` challenges of ``sector_size``-byte sectors.

    Args:
        sector_size: bytes per sector; picks Filecoin's tree shape unless ``shape`` is given.
        challenge_count, sector_count: per partition (one Groth16 proof).
        shape: (base, sub, top) arities overriding the sector size's shape.
        api_version: "1.0", "1.1" or "1.2" (how challenge indices are numbered).

    Raises:
        cuzk.errors.InputError: an unknown sector size (without ``shape``), leaves that do not
            fill ``shape``, non-positive counts, an unknown API version.
    """

    def __init__(self, sector_size, challenge_count, sector_count, shape=None, api_version: str = "1.2"):
        self.shape = shape_for_sector(sector_size, shape)
        self.sector_size = sector_size
        self.challenge_count = _count(challenge_count, "challenge_count")
        self.sector_count = _count(sector_count, "sector_count")
        self.api_version = check_api_version(api_version)

    def __repr__(self):
        return (
            f"FallbackPoSt(sector_size={self.sector_size}, challenge_count={self.challenge_count}, "
            f"sector_count={self.sector_count}, shape={self.shape.arities}, api_version={self.api_version!r})"
        )

    def input_shapes(self) -> dict:
        s, c = self.sector_count, self.challenge_count
        return {
            "comm_r": (s,), "comm_c": (s,), "comm_r_last": (s,),
            "challenges": (s, c), "leaves": (s, c), "siblings": (s, c, self.shape.siblings),
        }

    #: trace one sector and stamp it (cs.repeat) instead of tracing every sector and challenge:
    #: the same rows, names and witness (tests/test_stamp_filecoin.py), a 32 GiB partition in
    #: a minute instead of an hour
    stamp = True

    def _sector(self, cs, comm_r, comm_c, comm_r_last, challenges, leaves, siblings):
        levels = self.shape.levels
        r_last = cs.private(comm_r_last, name="comm_r_last")
        c = cs.private(comm_c, name="comm_c")
        r = cs.private(comm_r, name="comm_r")
        inputize(cs, r, name="comm_r input")  # bellperson's orientation: input * 1 = comm_r
        h = poseidon_circuit_hash(cs, [c, r_last], name="H(comm_c, comm_r_last)")
        enforce_equal(cs, r, h, name="comm_r = H(comm_c, comm_r_last)")
        items = [(levels, r_last, challenges[j], leaves[j], siblings[j]) for j in range(self.challenge_count)]
        self._each(cs, por_challenge, items, "challenge {i}")

    def _each(self, cs, fn, items, name):
        if self.stamp:
            cs.repeat(fn, items, name=name)
            return
        for j, a in enumerate(items):
            with cs.namespace(name.replace("{i}", str(j))):
                fn(cs, *a)

    def define(self, cs, comm_r, comm_c, comm_r_last, challenges, leaves, siblings):
        items = [(comm_r[i], comm_c[i], comm_r_last[i], challenges[i], leaves[i], siblings[i])
                 for i in range(self.sector_count)]
        self._each(cs, self._sector, items, "sector {i}")

    # -- native side -------------------------------------------------------------------------
    def _partition(self, sectors, partition: int) -> list:
        sectors = list(sectors)
        if not sectors:
            raise InputError("a PoSt needs at least one sector")
        p = check_u64(partition, "partition")
        chunk = sectors[p * self.sector_count:(p + 1) * self.sector_count]
        if not chunk:
            raise InputError(f"partition {p} is empty: {len(sectors)} sectors make {self.partitions(len(sectors))} partitions")
        return chunk

    def partitions(self, n_sectors: int) -> int:
        """Partitions (proofs) needed for ``n_sectors`` sectors."""
        return -(-_count(n_sectors, "n_sectors") // self.sector_count)

    def challenges(self, randomness, sector_id, sector_index: int) -> list[int]:
        """The challenged leaves of one sector (``sector_index`` counted across partitions)."""
        return [
            leaf_challenge(randomness, sector_id, challenge_index(self.api_version, sector_index, self.challenge_count, n),
                           self.shape.leaves)
            for n in range(self.challenge_count)
        ]

    def inputs(self, randomness, sectors, partition: int = 0) -> dict:
        """Circuit inputs for ``partition`` of ``sectors`` (:class:`PostSector` list): derive the
        challenges, read leaves and paths from each sector's tree.

        Raises:
            cuzk.errors.InputError: a sector whose tree is not this circuit's shape, bad
                randomness, an empty partition.
        """
        randomness = check_randomness(randomness)
        chunk = self._partition(sectors, partition)
        out = {k: [] for k in self.input_shapes()}
        for i, s in enumerate(chunk):
            if s.tree is None or s.tree.shape != self.shape:
                raise InputError(f"sector {s.sector_id}: its tree's shape is not this PoSt's {self.shape}")
            chal = self.challenges(randomness, s.sector_id, partition * self.sector_count + i)
            out["comm_r"].append(s.comm_r)
            out["comm_c"].append(s.comm_c)
            out["comm_r_last"].append(s.comm_r_last)
            out["challenges"].append(chal)
            out["leaves"].append([s.tree.leaf(c) for c in chal])
            out["siblings"].append([[x for level in s.tree.path(c) for x in level] for c in chal])
        for v in out.values():  # a short partition repeats its last sector
            v.extend([v[-1]] * (self.sector_count - len(chunk)))
        return out

    def public_inputs(self, randomness, sectors, partition: int = 0) -> list[int]:
        """The verifier's inputs in rust-fil-proofs' order, from ``(sector_id, comm_r)`` pairs
        (or :class:`PostSector` objects); no sector data needed."""
        randomness = check_randomness(randomness)
        chunk = self._partition(sectors, partition)
        per = []
        for i, s in enumerate(chunk):
            sid, comm_r = (s.sector_id, s.comm_r) if isinstance(s, PostSector) else s
            (comm_r,) = _field_ints([comm_r], "comm_r")
            per.append([comm_r, *self.challenges(randomness, check_u64(sid, "sector_id"), partition * self.sector_count + i)])
        per += [per[-1]] * (self.sector_count - len(chunk))
        return [x for p in per for x in p]


def window_post(sector_size, *, sector_count=None, shape=None, api_version: str = "1.2") -> FallbackPoSt:
    """A WindowPoSt partition: 10 challenges per sector, Filecoin's sectors per partition.

    >>> window_post(32 << 30).sector_count
    2349
    """
    if sector_count is None:
        if sector_size not in WINDOW_POST_SECTOR_COUNT:
            raise InputError(f"no WindowPoSt partition size for sector size {sector_size!r}; pass sector_count=")
        sector_count = WINDOW_POST_SECTOR_COUNT[sector_size]
    return FallbackPoSt(sector_size, WINDOW_POST_CHALLENGE_COUNT, sector_count, shape=shape, api_version=api_version)


def winning_post(sector_size, *, shape=None, api_version: str = "1.0") -> FallbackPoSt:
    """WinningPoSt: one sector, 66 challenges, laid out as rust-fil-proofs does (66 sectors × 1
    challenge; prove it with :func:`winning_post_sectors`).

    API 1.0 by default: every registered WinningPoSt proof is (only WindowPoSt has a V1_2), and
    under 1.0 slot ``j`` draws challenge ``j``, the 66 challenges rust-fil-proofs' vanilla prover
    draws from the one sector (tests/test_post_oracle.py).

    >>> c = winning_post(2048); (c.sector_count, c.challenge_count)
    (66, 1)
    """
    return FallbackPoSt(sector_size, 1, WINNING_POST_CHALLENGE_COUNT, shape=shape, api_version=api_version)


def winning_post_sectors(sector) -> list:
    """The WinningPoSt sector list: the one challenged sector, repeated for every layout slot."""
    return [sector] * WINNING_POST_CHALLENGE_COUNT
