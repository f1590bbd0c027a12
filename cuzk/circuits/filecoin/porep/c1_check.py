"""The consistency check of a C1 output: every value a C2 proof would constrain, recomputed.

A C1 output that does not check out makes C2 fail with an unsatisfied constraint somewhere in
a million rows; :func:`check_output` says instead which partition, challenge and field is wrong,
with the field's JSON path (``$.vanilla_proofs.StackedDrg2KiBV1[0][1].replica_column_proofs.
drg_parents[3].inclusion_proof``). Per challenge, as rust-fil-proofs' ``Proof::verify`` and the
StackedCircuit check it:

1. the challenged node is the one the partition's challenge derivation gives (``challenges=True``);
2. ``comm_d_proofs``: a binary path of ``log2(nodes)`` levels from that node to ``comm_d``,
   each level ``SHA-256(left || right)`` with the top two bits cleared;
3. every column proof (``c_x``, 6 DRG, 8 expander parents): the parent indices the graph gives,
   one row per layer, the leaf is the rows' Poseidon hash, a path of the sector's tree shape to
   the one ``comm_c``;
4. ``comm_r_last_proof``: the node's path of the sector's shape to the one ``comm_r_last``, and
   ``comm_r = Poseidon(comm_c, comm_r_last)``;
5. per layer the labeling proof: its layer and node, its 37 parents are the columns' rows (DRG
   parents at this layer, expander parents at the previous one, repeated), and
   ``SHA-256(replica_id || layer BE u32 || node BE u64 || 0^20 || parents)`` (top two bits
   cleared) is the node's row of that layer;
6. the encoding proof repeats the last labeling proof, and ``key + data leaf`` (in Fr) is the
   replica leaf of ``comm_r_last_proof``.

    >>> from cuzk.circuits.filecoin.porep.seal import seal
    >>> from cuzk.circuits.filecoin.porep.c1 import commit_phase1
    >>> s = seal(bytes(2048), registered_proof=5, prover_id=bytes(32), sector_id=1, ticket=bytes(32))
    >>> check_output(commit_phase1(s, bytes(range(32)))) is None
    True
"""

from __future__ import annotations

import hashlib

from cuzk.circuits.filecoin.porep.challenges import partition_challenges
from cuzk.circuits.filecoin.porep.graph import BASE_DEGREE, EXP_DEGREE, parents as graph_parents
from cuzk.circuits.filecoin.porep.registered import vanilla_variant
from cuzk.circuits.filecoin.porep.vanilla import TOTAL_PARENTS
from cuzk.circuits.filecoin.poseidon import poseidon_hash
from cuzk.circuits.filecoin.vanilla.merkle import domain_int
from cuzk.errors import InputError, VanillaFormatError
from cuzk.field import FR

__all__ = ["check_output", "GRAPH_CHECK_MAX_NODES", "sha254_node", "label_of"]

#: Largest sector (in nodes) whose parents :func:`check_output` computes itself: the whole graph
#: is built ((nodes, 14) u32, 56 bytes per node: 56 MiB at 2^20 nodes, a 32 MiB sector). Larger
#: sectors are checked against ``parents=`` when given, and without the graph otherwise.
GRAPH_CHECK_MAX_NODES = 1 << 20
_R = FR.modulus


def sha254_node(left: bytes, right: bytes) -> bytes:
    """Tree D's node hash: SHA-256 of the two children with the top two bits cleared (an Fr element)."""
    d = bytearray(hashlib.sha256(left + right).digest())
    d[31] &= 0x3F
    return bytes(d)


def label_of(replica_id: bytes, layer: int, node: int, parents) -> bytes:
    """The label a labeling proof commits to: SHA-256 of the replica id, the layer (u32 BE), the
    node (u64 BE), 20 zero bytes and the 37 parent labels, top two bits cleared."""
    h = hashlib.sha256(replica_id + layer.to_bytes(4, "big") + node.to_bytes(8, "big") + bytes(20))
    for p in parents:
        h.update(p)
    d = bytearray(h.digest())
    d[31] &= 0x3F
    return bytes(d)


class _Where:
    """Names one challenge's fields in messages."""

    def __init__(self, variant, k, i, node):
        self.prefix, self.k, self.i, self.node = f"$.vanilla_proofs.{variant}[{k}][{i}]", k, i, node

    def fail(self, field: str, problem: str):
        node = f" (node {self.node})" if self.node is not None else ""
        path = self.prefix + ("." + field if field else "")
        raise VanillaFormatError(f"C1 output: partition {self.k}, challenge {self.i}{node}: {field}: {problem}",
                                 path=path)


def _level_field(proof, j: int) -> str:
    """The JSON path (below the proof) of level ``j`` of a Merkle proof."""
    nb, kind = len(proof.base), proof.kind
    if j < nb:
        return f"data.{kind}.{'path' if kind == 'Single' else 'base_proof'}.path[{j}]"
    return f"data.{kind}.{'sub_proof' if j == nb else 'top_proof'}.path[0]"


