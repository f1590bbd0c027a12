"""PoRep commit phase 1 (C1): a sealed sector's vanilla proofs, in the form C2 provers are handed.

:class:`SealCommitPhase1Output` is filecoin-proofs-api's ``SealCommitPhase1Output``, the JSON
filecoin-ffi returns from ``seal_commit_phase1`` and Curio sends to a C2 prover. Its serde JSON
(:data:`C1_OUTPUT`), field by field, in this order::

    {"registered_proof": "StackedDrg2KiBV1_1",
     "vanilla_proofs": {"StackedDrg2KiBV1": [[P, ...challenges], ...partitions]},
     "comm_r": D, "comm_d": D, "replica_id": D, "seed": D, "ticket": D}

``registered_proof`` is a unit variant of ``RegisteredSealProof`` (its name, ids 0-19 in the
table of :mod:`~cuzk.circuits.filecoin.porep.registered`). ``vanilla_proofs`` is the
``VanillaSealProof`` enum, whose five variants are named by sector size alone with ``V1``
(no ``_1``, no feature suffix: every API version's proofs share one tree type);
``P`` is a :data:`~cuzk.circuits.filecoin.porep.vanilla.VANILLA_PROOF` and ``D`` 32 numbers
(``replica_id`` is a Poseidon domain, the others ``[u8; 32]``).

filecoin-proofs' own ``SealCommitPhase1Output<Tree>`` (:data:`C1_OUTPUT_V1`) has no
``registered_proof`` and a bare ``vanilla_proofs: Vec<Vec<Proof>>``; Curio writes that one in
bincode (:meth:`SealCommitPhase1Output.to_bincode`).

    >>> out = SealCommitPhase1Output(registered_proof=5, vanilla_proofs=[[]], comm_r=bytes(32),
    ...                              comm_d=bytes(32), replica_id=bytes(32), seed=bytes(32), ticket=bytes(32))
    >>> text = out.to_json(); text[:83]
    '{"registered_proof":"StackedDrg2KiBV1_1","vanilla_proofs":{"StackedDrg2KiBV1":[[]]}'
    >>> SealCommitPhase1Output.from_json(text) == out
    True
"""

from __future__ import annotations

import base64
import binascii
import json
import operator

import attrs

from cuzk.bounded_json import read_json_file
from cuzk.circuits.filecoin.porep.c1_check import check_output
from cuzk.circuits.filecoin.porep.challenges import partition_challenges
from cuzk.circuits.filecoin.porep.registered import REGISTERED_SEAL_PROOFS, registered_seal_proof, vanilla_variant
from cuzk.circuits.filecoin.porep.vanilla import (
    TOTAL_PARENTS, VANILLA_PROOF, Column, ColumnProof, EncodingProof, LabelingProof, ReplicaColumnProof, VanillaProof,
)
from cuzk.circuits.filecoin.vanilla import bincode, serde_json
from cuzk.circuits.filecoin.vanilla.merkle import DOMAIN, MerkleProof, PathElement, domain_int, int_domain
from cuzk.circuits.filecoin.vanilla.schema import Enum, Field, Mapped, Seq, Struct, Variant
from cuzk.errors import InputError, VanillaFormatError

__all__ = [
    "SealCommitPhase1Output", "commit_phase1", "check", "partition_challenges", "circuit_inputs", "C1_OUTPUT", "C1_OUTPUT_V1", "REGISTERED_SEAL_PROOF", "VANILLA_SEAL_PROOF",
    "vanilla_variant", "MAX_C1_JSON_BYTES", "MAX_PARTITIONS", "MAX_CHALLENGES", "curio_envelope", "curio_envelope_doc",
    "check_envelope_size",
]

#: Most partitions a document may hold: above the 126 of a non-interactive 32/64 GiB proof.
MAX_PARTITIONS = 256
#: Most challenges per partition a document may hold (Filecoin's proofs have at most 18).
MAX_CHALLENGES = 1 << 12
#: Largest C1 JSON read by default. A 32 GiB interactive C1 is ~40 MB (176 challenges of ~1,800
#: domains at ~115 characters each); a non-interactive one (2,253 challenges) ~0.5 GB.
MAX_C1_JSON_BYTES = 1 << 30


