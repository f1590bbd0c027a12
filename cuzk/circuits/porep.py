"""``porep_like``: a storage-proof-shaped demo circuit whose size scales from ~2^10 to ~2^20.

Statement (public: ``root``, ``comm``, ``challenges``; private: ``replica_id``, ``data``,
``paths``): ``comm = H(replica_id, root)``, and for every challenge ``i`` the leaf
``H(replica_id, data[i])`` sits at position ``challenges[i]`` of the Poseidon Merkle tree
with root ``root`` (``paths[i]`` lists the siblings). Each challenge index is range-checked
to ``[0, leaves)`` by its bit decomposition. ``H`` is width-3 Poseidon; tree nodes use
width 3 (arity 2) or width 9 (arity 8).

Cost: about ``challenges * (depth + 1) * 270`` constraints for arity 2 (``depth = log2
leaves``), so ``porep_like(leaves=2**10, challenges=6)`` is ~2^14 and ``challenges=89`` ~2^18.

:meth:`PorepLike.sample_inputs` makes a fresh valid witness from a seed without building the
tree: nodes off the challenged paths are random field elements (a Merkle proof only sees
siblings), so a sample costs ``O(challenges * depth)`` native hashes.

    >>> c = porep_like(leaves=8, challenges=2)
    >>> inp = c.sample_inputs(seed=1)
    >>> sorted(inp), len(inp["paths"][0])
    (['challenges', 'comm', 'data', 'paths', 'replica_id', 'root'], 3)
"""

from __future__ import annotations

import random

from cuzk.circuit import Circuit
from cuzk.circuit.gadgets import merkle_root, poseidon, poseidon_hash, to_bits
from cuzk.circuit.gadgets.merkle import ARITY_BITS
from cuzk.errors import CircuitError
from cuzk.field import FR

__all__ = ["PorepLike", "porep_like"]


class PorepLike(Circuit):
    """k Merkle inclusion proofs against a public root plus a public commitment (see module doc)."""

    def __init__(self, leaves: int, challenges: int, arity: int = 2):
        if arity not in ARITY_BITS:
            raise CircuitError(f"arity must be 2 or 8, got {arity!r}")
        depth, n = 0, 1
        while n < leaves:
            n *= arity
            depth += 1
        if not isinstance(leaves, int) or leaves < arity or n != leaves:
            raise CircuitError(f"leaves must be a power of {arity} (>= {arity}), got {leaves!r}")
        if not isinstance(challenges, int) or challenges < 1:
            raise CircuitError(f"challenges must be a positive int, got {challenges!r}")
        self.leaves, self.challenges, self.arity, self.depth = leaves, challenges, arity, depth

    def __repr__(self):
        return f"porep_like(leaves={self.leaves}, challenges={self.challenges}, arity={self.arity})"

    def input_shapes(self) -> dict:
        k = self.challenges
        return {
            "root": (), "comm": (), "challenges": (k,),
            "replica_id": (), "data": (k,), "paths": (k, self.depth, self.arity - 1),
        }

    def define(self, cs, root, comm, challenges, replica_id, data, paths):
        root, comm = cs.public(root, name="root"), cs.public(comm, name="comm")
        idx = [cs.public(c) for c in challenges]
        rid = cs.private(replica_id)
        cs.assert_equal(poseidon(cs, [rid, root], name="comm_hash"), comm, name="comm")
        nbits = ARITY_BITS[self.arity] * self.depth
        for i in range(self.challenges):
            with cs.namespace(f"challenge{i}"):
                bits = to_bits(cs, idx[i], nbits)
                leaf = poseidon(cs, [rid, cs.private(data[i])], name="leaf")
                path = [[cs.private(s) for s in level] for level in paths[i]]
                cs.assert_equal(merkle_root(cs, leaf, path, bits, self.arity), root, name="root")

    def public_inputs(self, inputs: dict) -> list[int]:
        """The public inputs a verifier passes for ``inputs``, in allocation order: root, comm, challenges.

        >>> c = porep_like(leaves=8, challenges=2); i = c.sample_inputs(seed=3)
        >>> c.public_inputs(i) == [i["root"], i["comm"], *i["challenges"]]
        True
        """
        return [inputs["root"], inputs["comm"], *inputs["challenges"]]

    def sample_inputs(self, seed: int) -> dict:
        """A valid input dict, deterministic in ``seed`` (distinct seeds give distinct witnesses)."""
        rng = random.Random(seed)
        r = FR.modulus
        a, w = self.arity, ARITY_BITS[self.arity]
        rid = rng.randrange(r)
        chal = [rng.randrange(self.leaves) for _ in range(self.challenges)]
        by_leaf = {}  # a leaf challenged twice holds the same data both times
        data = [by_leaf.setdefault(c, rng.randrange(r)) for c in chal]
        known = {}  # (level, position) -> node value on some challenged path
        for c, d in zip(chal, data):
            known[(0, c)] = poseidon_hash([rid, d])
        width = self.leaves
        for level in range(self.depth):
            parents = sorted({pos // a for (lv, pos) in known if lv == level})
            for p in parents:
                kids = [known.get((level, p * a + j)) for j in range(a)]
                kids = [rng.randrange(r) if v is None else v for v in kids]
                for j, v in enumerate(kids):
                    known[(level, p * a + j)] = v
                known[(level + 1, p)] = poseidon_hash(kids)
            width //= a
        root = known[(self.depth, 0)]
        paths = []
        for c in chal:
            levels = []
            for level in range(self.depth):
                pos = c >> (w * level)
                base = pos - pos % a
                levels.append([known[(level, base + j)] for j in range(a) if base + j != pos])
            paths.append(levels)
        return {
            "root": root, "comm": poseidon_hash([rid, root]), "challenges": chal,
            "replica_id": rid, "data": data, "paths": paths,
        }


def porep_like(leaves: int = 1024, challenges: int = 4, arity: int = 2) -> PorepLike:
    """The demo storage-proof circuit; see the module docstring for sizes.

    >>> porep_like(leaves=64, challenges=1, arity=8).depth
    2
    """
    return PorepLike(leaves, challenges, arity)
