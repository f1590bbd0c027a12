"""The sub-circuits of SnapDeals' EmptySectorUpdate, row for row as storage-proofs-update writes them.

Each allocates and constrains in bellperson's order and A/B/C orientation, on the PoRep
circuit's shared helpers (bits, packing, insertion, neptune's Poseidon, tree D's SHA-256 node):

* :func:`num_to_bits` — 255 allocated bits of a number, then ``sum 2^i b_i * 1 = x``
  (``allocated_num_to_allocated_bits``);
* :func:`por` — a leaf's inclusion under a root given its index bits (``por_no_challenge_input``:
  per level the insertion and the level's hash, then ``computed_root * 1 = root``; no path input);
* :func:`apex_por` — a partition's apex tree hashed up from its leaves, and the apex root's
  inclusion in tree D along the partition bits;
* :func:`gen_challenge_bits` — the challenge digests ``H_custom(comm_r_new, k · d + j)`` split into
  each challenge's random bits;
* :func:`challenge_high_bits` — the ``h`` high bits of a challenge as a number, ``h`` picked by
  ``h_select``;
* :func:`label_r_new` — ``leaf_r_new = leaf_r_old + leaf_d_new · rho``;
* :func:`select` — one of ``2^n`` numbers by ``n`` bits (storage-proofs-core's ``select``).

    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem()
    >>> bits = [cs.private(v) for v in (1, 0, 1)]
    >>> _ = select(cs, [cs.private(v) for v in range(8)], bits)
    >>> cs.n_constraints                    # 4 + 2 + 1 picks
    7
"""

from __future__ import annotations

from cuzk.circuit.lc import lincomb
from cuzk.circuits.filecoin.insertion import insert, pick
from cuzk.circuits.filecoin.porep.circuit_label import sha_node
from cuzk.circuits.filecoin.porep.circuit_num import NUM_BITS, alloc_bits, bits_lc, enforce_equal
from cuzk.circuits.filecoin.update.challenges import challenges_per_digest, digests_per_partition
from cuzk.circuits.filecoin.update.randomness import gen_randomness_circuit
from cuzk.errors import CircuitError

__all__ = ["num_to_bits", "por", "apex_por", "gen_challenge_bits", "challenge_high_bits", "label_r_new",
           "select", "group_path"]


def num_to_bits(cs, x, name: str = "bits") -> list:
    """``x``'s 255 bits, least significant first, and the row ``sum 2^i b_i * 1 = x``."""
    bits = alloc_bits(cs, x.value, NUM_BITS, name=f"{name}/bit")
    cs.enforce(bits_lc(cs, bits), cs.one, x, name=f"{name}/binary decomp")
    return bits


def group_path(levels, siblings) -> list:
    """A flat sibling list as per-level lists (``arity - 1`` each, leaf level first)."""
    if len(siblings) != sum(a - 1 for a in levels):
        raise CircuitError(f"a path over levels {tuple(levels)} has {sum(a - 1 for a in levels)} siblings, "
                           f"got {len(siblings)}")
    out, k = [], 0
    for a in levels:
        out.append(list(siblings[k:k + a - 1]))
        k += a - 1
    return out


def por(cs, levels, node_hash, bits, leaf, path, root, name: str = "por") -> None:
    """``leaf`` at the index whose bits are ``bits`` (allocated, least significant first, log2(arity)
    per level) under ``root``, through ``path`` (per level its allocated siblings).

    Args:
        levels: each level's arity, leaf first; node_hash: ``node_hash(cs, children, level)``.
    """
    if len(bits) != sum(a.bit_length() - 1 for a in levels) or len(path) != len(levels):
        raise CircuitError(f"{name}: {len(bits)} bits and {len(path)} path levels do not fit levels {tuple(levels)}")
    cur, at = leaf, 0
    for height, (a, siblings) in enumerate(zip(levels, path)):
        w = a.bit_length() - 1
        with cs.namespace(f"{name}/merkle proof insert (height={height})"):
            children = insert(cs, cur, bits[at:at + w], siblings)
        with cs.namespace(f"{name}/merkle proof hash (height={height})"):
            cur = node_hash(cs, children, height)
        at += w
    enforce_equal(cs, cur, root, name=f"{name}/calculated root == provided root")