_IDS = sorted(REGISTERED_SEAL_PROOFS)
_BY_NAME = {REGISTERED_SEAL_PROOFS[i].name: i for i in _IDS}
#: ``RegisteredSealProof``: 20 unit variants in id order (bincode writes the id)
REGISTERED_SEAL_PROOF = Enum("RegisteredSealProof", tuple((REGISTERED_SEAL_PROOFS[i].name, None) for i in _IDS))
_PROOFS = Seq(Seq(VANILLA_PROOF, MAX_CHALLENGES), MAX_PARTITIONS)
_VARIANTS = tuple(dict.fromkeys(vanilla_variant(i) for i in _IDS))
#: ``VanillaSealProof``: one variant per sector size, each ``Vec<Vec<Proof>>``
VANILLA_SEAL_PROOF = Enum("VanillaSealProof", tuple((v, _PROOFS) for v in _VARIANTS))


def _bytes32(what):
    def check(inst, attribute, value):
        if not isinstance(value, bytes) or len(value) != 32:
            raise InputError(f"{what or attribute.name} must be 32 bytes, got {value!r:.50}")
    return check


def _proofs(v) -> tuple:
    out = tuple(tuple(part) for part in v)
    if not all(isinstance(p, VanillaProof) for part in out for p in part):
        raise InputError("vanilla_proofs holds partitions of VanillaProof")
    return out


def _registered(v) -> int:
    return registered_seal_proof(v).id


@attrs.frozen
class SealCommitPhase1Output:
    """A sector's C1 output: per partition, per challenge, one :class:`~cuzk.circuits.filecoin.porep.vanilla.VanillaProof`."""

    registered_proof: int = attrs.field(converter=_registered)  #: the RegisteredSealProof id (0-19)
    vanilla_proofs: tuple = attrs.field(converter=_proofs)  #: partitions of challenges' proofs
    comm_r: bytes = attrs.field(validator=_bytes32(None))
    comm_d: bytes = attrs.field(validator=_bytes32(None))
    replica_id: bytes = attrs.field(validator=_bytes32(None))
    seed: bytes = attrs.field(validator=_bytes32(None))  #: the interactive challenge randomness
    ticket: bytes = attrs.field(validator=_bytes32(None))

    @property
    def seal_proof(self):
        """The registered proof's parameters (:class:`~cuzk.circuits.filecoin.porep.registered.SealProof`)."""
        return registered_seal_proof(self.registered_proof)

    def to_json(self) -> str:
        """filecoin-proofs-api's serde JSON (compact, as ``serde_json`` writes it)."""
        return serde_json.to_json(C1_OUTPUT, self)

    @classmethod
    def from_json(cls, text, where: str = "C1 output", *, max_bytes: int = MAX_C1_JSON_BYTES):
        """Read filecoin-proofs-api's serde JSON (str or bytes).

        Raises:
            VanillaFormatError: not JSON, over ``max_bytes``, or a field not of the layout (named
                by its JSON path), or a ``vanilla_proofs`` variant of another sector size.
        """
        return serde_json.from_json(C1_OUTPUT, text, where, max_bytes=max_bytes)

    @classmethod
    def read(cls, path, *, max_bytes: int = MAX_C1_JSON_BYTES):
        """Read a C1 JSON file, refused before reading when over ``max_bytes``.

        Raises:
            VanillaFormatError: as :meth:`from_json`; OSError: the file cannot be read.
        """
        doc = read_json_file(path, VanillaFormatError, max_bytes=max_bytes,
                             why="the default bound of a C1 output (MAX_C1_JSON_BYTES)")
        return serde_json.from_value(C1_OUTPUT, doc, str(path))

    def check(self, **kwargs) -> None:
        """:func:`check` this output (every path root, label and encoding recomputed)."""
        check(self, **kwargs)

    def to_bincode(self) -> bytes:
        """bincode of filecoin-proofs' ``SealCommitPhase1Output<Tree>`` (no registered_proof), as Curio writes it."""
        return bincode.to_bincode(C1_OUTPUT_V1, _v1_dict(self))

    @classmethod
    def from_bincode(cls, data, registered_proof, where: str = "C1 output (bincode)"):
        """Read :meth:`to_bincode`'s bytes; the registered proof is not in them, so it is given.

        Raises:
            VanillaFormatError: truncated or malformed bytes (the path and offset named).
            InputError: an unknown registered proof id.
        """
        rid = registered_seal_proof(registered_proof).id
        d = bincode.from_bincode(C1_OUTPUT_V1, data, where)
        return cls(registered_proof=rid, **d)


