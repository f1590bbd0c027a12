"""Groth16 keys: :class:`VerifyingKey`, :class:`ProvingKey` and the prover's :class:`Density` bitmaps.

Points are affine uint64 Montgomery arrays (DESIGN §3) of the key's curve (``VerifyingKey.curve``,
a ``cuzk.curves`` name; default BLS12-381): G1 ``(2, L)``, G2 ``(2, 2, L)`` with L that curve's Fq
limbs (6 for BLS12-381, 4 for BN254). The proving key follows bellperson's
layout: ``a``, ``b_g1``, ``b_g2`` list inputs then aux variables but omit the variables absent from
the A (resp. B) matrix, so the prover needs density bitmaps to pair assignments with bases.

    >>> import cuzk
    >>> from cuzk.circuits import porep_like          # doctest: +SKIP
"""

from __future__ import annotations

from typing import Literal

import attrs
import numpy as np

from cuzk import curves
from cuzk.errors import KeyMismatchError
from cuzk.groth16 import bellperson_layout
from cuzk.groth16.bellperson_layout import check_bellperson

__all__ = ["VerifyingKey", "ProvingKey", "Density", "Convention", "CONVENTIONS", "check_same_curve", "check_bellperson"]

#: H-query conventions. "bellperson": h = τ^i·Z(τ)/δ, bases for the coefficients of
#: (a·b − c)/Z; "snarkjs": odd-coset Lagrange basis /δ, bases for the evaluations of a·b − c.
Convention = Literal["bellperson", "snarkjs"]
CONVENTIONS = ("bellperson", "snarkjs")


def check_same_curve(what_a: str, curve_a: str, what_b: str, curve_b: str, error=KeyMismatchError) -> None:
    """Raise ``error`` naming both curves when ``curve_a`` and ``curve_b`` differ.

    >>> check_same_curve("the witness", "bn254", "the proving key", "bn128")   # aliases agree
    >>> check_same_curve("the witness", "bn254", "the proving key", "bls12_381")
    Traceback (most recent call last):
    cuzk.errors.KeyMismatchError: the witness is over BN254, the proving key over BLS12-381: the two curves cannot be mixed
    """
    a, b = curves.resolve(curves.canonical(curve_a)), curves.resolve(curves.canonical(curve_b))
    if a.name != b.name:
        raise error(f"{what_a} is over {a.title}, {what_b} over {b.title}: the two curves cannot be mixed")


def _mapped(arr, ndim: int) -> bool:
    """A read-only uint64 memory map (the key cache's files, cuzk/engine/keyfile.py) is kept as
    it is: a copy would pull a many-GiB key into private memory, and no handle can write its
    pages (the file is mapped read-only, and cache files are replaced by rename, never edited)."""
    return (isinstance(arr, np.memmap) and arr.dtype == np.uint64 and arr.ndim == ndim
            and not arr.flags.writeable and arr.flags.c_contiguous)


def _points(ndim_tail: int):
    def convert(arr) -> np.ndarray:
        if _mapped(arr, ndim_tail + 1):
            return arr
        a = np.array(arr, dtype=np.uint64, copy=True)
        if a.ndim == ndim_tail:
            a = a[None]
        a.flags.writeable = False
        return a

    return convert


def _point(arr) -> np.ndarray:
    a = np.array(arr, dtype=np.uint64, copy=True)
    a.flags.writeable = False
    return a


def _bools(arr) -> np.ndarray:
    a = np.array(arr, dtype=np.bool_, copy=True)
    a.flags.writeable = False
    return a


