"""Filecoin proof kinds as Engine circuits: Curio's circuit ids, the registered-proof numbers, the
parameter files' v28 names, and each kind's payload turned into circuit inputs.

Circuit ids follow Curio's (``porep-32g``, ``wpost-32g``, ``winning-32g``, ``snap-32g``) with the
same pattern for every sector size: ``2k``, ``8m``, ``512m``, ``32g``, ``64g``. A circuit's key is
``<param_cache>/v28-<prefix>-<sha256(identifier)>.params`` (and ``.vk``), named as
storage-proofs-core's parameter cache names them: the prefix from the tree shape, the identifier
from the public parameters (sector size, challenge and sector counts; for PoRep the graph and
layer challenges; for SnapDeals the sector's node count). The names are derived here, never
pasted; tests/test_serve_filecoin.py compares them with Filecoin's published ones.

    >>> c = filecoin_circuit("wpost-32g"); c.sector_size, c.params_name[:48]
    (34359738368, 'v28-proof-of-spacetime-fallback-merkletree-posei')
    >>> c.params_name.endswith("0377ded656c6f524f1618760bffe4e0a1c51d5a70c4509eedae8a27555733edc.params")
    True
    >>> post_proof(10).name, post_proof(10).api_version
    ('StackedDrgWindow2KiBV1_2', '1.2')
    >>> update_proof(3).name, filecoin_circuit("snap-32g").params_name[:57]
    ('StackedDrg32GiBV1', 'v28-empty-sector-update-merkletree-poseidon_hasher-8-8-0-')
"""

from __future__ import annotations

import hashlib

import attrs

from cuzk.circuits.filecoin.shapes import (
    GIB, KIB, MIB, NODE_SIZE, WINDOW_POST_CHALLENGE_COUNT, WINDOW_POST_SECTOR_COUNT, WINNING_POST_CHALLENGE_COUNT,
    shape_for_sector,
)
from cuzk.errors import InputError

__all__ = ["SIZES", "FilecoinCircuit", "filecoin_circuit", "circuit_id", "PostProof", "post_proof",
           "REGISTERED_POST_PROOFS", "UpdateProof", "update_proof", "REGISTERED_UPDATE_PROOFS", "KINDS",
           "all_circuit_ids"]

#: sector size -> the suffix of its circuit ids (Curio writes "32g" for 32 GiB)
SIZES = {2 * KIB: "2k", 8 * MIB: "8m", 512 * MIB: "512m", 32 * GIB: "32g", 64 * GIB: "64g"}
_SIZE_NAMES = {2 * KIB: "2KiB", 8 * MIB: "8MiB", 512 * MIB: "512MiB", 32 * GIB: "32GiB", 64 * GIB: "64GiB"}
#: circuit id prefix -> proof kind name of the proto's ProofKind
KINDS = {"porep": "POREP_SEAL_COMMIT", "snap": "SNAP_DEALS_UPDATE", "wpost": "WINDOW_POST_PARTITION",
         "winning": "WINNING_POST"}
_PARAM_VERSION = 28  # storage-proofs-core's parameter_cache VERSION: the "v28-" of every file name
_BASE_DEGREE, _EXP_DEGREE = 6, 8  # the stacked DRG's degrees, hashed into the PoRep identifier


@attrs.frozen
class PostProof:
    """A RegisteredPoStProof number as Curio sends it (filecoin-ffi's numbering)."""

    id: int
    name: str  #: filecoin-proofs-api's variant name
    kind: str  #: "winning" or "wpost"
    sector_size: int
    api_version: str  #: "1.0" or "1.2": how challenge indices are numbered


def _post_table() -> dict:
    # filecoin-ffi's order: Winning V1 (0-4), Window V1 (5-9), Window V1_1 (10-14). ffi's V1_1 is
    # filecoin-proofs-api's StackedDrgWindow*V1_2 (API 1.2.0, the grindability fix); the rest are 1.0.0.
    groups = (("winning", "Winning", "V1", "1.0"), ("wpost", "Window", "V1", "1.0"), ("wpost", "Window", "V1_2", "1.2"))
    table = {}
    for g, (kind, word, suffix, api) in enumerate(groups):
        for s, size in enumerate(SIZES):
            table[5 * g + s] = PostProof(5 * g + s, f"StackedDrg{word}{_SIZE_NAMES[size]}{suffix}", kind, size, api)
    return table


REGISTERED_POST_PROOFS = _post_table()


def post_proof(registered_proof: int) -> PostProof:
    """The RegisteredPoStProof numbered ``registered_proof``.

    Raises:
        InputError: a number outside 0..14.
    """
    if registered_proof not in REGISTERED_POST_PROOFS:
        raise InputError(f"unknown registered PoSt proof {registered_proof} (known: 0..{len(REGISTERED_POST_PROOFS) - 1})")
    return REGISTERED_POST_PROOFS[registered_proof]


@attrs.frozen
class UpdateProof:
    """A RegisteredUpdateProof number as Curio sends it (filecoin-ffi's numbering: 0-4 by size)."""

    id: int
    name: str  #: filecoin-proofs-api's variant name
    sector_size: int


