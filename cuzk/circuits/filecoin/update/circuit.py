"""SnapDeals' circuit, rust-fil-proofs' ``EmptySectorUpdateCircuit``: one partition, in bellperson's
synthesis order (the R1CS Filecoin's update parameters were made for).

Public inputs ``[k_and_h_select, comm_r_old, comm_d_new, comm_r_new]``, ``k_and_h_select = k |
h_select << partition_bits``. The partition circuit:

1. ``k_and_h_select`` allocated and made public, split into its partition bits and 6 ``h_select``
   bits (one booleanity row each, one decomposition row), the partition bits packed into ``k``;
2. the three commitments allocated and made public; ``phi = H_custom(comm_d_new, comm_r_old)``;
3. ``comm_c``, ``root_r_old``, ``root_r_new``, the apex leaves and the partition path private;
   ``Poseidon2(comm_c, root_r_old) = comm_r_old``, the same for ``root_r_new``;
4. the apex tree (SHA-256) up to its root, and its inclusion in tree D (root ``comm_d_new``);
5. the challenge digests and their bits (:func:`~.gadgets.gen_challenge_bits`);
6. per challenge (traced once, stamped with ``cs.repeat``): its bits (random bits then the
   partition bits), ``c_high``, ``rho = H_custom(phi, c_high)``, ``leaf_r_new = leaf_r_old +
   leaf_d_new · rho``, the inclusion of ``leaf_r_old`` in tree R_old and of ``leaf_r_new`` in tree
   R_new (Poseidon, no path input), the apex leaf selected by the challenge's bits above the apex
   height, and the SHA-256 inclusion of ``leaf_d_new`` up to that apex leaf.

    >>> c = EmptySectorUpdate(32 << 30)             # 16 partitions, h = 10 = hs[3]
    >>> c.params.challenge_count, c.public_inputs(5, 1, 2, 3)   # 5 | 2^3 << 4
    (86, [133, 1, 2, 3])
"""

from __future__ import annotations

import functools

from cuzk.circuit import Circuit
from cuzk.circuits.filecoin.porep.circuit_label import sha_node
from cuzk.circuits.filecoin.porep.circuit_num import alloc_bits, bits_lc, enforce_equal, inputize, pack_bits
from cuzk.circuits.filecoin.porep.circuit_por import poseidon_node
from cuzk.circuit.template_cache import TemplateCache
from cuzk.circuits.filecoin.poseidon import _field_ints, poseidon_circuit_hash
from cuzk.circuits.filecoin.update.gadgets import (
    apex_por, challenge_high_bits, gen_challenge_bits, group_path, label_r_new, por, select,
)
from cuzk.circuits.filecoin.update.params import H_SELECT_BITS, update_params
from cuzk.circuits.filecoin.update.randomness import gen_randomness_circuit

__all__ = ["EmptySectorUpdate"]