@attrs.frozen(eq=False)
class VerifyingKey:
    """What a verifier needs. ``ic[0]`` belongs to the constant ONE, ``ic[i]`` to public input i.

    Raises:
        KeyMismatchError: a point's shape is not one of ``curve``'s (e.g. BLS12-381 points
            labelled BN254).
    """

    alpha_g1: np.ndarray = attrs.field(converter=_point)  #: α·G1, (2, L)
    beta_g1: np.ndarray = attrs.field(converter=_point)  #: β·G1, (2, L)
    beta_g2: np.ndarray = attrs.field(converter=_point)  #: β·G2, (2, 2, L)
    gamma_g2: np.ndarray = attrs.field(converter=_point)  #: γ·G2, (2, 2, L)
    delta_g1: np.ndarray = attrs.field(converter=_point)  #: δ·G1, (2, L)
    delta_g2: np.ndarray = attrs.field(converter=_point)  #: δ·G2, (2, 2, L)
    ic: np.ndarray = attrs.field(converter=_points(2))  #: (n_public + 1, 2, L)
    curve: str = attrs.field(default=curves.DEFAULT, converter=curves.canonical)  #: the curve's canonical name

    def __attrs_post_init__(self):
        limbs = curves.resolve(self.curve).fq.limbs
        for name in ("alpha_g1", "beta_g1", "delta_g1", "beta_g2", "gamma_g2", "delta_g2", "ic"):
            arr = getattr(self, name)
            want = (2, limbs) if name.endswith("g1") or name == "ic" else (2, 2, limbs)
            if arr.shape[-len(want):] != want or arr.ndim != len(want) + (name == "ic"):
                raise KeyMismatchError(
                    f"verifying key {name} has shape {arr.shape}, a {curves.resolve(self.curve).title} point is {want}"
                )

    @property
    def n_public(self) -> int:
        """Number of public inputs (not counting ONE)."""
        return self.ic.shape[0] - 1

    def to_bytes(self) -> bytes:
        """bellperson ``.vk`` layout (uncompressed points; BLS12-381 only: zcash encodings).

        >>> VerifyingKey.from_bytes(vk.to_bytes()) == vk     # doctest: +SKIP
        True
        """
        return bellperson_layout.vk_to_bytes(self)

    @classmethod
    def from_bytes(cls, data: bytes, *, checked: bool = True) -> "VerifyingKey":
        return cls(**bellperson_layout.read_vk(data, checked=checked))

    def __eq__(self, other) -> bool:
        if not isinstance(other, VerifyingKey):
            return NotImplemented
        return all(np.array_equal(getattr(self, f.name), getattr(other, f.name)) for f in attrs.fields(VerifyingKey))

    __hash__ = None  # mutable-looking arrays inside: keys are compared, not hashed


@attrs.frozen(eq=False)
class Density:
    """Which variables have a base in ``a`` / ``b_*`` (True = present).

    ``a`` holds every input (each has its own QAP row) and the aux variables with ``a_aux``;
    ``b_g1``/``b_g2`` hold the inputs with ``b_input`` and the aux variables with ``b_aux``.
    """

    a_aux: np.ndarray = attrs.field(converter=_bools)
    b_input: np.ndarray = attrs.field(converter=_bools)
    b_aux: np.ndarray = attrs.field(converter=_bools)

    @classmethod
    def from_r1cs(cls, r1cs) -> "Density":
        """Column occupancy of the A and B matrices (nonzero coefficients only)."""
        n_inputs = r1cs.n_public + 1
        used_a = _columns_used(r1cs.a, r1cs.n_vars)
        used_b = _columns_used(r1cs.b, r1cs.n_vars)
        return cls(a_aux=used_a[n_inputs:], b_input=used_b[:n_inputs], b_aux=used_b[n_inputs:])

    @classmethod
    def dense(cls, n_inputs: int, n_aux: int) -> "Density":
        return cls(a_aux=np.ones(n_aux, bool), b_input=np.ones(n_inputs, bool), b_aux=np.ones(n_aux, bool))

    @property
    def n_a(self) -> int:
        return self.b_input.shape[0] + int(self.a_aux.sum())

    @property
    def n_b(self) -> int:
        return int(self.b_input.sum()) + int(self.b_aux.sum())

    def __eq__(self, other) -> bool:
        if not isinstance(other, Density):
            return NotImplemented
        return all(np.array_equal(getattr(self, k), getattr(other, k)) for k in ("a_aux", "b_input", "b_aux"))

    __hash__ = None


def _columns_used(m, n_vars: int) -> np.ndarray:
    nonzero = np.any(m.data != 0, axis=1)
    used = np.zeros(n_vars, dtype=np.bool_)
    used[m.indices[nonzero]] = True
    return used