def _v1_dict(out: SealCommitPhase1Output) -> dict:
    return {"vanilla_proofs": out.vanilla_proofs, "comm_r": out.comm_r, "comm_d": out.comm_d,
            "replica_id": out.replica_id, "seed": out.seed, "ticket": out.ticket}


def _load(d: dict) -> SealCommitPhase1Output:
    rid = _BY_NAME[d["registered_proof"].name]
    variant = d["vanilla_proofs"]
    if variant.name != vanilla_variant(rid):
        raise InputError(f"vanilla_proofs are {variant.name} proofs, registered_proof {d['registered_proof'].name} "
                         f"takes {vanilla_variant(rid)}")
    return SealCommitPhase1Output(registered_proof=rid, vanilla_proofs=variant.value, comm_r=d["comm_r"],
                                  comm_d=d["comm_d"], replica_id=d["replica_id"], seed=d["seed"], ticket=d["ticket"])


def _dump(out: SealCommitPhase1Output) -> dict:
    rid = out.registered_proof
    return {"registered_proof": Variant(REGISTERED_SEAL_PROOFS[rid].name),
            "vanilla_proofs": Variant(vanilla_variant(rid), [list(p) for p in out.vanilla_proofs]),
            **{k: v for k, v in _v1_dict(out).items() if k != "vanilla_proofs"}}


_COMMON = (Field("comm_r", DOMAIN), Field("comm_d", DOMAIN), Field("replica_id", DOMAIN), Field("seed", DOMAIN),
           Field("ticket", DOMAIN))
#: filecoin-proofs-api's ``SealCommitPhase1Output`` (the JSON filecoin-ffi and Curio hand over)
C1_OUTPUT = Mapped(Struct("SealCommitPhase1Output", (Field("registered_proof", REGISTERED_SEAL_PROOF),
                                                     Field("vanilla_proofs", VANILLA_SEAL_PROOF)) + _COMMON),
                   load=_load, dump=_dump, name="SealCommitPhase1Output")
#: filecoin-proofs' ``SealCommitPhase1Output<Tree>`` (values as dicts: vanilla_proofs and the five domains)
C1_OUTPUT_V1 = Struct("SealCommitPhase1Output<Tree>", (Field("vanilla_proofs", _PROOFS),) + _COMMON)


# ---- building ----

def _levels(indices_siblings, shape) -> dict:
    """A tree path's levels split as the proof variant of ``shape`` splits them."""
    levels = [PathElement(tuple(int_domain(x) for x in sib), pos) for pos, sib in indices_siblings]
    base, rest = levels[:shape.base_height], levels[shape.base_height:]
    out = {"base": base}
    if shape.sub:
        out["sub"] = rest[:1]
    if shape.top:
        out["top"] = rest[1:2]
    return out


def _positions(node: int, levels) -> list:
    out = []
    for a in levels:
        out.append(node % a)
        node //= a
    return out


def _poseidon_proof(tree, node: int, root: bytes) -> MerkleProof:
    pairs = zip(_positions(node, tree.shape.levels), tree.path(node))
    return MerkleProof(root=root, leaf=int_domain(tree.leaf(node)), **_levels(pairs, tree.shape))


def _column_proof(sealed, node: int) -> ColumnProof:
    rows = [bytes(layer[node]) for layer in sealed.layers]
    return ColumnProof(Column(node, rows), _poseidon_proof(sealed.tree_c, node, sealed.comm_c))


def _label_parents(sealed, node: int, layer: int) -> list:
    """The 37 parent labels hashed into ``node``'s label in ``layer`` (1-based)."""
    row = sealed.parents[node]
    drg, exp = [int(p) for p in row[:6]], [int(p) for p in row[6:]]
    labels = [bytes(sealed.layers[layer - 1][p]) for p in drg]
    if layer > 1:
        labels += [bytes(sealed.layers[layer - 2][p]) for p in exp]
    return [labels[i % len(labels)] for i in range(TOTAL_PARENTS)]