class EmptySectorUpdate(Circuit):
    """One partition of a sector update proof; see the module docstring.

    Args:
        sector_size: bytes; alone it gives Filecoin's parameters for that size.
        nodes, shape: rust-fil-proofs' test sectors by node count (1 KiB = 32 nodes, tree 8-4-0, ...).
        partition: the default partition index ``k`` of :meth:`public_inputs` (every partition
            has this same circuit).
        h: the default ``h`` (one of the size's ``hs``; default ``hs[3]``).

    Raises:
        cuzk.errors.InputError: a size without update parameters, a shape that is not its
            size's, a partition or h outside the size's.
    """

    #: trace one challenge and stamp it (cs.repeat); SHA-256 compressions and Poseidon hashes from cached templates
    stamp = True
    poseidon = False

    def __init__(self, sector_size=None, *, nodes=None, shape=None, partition: int = 0, h=None):
        self.params = update_params(sector_size, nodes=nodes, shape=shape, poseidon=self.poseidon)
        self.partition = self.params.check_partition(partition)
        self.h = self.params.h_default if h is None else h
        self.params.h_select(self.h)

    def __repr__(self):
        p = self.params
        return f"{type(self).__name__}(nodes={p.nodes}, shape={p.shape.arities}, partition={self.partition}, h={self.h})"

    def input_shapes(self) -> dict:
        p = self.params
        c, s = p.challenge_count, p.shape.siblings
        shapes = {name: () for name in ("k_and_h_select", "comm_r_old", "comm_d_new", "comm_r_new", "comm_c",
                                        "root_r_old", "root_r_new")}
        shapes["apex_leafs"] = (p.apex_leaf_count,)
        if p.partition_bit_len:
            shapes["partition_path"] = (p.partition_bit_len,)
        shapes |= {"leaf_r_old": (c,), "path_r_old": (c, s), "leaf_d_new": (c,), "path_d_new": (c, p.apex_height),
                   "path_r_new": (c, s)}
        return shapes

    def public_inputs(self, k=None, comm_r_old=0, comm_d_new=0, comm_r_new=0, *, h=None) -> list[int]:
        """The verifier's inputs of partition ``k`` (default: the circuit's), as rust-fil-proofs'
        ``generate_public_inputs``: ``[k | h_select << partition_bits, comm_r_old, comm_d_new, comm_r_new]``.

        Raises:
            cuzk.errors.InputError: ``k`` or ``h`` outside the size's, a commitment not a field element.
        """
        p = self.params
        k = p.check_partition(self.partition if k is None else k)
        sel = p.h_select(self.h if h is None else h)
        return [k | sel << p.partition_bit_len, *_field_ints([comm_r_old, comm_d_new, comm_r_new], "commitments")]

    # -- the circuit -------------------------------------------------------------------------
    def _head(self, cs, k_and_h_select, comm_r_old, comm_d_new, comm_r_new, comm_c, root_r_old, root_r_new):
        """Steps 1-3 and the comm_r checks: (partition bits, packed k, h_select bits, commitments, phi, roots)."""
        p = self.params
        kh = cs.private(k_and_h_select, name="k_and_h_select")
        inputize(cs, kh, name="k_and_h_select (public input)")
        bits = alloc_bits(cs, kh.value, p.partition_bit_len + H_SELECT_BITS, name="k_and_h_select_bit")
        cs.enforce(bits_lc(cs, bits), cs.one, kh, name="k_and_h_select binary decomp")
        part_bits, sel_bits = bits[:p.partition_bit_len], bits[p.partition_bit_len:]
        k = pack_bits(cs, part_bits, name="pack partition bits")
        coms = []
        for name, value in (("comm_r_old", comm_r_old), ("comm_d_new", comm_d_new), ("comm_r_new", comm_r_new)):
            v = cs.private(value, name=name)
            inputize(cs, v, name=f"{name}_input")
            coms.append(v)
        r_old, d_new, r_new = coms
        phi = gen_randomness_circuit(cs, d_new, r_old, name="phi")
        c = cs.private(comm_c, name="comm_c")
        roots = (cs.private(root_r_old, name="root_r_old"), cs.private(root_r_new, name="root_r_new"))
        return part_bits, k, sel_bits, coms, phi, c, roots

    def _comm_r_checks(self, cs, comm_c, roots, coms):
        for which, root, comm in (("old", roots[0], coms[0]), ("new", roots[1], coms[2])):
            calc = poseidon_circuit_hash(cs, [comm_c, root], name=f"comm_r_{which}_calc")
            enforce_equal(cs, calc, comm, name=f"enforce comm_r_{which}_calc == comm_r_{which}")

    def define(self, cs, k_and_h_select, comm_r_old, comm_d_new, comm_r_new, comm_c, root_r_old, root_r_new,
               apex_leafs, leaf_r_old, path_r_old, leaf_d_new, path_d_new, path_r_new, partition_path=()):
        p = self.params
        part_bits, k, sel_bits, coms, phi, c, roots = self._head(
            cs, k_and_h_select, comm_r_old, comm_d_new, comm_r_new, comm_c, root_r_old, root_r_new)
        apex = [cs.private(v, name=f"apex_leaf_{i}") for i, v in enumerate(apex_leafs)]
        ppath = [cs.private(v, name=f"partition_path_sibling_{i}") for i, v in enumerate(partition_path)]
        self._comm_r_checks(cs, c, roots, coms)
        cache = TemplateCache() if self.stamp else None
        with cs.namespace("apex_gadget"):
            apex_por(cs, apex, part_bits, ppath, coms[1], cache)
        generated = gen_challenge_bits(cs, coms[2], k, p.challenge_count, p.random_bits_per_challenge)
        items = [(phi, sel_bits, apex, roots, list(generated[i]) + list(part_bits), cache, leaf_r_old[i],
                  path_r_old[i], leaf_d_new[i], path_d_new[i], path_r_new[i]) for i in range(p.challenge_count)]
        self._challenges(cs, items)

    def _challenges(self, cs, items):
        name = "challenge (c_index={i})"
        if self.stamp:
            cs.repeat(self._challenge, items, name=name)
        else:
            for i, a in enumerate(items):
                with cs.namespace(name.format(i=i)):
                    self._challenge(cs, *a)

    def _encoding(self, cs, phi, sel_bits, c_bits, leaf_r_old, leaf_d_new):
        """c_high, rho, the two leaves and leaf_r_new: (leaf_r_old, leaf_d_new, leaf_r_new) variables."""
        with cs.namespace("get_challenge_high_bits"):
            c_high = challenge_high_bits(cs, c_bits, sel_bits, self.params.hs)
        rho = gen_randomness_circuit(cs, phi, c_high, name="rho")
        old = cs.private(leaf_r_old, name="leaf_r_old")
        d = cs.private(leaf_d_new, name="leaf_d_new")
        with cs.namespace("leaf_r_new"):
            new = label_r_new(cs, old, d, rho)
        return old, d, new

    def _tree_r_pors(self, cs, c_bits, roots, leaves, path_r_old, path_r_new, cache):
        levels = self.params.shape.levels
        node = functools.partial(poseidon_node, cache=cache)
        for which, leaf, path, root in (("old", leaves[0], path_r_old, roots[0]), ("new", leaves[2], path_r_new, roots[1])):
            sibs = [cs.private(v, name=f"path_r_{which} sibling {j}") for j, v in enumerate(path)]
            por(cs, levels, node, c_bits, leaf, group_path(levels, sibs), root, name=f"por tree_r_{which}")

    def _challenge(self, cs, phi, sel_bits, apex, roots, c_bits, cache, leaf_r_old, path_r_old, leaf_d_new,
                   path_d_new, path_r_new):
        p = self.params
        leaves = self._encoding(cs, phi, sel_bits, c_bits, leaf_r_old, leaf_d_new)
        self._tree_r_pors(cs, c_bits, roots, leaves, path_r_old, path_r_new, cache)
        h = p.apex_height
        with cs.namespace("select_apex_leaf"):
            apex_leaf = select(cs, apex, c_bits[h:h + p.apex_leaf_bit_len])
        sibs = [[cs.private(v, name=f"path_to_apex_leaf sibling {j}")] for j, v in enumerate(path_d_new)]
        por(cs, (2,) * h, lambda cs, kids, lv: sha_node(cs, kids, lv, cache), c_bits[:h], leaves[1], sibs,
            apex_leaf, name="por to_apex_leaf")