def _fr(d: bytes, w: _Where, field: str) -> int:
    x = domain_int(d)
    if x >= _R:
        w.fail(field, f"{x:#x} is not a canonical field element (>= r)")
    return x


def _shape(proof, shape, w, field):
    """The proof's levels have the sector tree's variant, level count and arities."""
    kind = "Single" if not shape.sub else "Sub" if not shape.top else "Top"
    if proof.kind != kind or len(proof.base) != shape.base_height:
        w.fail(field, f"a {proof.kind} proof of {len(proof.base)} base levels; the sector's tree "
                      f"{shape.arities} takes a {kind} proof of {shape.base_height}")
    if proof.arities != shape.levels:
        w.fail(field, f"level arities {proof.arities}, the tree has {shape.levels}")


def _poseidon_root(proof, w, field) -> int:
    node = _fr(proof.leaf, w, field + ".leaf")
    for j, e in enumerate(proof.levels):
        sibs = [_fr(h, w, f"{field}.{_level_field(proof, j)}.hashes[{m}]") for m, h in enumerate(e.hashes)]
        node = poseidon_hash(sibs[:e.index] + [node] + sibs[e.index:])
    return node


def _check_poseidon_path(proof, shape, node, root, w, field, what):
    _shape(proof, shape, w, field)
    if proof.path_index() != node:
        w.fail(field, f"the path leads from node {proof.path_index()}, not {node}")
    if proof.root != root:
        w.fail(field + f".data.{proof.kind}.root", f"root {proof.root.hex()} is not {what} {root.hex()}")
    if _poseidon_root(proof, w, field) != domain_int(root):
        w.fail(field, f"the path does not hash to its root {what}")


def _check_column(cp, node, layers, shape, comm_c, w, field):
    if cp.column.index != node:
        w.fail(field + ".column.index", f"column of node {cp.column.index}, expected node {node}")
    if len(cp.column.rows) != layers:
        w.fail(field + ".column.rows", f"{len(cp.column.rows)} rows, the sector has {layers} layers")
    rows = [_fr(r, w, f"{field}.column.rows[{j}]") for j, r in enumerate(cp.column.rows)]
    leaf = f"{field}.inclusion_proof.data.{cp.inclusion_proof.kind}.leaf"
    if domain_int(cp.inclusion_proof.leaf) != poseidon_hash(rows):
        w.fail(leaf, "the tree C leaf is not the Poseidon hash of the column's rows")
    _check_poseidon_path(cp.inclusion_proof, shape, node, comm_c, w, field + ".inclusion_proof", "comm_c")


def _check_comm_d(proof, node, nodes, comm_d, w):
    f = "comm_d_proofs"
    height = nodes.bit_length() - 1
    if proof.kind != "Single" or len(proof.base) != height or any(len(e.hashes) != 1 for e in proof.base):
        w.fail(f, f"tree D takes a Single binary proof of {height} levels, got a {proof.kind} proof with "
                  f"arities {proof.arities}")
    if proof.path_index() != node:
        w.fail(f, f"the path leads from node {proof.path_index()}, not {node}")
    if proof.root != comm_d:
        w.fail(f + ".data.Single.root", f"root {proof.root.hex()} is not comm_d {comm_d.hex()}")
    h = proof.leaf
    for e in proof.base:
        h = sha254_node(h, e.hashes[0]) if e.index == 0 else sha254_node(e.hashes[0], h)
    if h != comm_d:
        w.fail(f, "the path does not hash to comm_d")


def _expected_parents(cols, layer: int) -> list:
    drg = [c.column.rows[layer - 1] for c in cols.drg_parents]
    got = drg if layer == 1 else drg + [c.column.rows[layer - 2] for c in cols.exp_parents]
    return [got[i % len(got)] for i in range(TOTAL_PARENTS)]