def _vanilla_proof(sealed, node: int) -> VanillaProof:
    d_path = sealed.tree_d.path(node)
    comm_d_proof = MerkleProof(root=sealed.comm_d, leaf=sealed.tree_d.leaf(node),
                               base=[PathElement((sib,), (node >> i) & 1) for i, sib in enumerate(d_path)])
    row = [int(p) for p in sealed.parents[node]]
    columns = ReplicaColumnProof(c_x=_column_proof(sealed, node), drg_parents=[_column_proof(sealed, p) for p in row[:6]],
                                 exp_parents=[_column_proof(sealed, p) for p in row[6:]])
    layers = len(sealed.layers)
    labeling = [LabelingProof(_label_parents(sealed, node, layer), layer, node) for layer in range(1, layers + 1)]
    last = labeling[-1]
    return VanillaProof(comm_d_proofs=comm_d_proof,
                        comm_r_last_proof=_poseidon_proof(sealed.tree_r, node, sealed.comm_r_last),
                        replica_column_proofs=columns, labeling_proofs=labeling,
                        encoding_proof=EncodingProof(last.parents, last.layer_index, last.node))


def commit_phase1(sealed, seed, *, partitions=None) -> SealCommitPhase1Output:
    """Commit phase 1: the vanilla proofs of every challenge of every partition of ``sealed``.

    Args:
        sealed: a :class:`~cuzk.circuits.filecoin.porep.seal.SealedSector`.
        seed: the 32-byte interactive randomness (drawn on chain after PreCommit; a synthetic
            proof's selection randomness; unused by a non-interactive proof, which still records it).
        partitions: how many partitions to prove (the registered proof's count by default; fewer
            for tests), each with the proof's challenges per partition.

    Raises:
        InputError: a seed not 32 bytes, a partition count outside 1..the proof's.
    """
    if not isinstance(seed, (bytes, bytearray)) or len(seed) != 32:
        raise InputError(f"seed must be 32 bytes, got {seed!r:.60}")
    seed = bytes(seed)
    proof = sealed.proof
    count = proof.partitions if partitions is None else _count(partitions, proof.partitions)
    vanilla = []
    for k in range(count):
        nodes = partition_challenges(proof, sealed.replica_id, seed, sealed.comm_r, k)
        vanilla.append([_vanilla_proof(sealed, c) for c in nodes])
    return SealCommitPhase1Output(registered_proof=proof.id, vanilla_proofs=vanilla, comm_r=sealed.comm_r,
                                  comm_d=sealed.comm_d, replica_id=sealed.replica_id, seed=seed,
                                  ticket=sealed.ticket)


def _count(x, most: int) -> int:
    try:
        n = operator.index(x)
    except TypeError:
        raise InputError(f"partitions must be an int, got {x!r:.40}") from None
    if not 1 <= n <= most:
        raise InputError(f"partitions must be in 1..{most} for this registered proof, got {n}")
    return n


def check(out: SealCommitPhase1Output, **kwargs) -> None:
    """Recompute every path root, label and encoding of ``out``; see
    :func:`~cuzk.circuits.filecoin.porep.c1_check.check_output` for the checks and arguments.

    Raises:
        VanillaFormatError: the first value that does not check out, its JSON path named.
    """
    check_output(out, **kwargs)


def circuit_inputs(out: SealCommitPhase1Output, partition: int = 0) -> dict:
    """The witness of partition ``partition``'s StackedCircuit
    (:meth:`~cuzk.circuits.filecoin.porep.circuit.StackedCircuit.define`'s keyword arguments) from
    its vanilla proofs: field elements as ints, Merkle paths as flat sibling lists leaf level first.

    Raises:
        InputError: no such partition.
    """
    try:
        proofs = out.vanilla_proofs[operator.index(partition)]
    except (IndexError, TypeError):
        raise InputError(f"partition must be an index below {len(out.vanilla_proofs)}, got {partition!r:.40}") from None
    flat = lambda proof: [domain_int(h) for e in proof.levels for h in e.hashes]  # noqa: E731
    cols = [p.replica_column_proofs for p in proofs]
    first = proofs[0] if proofs else None
    return {
        "replica_id": domain_int(out.replica_id), "comm_d": domain_int(out.comm_d), "comm_r": domain_int(out.comm_r),
        "comm_r_last": domain_int(first.comm_r_last_proof.root) if first else 0,
        "comm_c": domain_int(first.replica_column_proofs.c_x.inclusion_proof.root) if first else 0,
        "challenges": [p.challenge for p in proofs],
        "data_leaves": [domain_int(p.comm_d_proofs.leaf) for p in proofs],
        "comm_d_path": [flat(p.comm_d_proofs) for p in proofs],
        "drg_parents": [[cp.column.index for cp in c.drg_parents] for c in cols],
        "exp_parents": [[cp.column.index for cp in c.exp_parents] for c in cols],
        "drg_columns": [[[domain_int(r) for r in cp.column.rows] for cp in c.drg_parents] for c in cols],
        "exp_columns": [[[domain_int(r) for r in cp.column.rows] for cp in c.exp_parents] for c in cols],
        "drg_paths": [[flat(cp.inclusion_proof) for cp in c.drg_parents] for c in cols],
        "exp_paths": [[flat(cp.inclusion_proof) for cp in c.exp_parents] for c in cols],
        "comm_r_last_path": [flat(p.comm_r_last_proof) for p in proofs],
        "comm_c_path": [flat(c.c_x.inclusion_proof) for c in cols],
    }


