"""neptune's Poseidon circuit (the legacy ``poseidon_hash`` Filecoin's Groth16 parameters were
made for), row by row: its preprocessed constants and its constraint layout.

neptune does not constrain the textbook permutation (:meth:`PoseidonSpec.permute`). It first
rewrites it (the Poseidon paper's appendix B), and the circuit follows the rewritten form:

* *Compressed constants.* Every round constant but the first round's is pushed back through
  the matrix before it (``c · M⁻¹``) and added right after the S-box instead of before the next
  one; the partial rounds' lanes 1..t-1 pass their constants on to the last full round, so each
  partial round adds a single scalar after its S-box.
* *Sparse matrices.* From the last partial round backwards, the round's matrix is factored as
  ``M' · M''`` with ``M''`` sparse (a dense first row and column, identity elsewhere) and
  ``M'`` folded into the round before; the last initial full round mixes with the accumulated
  "pre-sparse" matrix. Vectors are rows here: a round maps state ``x`` to ``x · M``.

The layout: the tag lane's first S-box is a constant. An allocated input goes straight into
the first round's S-box; every later S-box input (a combination after the mix) is first
allocated (``lc * 1 = v``). An S-box is three rows: ``(v + pre)² = l2``, ``l2² = l4`` and
``(v + pre) * l4 = l5 - post`` (``pre``: the first round's constant, ``post``: the
compressed one; either may be absent). The output lane is allocated last (``lc * 1 = out``).
Allocation order equals row order. So the witness holds S-box outputs *plus* their
compressed constants, not the textbook state.

    >>> from cuzk.circuit import ConstraintSystem
    >>> from cuzk.circuit.gadgets.poseidon_spec import poseidon_spec
    >>> spec = poseidon_spec("neptune", 3)
    >>> cs = ConstraintSystem()
    >>> out = neptune_gadget(cs, spec, [spec.tag, cs.private(0), cs.private(1)], spec.output)
    >>> cs.n_constraints, len(neptune_constants(spec).compressed) == spec.r_f * spec.t + spec.r_p
    (311, True)
"""

from __future__ import annotations

import functools

import attrs
import numpy as np

from cuzk.circuit.gadgets.poseidon_sparse import _inverse
from cuzk.circuit.gadgets.poseidon_spec import ALPHA
from cuzk.circuit.lc import LinearCombination, Variable, _int_or_none, lincomb

__all__ = ["NeptuneConstants", "neptune_constants", "neptune_gadget"]


@attrs.frozen
class NeptuneConstants:
    """neptune's preprocessed constants for one spec (Python ints; matrices act on row vectors)."""

    compressed: tuple  # R_F·t + R_P: first round's pre-add t, then the post-adds in use order
    pre_sparse: tuple  # t×t: the last initial full round's matrix
    sparse: tuple  # R_P pairs (w_hat (t), v_rest (t-1)): lane0 = x · w_hat, lane_j = x_j + x_0 · v_rest[j-1]
    partial_inputs: tuple  # per partial round k: its S-box input over [u_0..u_{t-1}, s_0..s_{k-1}]
    partial_final: tuple  # per lane: the state after the partial rounds over [u..., s_0..s_{R_P-1}]


def _row_times(v, m, r) -> list:
    """``v · m`` (neptune's ``apply_matrix``)."""
    return [sum(v[i] * m[i][j] for i in range(len(v))) % r for j in range(len(m[0]))]


def _mat_mul(a, b, r) -> tuple:
    return tuple(tuple(sum(x * y for x, y in zip(row, col)) % r for col in zip(*b)) for row in a)


def _compress(spec, m_inv) -> tuple:
    """neptune's ``compress_round_constants`` with every partial round preprocessed."""
    t, r, half = spec.t, spec.modulus, spec.r_f // 2
    keys = [list(spec.round_constants[i * t:(i + 1) * t]) for i in range(spec.r_f + spec.r_p)]
    out = list(keys[0])
    for i in range(half - 1):  # initial full rounds: the next round's constants, pulled back
        out += _row_times(keys[i + 1], m_inv, r)
    acc, partial = keys[half + spec.r_p], []
    for k in reversed(range(half, half + spec.r_p)):  # partial rounds, last first
        inv = _row_times(acc, m_inv, r)
        partial.append(inv[0])  # the one constant lane 0's S-box output takes
        inv[0] = 0
        acc = [(a + b) % r for a, b in zip(keys[k], inv)]
    out += _row_times(acc, m_inv, r)  # the last initial full round's post-adds
    out += reversed(partial)
    for i in range(1, half):  # final full rounds but the terminal one
        out += _row_times(keys[half + spec.r_p + i], m_inv, r)
    return tuple(out)


def _factor(spec) -> tuple:
    """neptune's ``factor_to_sparse_matrixes``: (pre_sparse, R_P (w_hat, v_rest) pairs)."""
    r, m = spec.modulus, spec.mds
    cur, sparse = m, []
    for _ in range(spec.r_p):
        hat_inv = _inverse([row[1:] for row in cur[1:]], r)
        w = [row[0] for row in cur[1:]]
        w_hat = _row_times(w, hat_inv, r)
        sparse.append(((cur[0][0], *w_hat), tuple(cur[0][1:])))
        prime = ((1,) + (0,) * (spec.t - 1),) + tuple((0, *row[1:]) for row in cur[1:])
        cur = _mat_mul(m, prime, r)
    return cur, tuple(reversed(sparse))


