"""Proof of retrievability: a leaf's inclusion in a Filecoin tree, as rust-fil-proofs' PoR circuit.

:func:`por_challenge` is the whole per-challenge circuit as one function of
``(cs, levels, root, challenge, leaf, siblings)``: it allocates the leaf, per level the index
bits (``(1 - b) * b = 0``) and siblings, inserts the node
(:mod:`~cuzk.circuits.filecoin.insertion`) and hashes with neptune's Poseidon, packs the path bits
into ONE public input (``sum * 1 = input``), and constrains the computed root to ``root``
(``computed * 1 = root``): the PoRep circuit's
:func:`~cuzk.circuits.filecoin.porep.circuit_por.inclusion`, bellperson's rows and orientation.
A level of arity 8 costs 3 + 22 + 505 = 530 constraints, of arity 2 314; the packed input and
the root equality one each, and a public root one more.

:class:`PoR` is the standalone circuit (public inputs: the packed path, then the root unless
``private_root``).

    >>> from cuzk.synth import Synthesizer
    >>> Synthesizer(PoR(shape=(8, 0, 0), leaves=64)).r1cs.n_constraints
    1063
"""

from __future__ import annotations

import random

from cuzk.circuit import Circuit
from cuzk.circuits.filecoin.porep.circuit_por import inclusion, poseidon_node
from cuzk.circuits.filecoin.shapes import TreeShape
from cuzk.circuits.filecoin.tree import build_tree, check_challenge
from cuzk.errors import InputError
from cuzk.field import FR

__all__ = ["PoR", "por_challenge"]


def por_challenge(cs, levels, root, challenge, leaf, siblings, *, public_root: bool = False):
    """One challenged leaf's inclusion proof against ``root`` (see the module docstring).

    Args:
        levels: the arity of each level, leaf first (``TreeShape.levels``).
        root: the root as a variable (FallbackPoSt: the sector's comm_r_last), or its witness,
            then allocated after the path as ``Root::Val`` is.
        challenge: the witness of the leaf index (an input placeholder); its bits become the
            insertion indices and the packed public input.
        leaf: the leaf's witness; siblings: the flat list of sibling witnesses, level by level.
        public_root: also expose ``root`` as a public input (after the packed path).

    Returns the packed path input variable.
    """
    # the PoRep circuit's PoR, which is bellperson's row for row (tests/test_porep_oracle.py)
    return inclusion(cs, levels, poseidon_node, leaf, root, challenge, siblings, public_root=public_root)


class PoR(Circuit):
    """A single PoR against a public (or private) root; see the module docstring.

    Inputs: ``challenge`` (leaf index), ``leaf``, ``siblings`` (flat, level by level), ``root``.

    Raises:
        cuzk.errors.InputError: a shape whose arities are not in {2, 4, 8} (sub/top may be 0),
            or ``leaves`` that do not fill it.
    """

    def __init__(self, shape=(8, 0, 0), leaves: int = 64, private_root: bool = False):
        self.shape = TreeShape.of(shape, leaves)
        self.private_root = bool(private_root)

    def __repr__(self):
        s = self.shape
        return f"PoR(shape={s.arities}, leaves={s.leaves}, private_root={self.private_root})"

    def input_shapes(self) -> dict:
        return {"challenge": (), "leaf": (), "siblings": (self.shape.siblings,), "root": ()}

    def define(self, cs, challenge, leaf, siblings, root):
        por_challenge(cs, self.shape.levels, root, challenge, leaf, siblings, public_root=not self.private_root)

    def inputs_for(self, tree, challenge) -> dict:
        """The circuit inputs proving ``tree``'s leaf at ``challenge``."""
        if tree.shape != self.shape:
            raise InputError(f"the tree's shape {tree.shape} is not this PoR's {self.shape}")
        c = check_challenge(challenge, self.shape.leaves)
        return {"challenge": c, "leaf": tree.leaf(c), "siblings": [s for lv in tree.path(c) for s in lv], "root": tree.root}

    def public_inputs(self, challenge, root) -> list[int]:
        """The verifier's inputs: the packed path (the challenge), then the root unless private."""
        c = check_challenge(challenge, self.shape.leaves)
        return [c] if self.private_root else [c, root]

    def sample_inputs(self, seed: int) -> dict:
        """Inputs for a random tree and challenge, deterministic in ``seed``."""
        rng = random.Random(seed)
        tree = build_tree([rng.randrange(FR.modulus) for _ in range(self.shape.leaves)], self.shape)
        return self.inputs_for(tree, rng.randrange(self.shape.leaves))