@attrs.frozen(eq=False)
class ProvingKey:
    """Groth16 proving key in bellperson's layout, plus the metadata the prover checks.

    ``density`` may be None for a key read from a ``.params`` file without its circuit: the
    prover then needs every query dense (or :meth:`with_circuit` to attach the R1CS).
    """

    vk: VerifyingKey
    h: np.ndarray = attrs.field(converter=_points(2))  #: H query, (m−1, 2, 6) bellperson / (m, 2, 6) snarkjs
    l: np.ndarray = attrs.field(converter=_points(2))  #: L query over aux variables, /δ
    a: np.ndarray = attrs.field(converter=_points(2))  #: A query (inputs, then aux with density)
    b_g1: np.ndarray = attrs.field(converter=_points(2))  #: B query in G1
    b_g2: np.ndarray = attrs.field(converter=_points(3))  #: B query in G2
    density: Density | None = None
    convention: str = attrs.field(default="bellperson", validator=attrs.validators.in_(CONVENTIONS))
    digest: str | None = None  #: R1CS digest of the circuit this key is for (None: unknown)
    n_constraints: int | None = None  #: the circuit's own rows (without the per-input rows)

    def __attrs_post_init__(self):
        limbs = curves.resolve(self.curve).fq.limbs
        for name in ("h", "l", "a", "b_g1", "b_g2"):
            arr = getattr(self, name)
            want = (2, 2, limbs) if name == "b_g2" else (2, limbs)
            if arr.shape[0] and arr.shape[1:] != want:
                raise KeyMismatchError(
                    f"proving key query {name} has points of shape {arr.shape[1:]}, a "
                    f"{curves.resolve(self.curve).title} point is {want}"
                )
        if self.density is not None:
            if self.density.n_a != self.a.shape[0] or self.density.n_b != self.b_g1.shape[0]:
                raise KeyMismatchError(
                    f"density bitmaps select {self.density.n_a} A / {self.density.n_b} B bases, "
                    f"key has {self.a.shape[0]} / {self.b_g1.shape[0]}"
                )
            if self.density.a_aux.shape[0] != self.n_aux:
                raise KeyMismatchError(f"density covers {self.density.a_aux.shape[0]} aux variables, key has {self.n_aux}")
        if self.b_g1.shape[0] != self.b_g2.shape[0]:
            raise KeyMismatchError(f"b_g1 has {self.b_g1.shape[0]} points but b_g2 has {self.b_g2.shape[0]}")

    @property
    def curve(self) -> str:
        """The canonical name of the key's curve (its verifying key's)."""
        return self.vk.curve

    @property
    def n_inputs(self) -> int:
        """Inputs including ONE."""
        return self.vk.ic.shape[0]

    @property
    def n_aux(self) -> int:
        return self.l.shape[0]

    @property
    def n_vars(self) -> int:
        return self.n_inputs + self.n_aux

    @property
    def domain_size(self) -> int:
        return self.h.shape[0] + 1 if self.convention == "bellperson" else self.h.shape[0]

    def resolved_density(self) -> Density:
        """The density bitmaps, or the dense ones when every query is full; else an error."""
        if self.density is not None:
            return self.density
        dense = Density.dense(self.n_inputs, self.n_aux)
        if self.a.shape[0] == dense.n_a and self.b_g1.shape[0] == dense.n_b:
            return dense
        raise KeyMismatchError(
            "this proving key omits points at infinity (sparse A/B queries) and carries no density bitmaps; "
            "attach the circuit with pk.with_circuit(synth.r1cs)"
        )

    def with_circuit(self, r1cs) -> "ProvingKey":
        """Attach the circuit's density bitmaps and digest (checking they fit this key)."""
        check_same_curve("the circuit", getattr(r1cs, "curve", curves.DEFAULT), "the proving key", self.curve)
        if r1cs.n_vars != self.n_vars or r1cs.n_public + 1 != self.n_inputs:
            raise KeyMismatchError(
                f"circuit has {r1cs.n_vars} variables ({r1cs.n_public} public), key has {self.n_vars} ({self.n_inputs - 1} public)"
            )
        return attrs.evolve(self, density=Density.from_r1cs(r1cs), digest=r1cs.digest, n_constraints=r1cs.n_constraints)

    def write(self, path) -> None:
        """Write the bellperson ``.params`` layout (uncompressed points)."""
        bellperson_layout.write_params(self, path)

    @classmethod
    def read(cls, path, *, checked: bool = True, r1cs=None, threads=None) -> "ProvingKey":
        """Read a bellperson ``.params`` file; pass ``r1cs`` to attach density and digest.
        ``threads`` check points in parallel (None: every core)."""
        vk, queries = bellperson_layout.read_params(path, checked=checked, threads=threads)
        pk = cls(vk=VerifyingKey(**vk), convention="bellperson", **queries)
        return pk.with_circuit(r1cs) if r1cs is not None else pk