def apex_por(cs, apex_leafs, partition_bits, partition_path, comm_d, cache=None) -> None:
    """Hash the apex tree over ``apex_leafs`` (SHA-256 ``hash2`` row by row) and prove its root
    sits at the partition's place in tree D (root ``comm_d``) through ``partition_path``."""
    row = list(apex_leafs)
    if len(row) & (len(row) - 1):
        raise CircuitError(f"an apex tree needs a power-of-two leaf count, got {len(row)}")
    level = 0
    while len(row) > 1:
        nxt = []
        for i in range(0, len(row), 2):
            with cs.namespace(f"apex_tree generation hash (tree_row={level}, siblings={i // 2})"):
                nxt.append(sha_node(cs, row[i:i + 2], level, cache))
        row, level = nxt, level + 1
    por(cs, (2,) * len(partition_bits), lambda cs, kids, lv: sha_node(cs, kids, lv, cache), partition_bits,
        row[0], [[s] for s in partition_path], comm_d, name="partition-tree por")


def gen_challenge_bits(cs, comm_r_new, partition, challenge_count: int, bits_per_challenge: int) -> list:
    """Each challenge's random bits (``bits_per_challenge`` allocated bits, least significant first)."""
    per = challenges_per_digest(bits_per_challenge)
    digests = digests_per_partition(challenge_count, bits_per_challenge)
    out: list = []
    for j in range(digests):
        with cs.namespace(f"gen_challenge_bits/digest_{j}"):
            idx_lc = lincomb(((digests, partition), (j, cs.one)), materialize=False)
            index = cs.private(idx_lc.value, name="digest_index")
            cs.enforce(idx_lc, cs.one, index, name=f"digest_index_{j} == k * digests_per_partition + {j}")
            digest = gen_randomness_circuit(cs, comm_r_new, index, name="digest")
            bits = num_to_bits(cs, digest, name="digest_bits")
        take = challenge_count - len(out) if j == digests - 1 else per
        out += [bits[i * bits_per_challenge:(i + 1) * bits_per_challenge] for i in range(take)]
    return out


def challenge_high_bits(cs, c_bits, h_select_bits, hs):
    """``sum_i h_select_i · (top hs[i] bits of c)`` as a new number: per ``h`` the packed high bits
    (``pack_bits``) and their product with its select bit, then the sum (13 rows for six hs)."""
    if len(h_select_bits) != len(hs):
        raise CircuitError(f"{len(hs)} h values need as many select bits, got {len(h_select_bits)}")
    n, terms = len(c_bits), []
    for k, (h, sel) in enumerate(zip(hs, h_select_bits)):
        high = cs.private(bits_lc(cs, c_bits[n - h:]), name=f"c_high (h={h}, k={k})/packing constraint")
        terms.append(cs.mul(high, sel, name=f"c_high_or_zero == c_high * h_select_bit (h={h}, k={k})"))
    total = lincomb([(1, t) for t in terms], materialize=False)
    out = cs.private(total.value, name="c_high_selected")
    cs.enforce(total, cs.one, out, name="c_high_selected == dot(c_highs, h_select_bits)")
    return out


def label_r_new(cs, leaf_r_old, leaf_d_new, rho):
    """``leaf_d_new · rho`` (one product row), then ``(leaf_r_old + product) * 1 = leaf_r_new``."""
    prod = cs.mul(leaf_d_new, rho, name="label_d_new * rho")
    s = lincomb(((1, leaf_r_old), (1, prod)), materialize=False)
    out = cs.private(s.value, name="label_r_new")
    cs.enforce(s, cs.one, out, name="label_r_new == label_r_old + label_d_new * rho")
    return out


def select(cs, items, bits):
    """``items[index]`` for the index whose bits (least significant first) are ``bits``: halving
    from the most significant bit, one pick per surviving pair."""
    if 1 << len(bits) != len(items):
        raise CircuitError(f"select over {len(items)} items needs log2 of that many bits, got {len(bits)}")
    state = list(items)
    for i, bit in enumerate(reversed(bits)):
        half = len(state) // 2
        state = [pick(cs, bit, state[half + j], state[j], name=f"pick {i}, {j}") for j in range(half)]
    return state[0]