def curio_envelope(raw: bytes, where: str = "envelope") -> tuple[dict, bytes]:
    """(the envelope, the C1 JSON bytes) of Curio's C1 envelope: Go's ``json.Marshal`` of
    ``{SectorNum, Phase1Out []byte, SectorSize}``, the C1 JSON base64-encoded in ``Phase1Out``.

    >>> doc, c1 = curio_envelope(b'{"SectorNum": 7, "Phase1Out": "e30=", "SectorSize": 2048}')
    >>> doc["SectorNum"], c1
    (7, b'{}')

    Raises:
        VanillaFormatError: not that object, or a field of it wrong (``where.SectorNum`` ...).
    """
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise VanillaFormatError(f"{where}: is not JSON: {e}", path=where) from None
    return curio_envelope_doc(doc, where)


def curio_envelope_doc(doc, where: str = "envelope") -> tuple[dict, bytes]:
    """As :func:`curio_envelope` for an envelope already parsed (a file read with
    ``cuzk.bounded_json.read_json_file``, refused before reading when too large)."""
    if not isinstance(doc, dict) or set(doc) != {"SectorNum", "Phase1Out", "SectorSize"}:
        keys = sorted(doc) if isinstance(doc, dict) else type(doc).__name__
        raise VanillaFormatError(f"{where}: must be the object {{SectorNum, Phase1Out, SectorSize}}, got {keys}",
                                 path=where)
    for key in ("SectorNum", "SectorSize"):
        if isinstance(doc[key], bool) or not isinstance(doc[key], int) or not 0 <= doc[key] < 1 << 64:
            raise VanillaFormatError(f"{where}.{key}: must be an unsigned 64-bit integer, got {doc[key]!r:.40}",
                                     path=f"{where}.{key}")
    if not isinstance(doc["Phase1Out"], str):
        raise VanillaFormatError(f"{where}.Phase1Out: must be a base64 string", path=f"{where}.Phase1Out")
    try:
        c1 = base64.b64decode(doc["Phase1Out"], validate=True)
    except (binascii.Error, ValueError) as e:
        raise VanillaFormatError(f"{where}.Phase1Out: is not base64: {e}", path=f"{where}.Phase1Out") from None
    return doc, c1


def check_envelope_size(doc, sector_size: int, where: str, against: str) -> None:
    """Refuse an envelope (from :func:`curio_envelope`) whose ``SectorSize`` is not
    ``sector_size``: the sector size of what the caller holds (``against`` names it).

    Curio fills ``SectorSize`` from its own record of the sector, so one that disagrees with the
    C1 output or the request beside it means the two were mixed up.

    >>> check_envelope_size({"SectorSize": 4096}, 2048, "envelope", "the C1 output's 2048")
    Traceback (most recent call last):
    ...
    cuzk.errors.VanillaFormatError: envelope.SectorSize: 4096 differs from the C1 output's 2048

    Raises:
        VanillaFormatError: they differ (``path`` is ``where.SectorSize``).
    """
    if doc["SectorSize"] != sector_size:
        raise VanillaFormatError(f"{where}.SectorSize: {doc['SectorSize']} differs from {against}",
                                 path=f"{where}.SectorSize")