def _partial_maps(spec, pre_sparse, sparse) -> tuple:
    """The partial rounds as linear maps over the basis ``[u_0..u_{t-1}, s_0..s_{R_P-1}]`` (u: the
    last initial full round's S-box outputs, s_k: partial round k's), so each S-box input and
    final lane is built in O(t + R_P) rather than by re-mixing growing combinations every round.
    Linear maps of the same variables merge to the same row terms as neptune's sums do."""
    t, r = spec.t, spec.modulus
    lanes = np.zeros((t, t + spec.r_p), dtype=object)
    lanes[:, :t] = np.array(pre_sparse, dtype=object).T  # lane j = sum_i u_i · P[i][j]
    inputs = []
    for k, (w_hat, v_rest) in enumerate(sparse):
        inputs.append(tuple(int(c) for c in lanes[0, :t + k]))
        lanes[0, :] = 0
        lanes[0, t + k] = 1
        first = np.array(w_hat, dtype=object).dot(lanes) % r
        lanes[1:] = (lanes[1:] + np.outer(np.array(v_rest, dtype=object), lanes[0])) % r
        lanes[0] = first
    return tuple(inputs), tuple(tuple(int(c) for c in row) for row in lanes)


@functools.cache
def neptune_constants(spec) -> NeptuneConstants:
    """neptune's preprocessed constants for ``spec`` (computed once per spec)."""
    m_inv = _inverse(spec.mds, spec.modulus)
    pre_sparse, sparse = _factor(spec)
    inputs, final = _partial_maps(spec, pre_sparse, sparse)
    return NeptuneConstants(_compress(spec, m_inv), pre_sparse, sparse, inputs, final)


def _sbox(cs, v, pre, post, name) -> Variable:
    """``(v + pre)^5 + post`` in neptune's three rows (``pre``/``post`` None when absent)."""
    x = v if pre is None else lincomb(((1, v), (pre, cs.one)), materialize=False)
    l2 = cs.mul(x, x, name=f"{name} l^2")
    l4 = cs.mul(l2, l2, name=f"{name} l^4")
    if post is None:
        return cs.mul(x, l4, name=f"{name} l^5")
    l5 = cs.private(x.value * l4.value + post)
    cs.enforce(x, l4, lincomb(((1, l5), (-post, cs.one)), materialize=False), name=f"{name} l^5")
    return l5


def _mix(cs, values, matrix) -> list:
    """``values · matrix`` as unmaterialized combinations (ints are constant lanes)."""
    lcs = [x if isinstance(x, LinearCombination) else cs.constant(x) for x in values]
    cols = zip(*matrix)
    return [lincomb(zip(col, lcs), materialize=False) for col in cols]


def _affine(cs, basis, row) -> LinearCombination:
    return LinearCombination(cs, {k: c for k, c in zip(basis, row) if c})


def _full_round(cs, lanes, post, rnd) -> list:
    out = []
    for i, lane in enumerate(lanes):
        v = cs.private(lane, name=f"round {rnd} s-box {i} input")
        out.append(_sbox(cs, v, None, None if post is None else post[i], f"round {rnd} s-box {i}"))
    return out


def neptune_gadget(cs, spec, state, output: int) -> Variable:
    """Element ``output`` of neptune's permutation of ``state`` (t ints or combinations; lane 0
    is the tag) in neptune's layout (the module docstring); returns the allocated output.

    A constant lane's first S-box folds into a constant, as neptune does for the tag; a lane
    that is a combination but not a variable is allocated first.
    """
    t, r, half = spec.t, spec.modulus, spec.r_f // 2
    nc = neptune_constants(spec)
    rc, pos = nc.compressed, 2 * t
    values = []
    for i, x in enumerate(state):
        pre, post = rc[i], rc[t + i]
        c = _int_or_none(x)
        if c is not None:
            values.append((pow((c + pre) % r, ALPHA, r) + post) % r)
            continue
        x = cs._lc(x)
        v = x if isinstance(x, Variable) and x.index != 0 else cs.private(x, name=f"input {i}")
        values.append(_sbox(cs, v, pre, post, f"round 0 s-box {i}"))
    lanes = _mix(cs, values, spec.mds)  # R_F = 8: the pre-sparse matrix comes later
    for rnd in range(1, half):
        u = _full_round(cs, lanes, rc[pos:pos + t], rnd)
        pos += t
        lanes = _mix(cs, u, nc.pre_sparse if rnd == half - 1 else spec.mds)
    basis = [v.index for v in u]
    for k, row in enumerate(nc.partial_inputs):
        name = f"round {half + k} s-box 0"
        v = cs.private(_affine(cs, basis, row), name=f"{name} input")
        basis.append(_sbox(cs, v, None, rc[pos], name).index)
        pos += 1
    lanes = [_affine(cs, basis, row) for row in nc.partial_final]
    last = spec.r_f + spec.r_p - 1
    for rnd in range(half + spec.r_p, last + 1):
        u = _full_round(cs, lanes, None if rnd == last else rc[pos:pos + t], rnd)
        pos += t
        lanes = _mix(cs, u, spec.mds)
    return cs.private(lanes[output], name="output")