REGISTERED_UPDATE_PROOFS = {i: UpdateProof(i, f"StackedDrg{_SIZE_NAMES[size]}V1", size)
                            for i, size in enumerate(SIZES)}


def update_proof(registered_proof: int) -> UpdateProof:
    """The RegisteredUpdateProof numbered ``registered_proof``.

    Raises:
        InputError: a number outside 0..4.
    """
    if registered_proof not in REGISTERED_UPDATE_PROOFS:
        raise InputError(f"unknown registered update proof {registered_proof} (known: 0..{len(SIZES) - 1})")
    return REGISTERED_UPDATE_PROOFS[registered_proof]


def circuit_id(prefix: str, sector_size: int) -> str:
    """``"wpost"``, 32 GiB -> ``"wpost-32g"``."""
    return f"{prefix}-{SIZES[sector_size]}"


def _tree_name(arities) -> str:
    return "merkletree-poseidon_hasher-" + "-".join(str(a) for a in arities)


def _v28(prefix: str, identifier: str) -> str:
    return f"v{_PARAM_VERSION}-{prefix}-{hashlib.sha256(identifier.encode()).hexdigest()}"


@attrs.frozen
class FilecoinCircuit:
    """One Filecoin circuit the daemon can register: a kind at one sector size."""

    kind: str  #: "porep", "snap", "wpost" or "winning"
    sector_size: int

    @property
    def id(self) -> str:
        return circuit_id(self.kind, self.sector_size)

    @property
    def post_counts(self) -> tuple[int, int]:
        """(challenge_count, sector_count) per partition, as rust-fil-proofs sets up the circuit."""
        if self.kind == "wpost":
            return WINDOW_POST_CHALLENGE_COUNT, WINDOW_POST_SECTOR_COUNT[self.sector_size]
        return 1, WINNING_POST_CHALLENGE_COUNT  # WinningPoSt: 66 one-challenge "sectors"

    def seal_proof(self):
        """The PoRep partition's registered proof (every id of one size has the same circuit)."""
        from cuzk.circuits.filecoin.porep.registered import REGISTERED_SEAL_PROOFS

        return next(p for p in REGISTERED_SEAL_PROOFS.values() if p.sector_size == self.sector_size)

    @property
    def base_name(self) -> str:
        """The parameter files' name without the extension (``v28-...-<sha256>``)."""
        if self.kind == "snap":
            # storage-proofs-update's EmptySectorUpdateCompound: the tree R it was made for, the node count
            return _v28(f"empty-sector-update-{_tree_name(self.update_params.shape.arities)}",
                        f"empty_sector_update::PublicParams{{ sector_nodes: {self.sector_size // NODE_SIZE} }}")
        tree = _tree_name(shape_for_sector(self.sector_size).arities)
        if self.kind in ("wpost", "winning"):
            challenges, sectors = self.post_counts
            return _v28(f"proof-of-spacetime-fallback-{tree}", f"FallbackPoSt::PublicParams{{sector_size: "
                        f"{self.sector_size}, challenge_count: {challenges}, sector_count: {sectors}}}")
        if self.kind == "porep":
            p = self.seal_proof()
            graph = (f"stacked_graph::StackedGraph{{expansion_degree: {_EXP_DEGREE} base_graph: drgraph::BucketGraph"
                     f"{{size: {p.nodes}; degree: {_BASE_DEGREE}; hasher: poseidon_hasher}} }}")
            return _v28(f"stacked-proof-of-replication-{tree}-sha256_hasher",
                        f"layered_drgporep::PublicParams{{ graph: {graph}, challenges: LayerChallenges {{ layers: "
                        f"{p.layers}, max_count: {p.challenges_per_partition} }}, tree: {tree} }}")
        raise InputError(f"{self.kind!r} is not a Filecoin proof kind ({sorted(KINDS)})")

    @property
    def params_name(self) -> str:
        return self.base_name + ".params"

    @property
    def vk_name(self) -> str:
        return self.base_name + ".vk"

    def circuit(self):
        """The Circuit object the Engine registers for this id."""
        if self.kind in ("wpost", "winning"):
            from cuzk.circuits.filecoin.post import FallbackPoSt

            challenges, sectors = self.post_counts
            return FallbackPoSt(self.sector_size, challenges, sectors)
        if self.kind == "porep":
            from cuzk.circuits.filecoin.porep.c2 import circuit_for

            return circuit_for(self.seal_proof())
        from cuzk.circuits.filecoin.update import circuit_for

        return circuit_for(self.update_params)

    @property
    def update_params(self):
        """The SnapDeals update's parameters (partitions, challenges, tree R) at this size."""
        from cuzk.circuits.filecoin.update import update_params

        return update_params(self.sector_size)


def filecoin_circuit(text) -> FilecoinCircuit | None:
    """The Filecoin circuit named ``text`` (``"winning-2k"``), or None when it is not one."""
    if not isinstance(text, str):
        return None
    prefix, _, size = text.partition("-")
    by_suffix = {v: k for k, v in SIZES.items()}
    if prefix not in KINDS or size not in by_suffix:
        return None
    return FilecoinCircuit(prefix, by_suffix[size])


def all_circuit_ids() -> list[str]:
    return [circuit_id(k, s) for k in KINDS for s in SIZES]