def _check_challenge(out, proof, node, p, parents_row, comm_c, comm_r_last, w):
    shape, layers = p.shape, p.layers
    _check_comm_d(proof.comm_d_proofs, node, p.nodes, out.comm_d, w)
    cols = proof.replica_column_proofs
    _check_column(cols.c_x, node, layers, shape, comm_c, w, "replica_column_proofs.c_x")
    for kind, items, want in (("drg_parents", cols.drg_parents, BASE_DEGREE), ("exp_parents", cols.exp_parents, EXP_DEGREE)):
        if len(items) != want:
            w.fail(f"replica_column_proofs.{kind}", f"{len(items)} column proofs, a node has {want}")
    for j, cp in enumerate(cols.drg_parents + cols.exp_parents):
        kind, m = ("drg_parents", j) if j < BASE_DEGREE else ("exp_parents", j - BASE_DEGREE)
        field = f"replica_column_proofs.{kind}[{m}]"
        expect = cp.column.index if parents_row is None else int(parents_row[j])
        _check_column(cp, expect, layers, shape, comm_c, w, field)
    _check_poseidon_path(proof.comm_r_last_proof, shape, node, comm_r_last, w, "comm_r_last_proof", "comm_r_last")
    if len(proof.labeling_proofs) != layers:
        w.fail("labeling_proofs", f"{len(proof.labeling_proofs)} labeling proofs, the sector has {layers} layers")
    for layer, lp in enumerate(proof.labeling_proofs, 1):
        f = f"labeling_proofs[{layer - 1}]"
        if lp.layer_index != layer or lp.node != node:
            w.fail(f, f"labels layer {lp.layer_index} node {lp.node}, expected layer {layer} node {node}")
        if list(lp.parents) != _expected_parents(cols, layer):
            w.fail(f + ".parents", "the parent labels are not the parent columns' rows "
                                   "(DRG at this layer, expander at the previous one, repeated to 37)")
        if label_of(out.replica_id, layer, node, lp.parents) != cols.c_x.column.rows[layer - 1]:
            w.fail(f, f"the label does not hash to row {layer - 1} of the node's column (c_x)")
    enc, last = proof.encoding_proof, proof.labeling_proofs[-1]
    if (enc.layer_index, enc.node, enc.parents) != (last.layer_index, last.node, last.parents):
        w.fail("encoding_proof", "the encoding proof is not the last layer's labeling proof")
    key = _fr(cols.c_x.column.rows[-1], w, f"replica_column_proofs.c_x.column.rows[{layers - 1}]")
    data = _fr(proof.comm_d_proofs.leaf, w, "comm_d_proofs.data.Single.leaf")
    if (key + data) % _R != _fr(proof.comm_r_last_proof.leaf, w, "comm_r_last_proof.leaf"):
        w.fail(f"comm_r_last_proof.data.{proof.comm_r_last_proof.kind}.leaf",
               "the replica leaf is not the last layer's label + the data leaf")


def _parents_table(p, parents):
    if parents is not None:
        return parents
    if p.nodes <= GRAPH_CHECK_MAX_NODES:
        return graph_parents(p.nodes, p.porep_id, p.api_version)
    return None


def check_output(out, *, parents=None, challenges: bool = True, partitions: int | None = None) -> None:
    """Check a :class:`~cuzk.circuits.filecoin.porep.c1.SealCommitPhase1Output` (see the module docstring).

    Args:
        out: the C1 output.
        parents: the sector's parents, indexable by node to 14 ints (e.g. the ``(nodes, 14)``
            array of :func:`~cuzk.circuits.filecoin.porep.graph.parents`); computed here for
            sectors up to :data:`GRAPH_CHECK_MAX_NODES` nodes, otherwise parent indices are only
            checked against their own paths.
        challenges: check that each challenged node is the one the partition's derivation gives.
        partitions: how many partitions ``out`` holds (the registered proof's count by default).

    Raises:
        VanillaFormatError: the first field that does not check out; ``path`` is its JSON path.
    """
    p = out.seal_proof
    variant = vanilla_variant(p.id)
    want = p.partitions if partitions is None else partitions
    if len(out.vanilla_proofs) != want:
        raise VanillaFormatError(f"C1 output: {len(out.vanilla_proofs)} partition(s), expected {want} ({p.name})",
                                 path=f"$.vanilla_proofs.{variant}")
    table = _parents_table(p, parents)
    first = next((proofs[0] for proofs in out.vanilla_proofs if proofs), None)
    if first is None:
        raise VanillaFormatError("C1 output: no vanilla proofs", path=f"$.vanilla_proofs.{variant}")
    comm_c, comm_r_last = first.replica_column_proofs.c_x.inclusion_proof.root, first.comm_r_last_proof.root
    w0 = _Where(variant, 0, 0, None)
    if poseidon_hash([_fr(comm_c, w0, "replica_column_proofs.c_x.inclusion_proof (comm_c)"),
                      _fr(comm_r_last, w0, "comm_r_last_proof (comm_r_last)")]) != domain_int(out.comm_r):
        raise VanillaFormatError("C1 output: comm_r is not Poseidon(comm_c, comm_r_last) of the proofs' tree C "
                                 "and tree R_last roots", path="$.comm_r")
    for k, proofs in enumerate(out.vanilla_proofs):
        if len(proofs) != p.challenges_per_partition:
            raise VanillaFormatError(f"C1 output: partition {k} holds {len(proofs)} challenges, {p.name} has "
                                     f"{p.challenges_per_partition}", path=f"$.vanilla_proofs.{variant}[{k}]")
        expected = partition_challenges(p, out.replica_id, out.seed, out.comm_r, k) if challenges else None
        for i, proof in enumerate(proofs):
            node = proof.comm_d_proofs.path_index() if expected is None else expected[i]
            w = _Where(variant, k, i, node)
            if not 0 < node < p.nodes:
                w.fail("comm_d_proofs", f"node {node} is not a challengeable node (1..{p.nodes - 1})")
            row = None if table is None else table[node]
            try:
                _check_challenge(out, proof, node, p, row, comm_c, comm_r_last, w)
            except (InputError, IndexError, ValueError) as e:  # shapes the checks above did not foresee
                if isinstance(e, VanillaFormatError):
                    raise
                w.fail("", f"{type(e).__name__}: {e}")

