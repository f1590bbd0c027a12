"""Filecoin's PoRep circuit, rust-fil-proofs' ``StackedCircuit``, one partition, in bellperson's
synthesis order (the R1CS Filecoin's Groth16 parameters were made for).

Per partition: ``replica_id``, ``comm_d``, ``comm_r`` allocated and made public (``input * 1 =
x``), the replica id unpacked to bits (byte-reversed), ``comm_r_last`` and ``comm_c`` private,
``comm_r = Poseidon(comm_c, comm_r_last)``; then per challenge (traced once, stamped with
``cs.repeat``):

1. the data leaf and its SHA-256 inclusion in tree D (root ``comm_d``);
2. 6 DRG and 8 expander parent columns (one row per layer), each column's Poseidon hash and its
   inclusion in tree C (root ``comm_c``);
3. the challenge as 64 allocated bits packed into a public input;
4. per layer the label: the parents' rows unpacked (layer 1: the 6 DRG parents repeated to 37;
   later layers: 6 DRG rows of this layer and 8 expander rows of the previous one, repeated to
   37) and hashed with the replica id, layer and challenge (``create_label``);
5. the encoding ``label_L + data_leaf`` and its inclusion in tree R (root ``comm_r_last``);
6. the Poseidon hash of the challenge's own column of labels and its inclusion in tree C.

Public inputs (:meth:`StackedCircuit.public_inputs`, rust-fil-proofs' ``generate_public_inputs``):
replica_id, comm_d, comm_r, then per challenge: the challenge (tree-D path), the 6 DRG and 8
expander parent indices (tree-C paths), the challenge (packed bits), the challenge (tree-R path)
and the challenge again (tree-C path of its column).

    >>> c = StackedCircuit(nodes=8, layers=2, challenge_count=1, shape=(8, 0, 0))
    >>> sorted(c.input_shapes().items())[:3]
    [('challenges', (1,)), ('comm_c', ()), ('comm_c_path', (1, 7))]
"""

from __future__ import annotations

import functools
import operator

from cuzk.circuit import Circuit
from cuzk.circuits.filecoin.challenges import check_api_version
from cuzk.circuits.filecoin.porep.circuit_label import create_label, sha_node
from cuzk.circuits.filecoin.porep.circuit_num import (
    add, alloc_bits, enforce_equal, inputize, pack_into_inputs, reverse_bit_numbering, to_bits_le,
)
from cuzk.circuits.filecoin.porep.circuit_por import inclusion, poseidon_cached, poseidon_node
from cuzk.circuits.filecoin.porep.params import DRG_DEGREE, EXP_DEGREE, porep_params
from cuzk.circuit.template_cache import TemplateCache
from cuzk.circuits.filecoin.poseidon import _field_ints, poseidon_circuit_hash
from cuzk.errors import InputError

__all__ = ["StackedCircuit"]


def _expand_parents(parents: list, layer: int) -> list:
    """The 37 parents a label hashes, from this layer's 6 (layer 1) or 14 parents."""
    if layer == 1:
        return parents * 6 + parents[:1]
    return parents * 2 + parents[:9]


def _column(cs, rows, name):
    return [cs.private(v, name=f"{name}/column_num_row_{i}") for i, v in enumerate(rows)]


