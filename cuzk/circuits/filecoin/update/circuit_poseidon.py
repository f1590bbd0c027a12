"""SnapDeals' Poseidon variant, rust-fil-proofs' ``poseidon::EmptySectorUpdateCircuit``: tree D is a
Poseidon tree of tree R's shape, so a challenge's data leaf is proved like its replica leaves and
there are no apex trees; one partition of ``challenge_count · partitions`` challenges.

Public inputs ``[h_select, comm_r_old, comm_d_new, comm_r_new]``. Synthesis order: ``h_select``
made public and split into 6 bits, the commitments made public, ``phi``, ``comm_c`` and the two
roots with their ``comm_r`` checks, then a private ``partition`` number allocated as 0, the challenge
digests ``H_custom(comm_r_new, partition · d + j)``, and per challenge (stamped) ``c_high``, ``rho``,
the encoding and three Poseidon inclusions (tree R_old, tree R_new, tree D_new).

rust-fil-proofs marks this circuit "NOT AUDITED" and its ``partition`` variable is constrained
by nothing but the digest-index rows (the vanilla prover of the variant is unimplemented there);
cuzk reproduces the R1CS as it is, with ``partition = 0`` in every witness it builds.

    >>> c = EmptySectorUpdatePoseidon(32 << 30)
    >>> c.params.challenge_count, c.public_inputs(1, 2, 3)     # h_select = 2^3 (h = 10)
    (1376, [8, 1, 2, 3])
"""

from __future__ import annotations

import functools

from cuzk.circuit.template_cache import TemplateCache
from cuzk.circuits.filecoin.porep.circuit_num import alloc_bits, bits_lc, inputize
from cuzk.circuits.filecoin.porep.circuit_por import poseidon_node
from cuzk.circuits.filecoin.poseidon import _field_ints
from cuzk.circuits.filecoin.update.circuit import EmptySectorUpdate
from cuzk.circuits.filecoin.update.gadgets import gen_challenge_bits, group_path, por
from cuzk.circuits.filecoin.update.params import H_SELECT_BITS
from cuzk.circuits.filecoin.update.randomness import gen_randomness_circuit

__all__ = ["EmptySectorUpdatePoseidon"]


class EmptySectorUpdatePoseidon(EmptySectorUpdate):
    """The Poseidon variant (module docstring); arguments as :class:`~.circuit.EmptySectorUpdate`
    (``partition`` must be 0: the variant has one partition)."""

    poseidon = True

    def input_shapes(self) -> dict:
        p = self.params
        c, s = p.challenge_count, p.shape.siblings
        shapes = {name: () for name in ("h_select", "comm_r_old", "comm_d_new", "comm_r_new", "comm_c",
                                        "root_r_old", "root_r_new")}
        return shapes | {"leaf_r_old": (c,), "path_r_old": (c, s), "leaf_d_new": (c,), "path_d_new": (c, s),
                         "path_r_new": (c, s)}

    def public_inputs(self, comm_r_old=0, comm_d_new=0, comm_r_new=0, *, h=None) -> list[int]:
        """``[h_select, comm_r_old, comm_d_new, comm_r_new]`` (rust-fil-proofs' ``PublicInputs::to_vec``).

        Raises:
            cuzk.errors.InputError: an ``h`` the size does not allow, a commitment not a field element.
        """
        sel = self.params.h_select(self.h if h is None else h)
        return [sel, *_field_ints([comm_r_old, comm_d_new, comm_r_new], "commitments")]

    def define(self, cs, h_select, comm_r_old, comm_d_new, comm_r_new, comm_c, root_r_old, root_r_new,
               leaf_r_old, path_r_old, leaf_d_new, path_d_new, path_r_new):
        p = self.params
        sel = cs.private(h_select, name="h_select")
        inputize(cs, sel, name="h_select (public input)")
        sel_bits = alloc_bits(cs, sel.value, H_SELECT_BITS, name="h_select_bit")
        cs.enforce(bits_lc(cs, sel_bits), cs.one, sel, name="h_select binary decomp")
        coms = []
        for name, value in (("comm_r_old", comm_r_old), ("comm_d_new", comm_d_new), ("comm_r_new", comm_r_new)):
            v = cs.private(value, name=name)
            inputize(cs, v, name=f"{name}_input")
            coms.append(v)
        phi = gen_randomness_circuit(cs, coms[1], coms[0], name="phi")
        c = cs.private(comm_c, name="comm_c")
        roots = (cs.private(root_r_old, name="root_r_old"), cs.private(root_r_new, name="root_r_new"))
        self._comm_r_checks(cs, c, roots, coms)
        # rust-fil-proofs allocates the partition index as a free private 0 (module docstring)
        partition = cs.private(0, name="gen_challenge_bits partition zero")
        generated = gen_challenge_bits(cs, coms[2], partition, p.challenge_count, p.challenge_bit_len)
        cache = TemplateCache() if self.stamp else None  # the challenges' Poseidon hashes, one template per arity
        items = [(phi, sel_bits, coms[1], roots, list(generated[i]), cache, leaf_r_old[i], path_r_old[i],
                  leaf_d_new[i], path_d_new[i], path_r_new[i]) for i in range(p.challenge_count)]
        self._challenges(cs, items)

    def _challenge(self, cs, phi, sel_bits, comm_d_new, roots, c_bits, cache, leaf_r_old, path_r_old, leaf_d_new,
                   path_d_new, path_r_new):
        leaves = self._encoding(cs, phi, sel_bits, c_bits, leaf_r_old, leaf_d_new)
        self._tree_r_pors(cs, c_bits, roots, leaves, path_r_old, path_r_new, cache)
        levels = self.params.shape.levels
        sibs = [cs.private(v, name=f"path_d_new sibling {j}") for j, v in enumerate(path_d_new)]
        por(cs, levels, functools.partial(poseidon_node, cache=cache), c_bits, leaves[1], group_path(levels, sibs),
            comm_d_new, name="por tree_d_new")