class StackedCircuit(Circuit):
    """One PoRep partition; see the module docstring.

    Args:
        sector_size: bytes; alone it picks Filecoin's production parameters (layers, challenges
            per partition, tree shape, partitions). The keywords override them (test shapes).
        nodes, layers, challenge_count, shape: graph nodes, layers, challenges of this
            partition, tree R/C (base, sub, top) arities.
        api_version: "1.0", "1.1" or "1.2" (only the graph and challenge derivation use it).
        partition: this partition's index ``k`` (its challenges are the ``k``-th slice).

    Raises:
        cuzk.errors.InputError: an unknown sector size without the keywords, a layer count
            the column hash has no Poseidon arity for (2 or 11), nodes that do not fill the tree.
    """

    #: trace one challenge and stamp it (cs.repeat), SHA-256 compressions and Poseidon hashes from cached templates
    stamp = True

    def __init__(self, sector_size=None, *, nodes=None, layers=None, challenge_count=None, shape=None,
                 api_version: str = "1.1", partition: int = 0):
        p = porep_params(sector_size, nodes=nodes, layers=layers, challenge_count=challenge_count, shape=shape)
        self.params = p
        self.nodes, self.layers, self.challenge_count, self.shape = p.nodes, p.layers, p.challenge_count, p.shape
        self.api_version = check_api_version(api_version)
        if not isinstance(partition, int) or isinstance(partition, bool) or not 0 <= partition < p.partitions:
            raise InputError(f"partition must be an int in [0, {p.partitions}), got {partition!r}")
        self.partition = partition

    def __repr__(self):
        return (f"StackedCircuit(nodes={self.nodes}, layers={self.layers}, challenge_count={self.challenge_count}, "
                f"shape={self.shape.arities}, api_version={self.api_version!r}, partition={self.partition})")

    @property
    def d_height(self) -> int:
        """Levels of tree D (binary SHA-256 over the nodes)."""
        return self.nodes.bit_length() - 1

    def input_shapes(self) -> dict:
        c, L, s = self.challenge_count, self.layers, self.shape.siblings
        return {
            "replica_id": (), "comm_d": (), "comm_r": (), "comm_r_last": (), "comm_c": (),
            "challenges": (c,), "data_leaves": (c,), "comm_d_path": (c, self.d_height),
            "drg_parents": (c, DRG_DEGREE), "drg_columns": (c, DRG_DEGREE, L), "drg_paths": (c, DRG_DEGREE, s),
            "exp_parents": (c, EXP_DEGREE), "exp_columns": (c, EXP_DEGREE, L), "exp_paths": (c, EXP_DEGREE, s),
            "comm_r_last_path": (c, s), "comm_c_path": (c, s),
        }

    def define(self, cs, replica_id, comm_d, comm_r, comm_r_last, comm_c, challenges, data_leaves, comm_d_path,
               drg_parents, drg_columns, drg_paths, exp_parents, exp_columns, exp_paths, comm_r_last_path,
               comm_c_path):
        rid = cs.private(replica_id, name="replica_id")
        inputize(cs, rid, name="replica_id_input")
        rid_bits = reverse_bit_numbering(to_bits_le(cs, rid, name="replica_id_bits"))
        d = cs.private(comm_d, name="comm_d")
        inputize(cs, d, name="comm_d_input")
        r = cs.private(comm_r, name="comm_r")
        inputize(cs, r, name="comm_r_input")
        r_last = cs.private(comm_r_last, name="comm_r_last")
        c = cs.private(comm_c, name="comm_c")
        h = poseidon_circuit_hash(cs, [c, r_last], name="H_comm_c_comm_r_last")
        enforce_equal(cs, r, h, name="enforce comm_r = H(comm_c || comm_r_last)")
        cache = TemplateCache() if self.stamp else None
        items = [
            (d, c, r_last, rid_bits, cache, challenges[i], data_leaves[i], comm_d_path[i], drg_parents[i],
             drg_columns[i], drg_paths[i], exp_parents[i], exp_columns[i], exp_paths[i], comm_r_last_path[i],
             comm_c_path[i])
            for i in range(self.challenge_count)
        ]
        if self.stamp:
            cs.repeat(self._challenge, items, name="challenge_{i}")
        else:
            for i, a in enumerate(items):
                with cs.namespace(f"challenge_{i}"):
                    self._challenge(cs, *a)

    def _challenge(self, cs, comm_d, comm_c, comm_r_last, rid_bits, cache, challenge, data_leaf, d_path,
                   drg_parents, drg_columns, drg_paths, exp_parents, exp_columns, exp_paths, r_last_path, c_path):
        levels = self.shape.levels
        node = functools.partial(poseidon_node, cache=cache)
        leaf = cs.private(data_leaf, name="data_leaf")
        inclusion(cs, (2,) * self.d_height, lambda cs, kids, lv: sha_node(cs, kids, lv, cache), leaf, comm_d,
                  challenge, d_path, name="comm_d_inclusion")
        cols = []
        for kind, idx, columns, paths in (("drg", drg_parents, drg_columns, drg_paths),
                                          ("exp", exp_parents, exp_columns, exp_paths)):
            for j in range(len(idx)):
                col = _column(cs, columns[j], f"{kind}_parent_{j}_num/column")
                val = poseidon_cached(cs, col, cache, name=f"{kind}_parent_{j}_constraint")
                inclusion(cs, levels, node, val, comm_c, idx[j], paths[j], name=f"{kind}_parent_{j}_inclusion")
                cols.append(col)
        drg_cols, exp_cols = cols[:len(drg_parents)], cols[len(drg_parents):]
        node_bits = alloc_bits(cs, challenge, 64, name="challenge/allocated bit")
        pack_into_inputs(cs, node_bits, name="challenge input")
        labels = []
        for layer in range(1, self.layers + 1):
            with cs.namespace(f"labeling_{layer}"):
                parents = [reverse_bit_numbering(to_bits_le(cs, col[layer - 1], name=f"drg_parent_{j}_bits"))
                           for j, col in enumerate(drg_cols)]
                if layer > 1:
                    parents += [reverse_bit_numbering(to_bits_le(cs, col[layer - 2], name=f"exp_parent_{j}_bits"))
                                for j, col in enumerate(exp_cols)]
                labels.append(create_label(cs, rid_bits, _expand_parents(parents, layer), layer, node_bits, cache))
        encoded = add(cs, labels[-1], leaf, name="encode_node/encode_add")
        inclusion(cs, levels, node, encoded, comm_r_last, challenge, r_last_path,
                  name="comm_r_last_data_inclusion")
        col_hash = poseidon_cached(cs, labels, cache, name="c_x_column_hash")
        inclusion(cs, levels, node, col_hash, comm_c, challenge, c_path, name="c_x_inclusion")

    # -- native side -------------------------------------------------------------------------
    def public_inputs(self, replica_id, comm_d, comm_r, challenges, parents) -> list[int]:
        """The verifier's inputs in rust-fil-proofs' order (see the module docstring).

        Args:
            replica_id, comm_d, comm_r: field elements (ints).
            challenges: this partition's challenged nodes.
            parents: per challenge its 14 parents (6 DRG then 8 expander), e.g. rows of the
                graph's parent table.

        Raises:
            cuzk.errors.InputError: a count that is not this circuit's, an index outside the graph.
        """
        head = _field_ints([replica_id, comm_d, comm_r], "replica_id, comm_d, comm_r")
        challenges, parents = list(challenges), [list(p) for p in parents]
        if len(challenges) != self.challenge_count or len(parents) != self.challenge_count:
            raise InputError(f"this partition has {self.challenge_count} challenges, got {len(challenges)} "
                             f"challenges and {len(parents)} parent lists")
        out = head
        for c, ps in zip(challenges, parents):
            if len(ps) != DRG_DEGREE + EXP_DEGREE:
                raise InputError(f"a node has {DRG_DEGREE + EXP_DEGREE} parents, got {len(ps)}")
            c, *ps = (_node(x, self.nodes) for x in (c, *ps))
            out += [c, *ps, c, c, c]
        return out


def _node(x, nodes: int) -> int:
    try:
        v = operator.index(x)
    except TypeError:
        raise InputError(f"a node index must be an int, got {type(x).__name__} {x!r:.40}") from None
    if not 0 <= v < nodes:
        raise InputError(f"node index {v} is outside the graph's {nodes} nodes")
    return v
