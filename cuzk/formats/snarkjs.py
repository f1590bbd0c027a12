"""snarkjs/circom binary files: ``.zkey`` (Groth16 proving key), ``.wtns`` (witness), ``.r1cs``.

``read_r1cs`` is :func:`cuzk.synth.read_r1cs` (synth owns the one ``.r1cs`` reader, since it
may not import this package); the iden3 container both use is :mod:`cuzk.synth.binfile`.

A ``.zkey`` becomes a :class:`SnarkjsProvingKey` — a :class:`cuzk.groth16.ProvingKey` with
``convention="snarkjs"`` (its H query is the odd-coset Lagrange basis, see
:mod:`cuzk.groth16.r1cs_to_qap`) that also keeps the zkey's A and B coefficient matrices, so a
``.wtns`` turns into the :class:`cuzk.synth.Synthesized` the prover takes::

    >>> pk = read_zkey("c.zkey")                          # doctest: +SKIP
    >>> w = pk.witness(read_wtns("w.wtns"))   # z, a = A·z, b = B·z, c = a·b   # doctest: +SKIP
    >>> proof = cuzk.GpuProver(pk).prove(w)               # doctest: +SKIP

The curve (BLS12-381 or bn128 = BN254) is the one whose primes the file's header holds; keys,
witnesses and ``Synthesized`` carry it, and a witness of one curve for a key of the other
raises :class:`cuzk.errors.UnsupportedCurveError` naming both.

Encodings (checked against files written by snarkjs 0.7): points are affine, little-endian,
Montgomery form with R = 2^(8·n8q) (2^384 for BLS12-381, 2^256 for BN254) — the same limbs as
cuzk's Fq Montgomery form, so they are used as they are; G2 is x.c0‖x.c1‖y.c0‖y.c1; all-zero
bytes is the point at infinity (cuzk's convention too). Section 4 stores each coefficient as
coeff·R² mod r with R = 2^256, so ``Fr.from_mont`` of the stored value is cuzk's Montgomery form
coeff·R. ``.wtns`` values are plain little-endian integers.
"""

from __future__ import annotations

import hashlib
import os
import struct

import attrs
import numpy as np

from cuzk import curves
from cuzk.curve.validate import first_off_curve, first_outside_subgroup, resolve_threads
from cuzk.errors import InputError, KeyMismatchError, SnarkjsFormatError
from cuzk.field.conversions import is_canonical
from cuzk.groth16.keys import Density, ProvingKey, VerifyingKey, check_same_curve
from cuzk.synth.binfile import Cursor, check_prime, read_container, write_container
from cuzk.synth.kernels import for_curve
from cuzk.synth.r1cs import R1CS, CsrMatrix
from cuzk.synth.r1cs import read_r1cs  # the one .r1cs reader; re-exported as part of this module's API
from cuzk.synth.synthesizer import Synthesized

__all__ = ["SnarkjsProvingKey", "read_zkey", "read_wtns", "wtns_curve", "write_wtns", "read_r1cs"]

_COEF = np.dtype([("m", "<u4"), ("c", "<u4"), ("s", "<u4"), ("v", "<u8", (4,))])  # 44 bytes, packed (n8r = 32)


def _n8(curve: str) -> tuple[int, int]:
    """Bytes per Fr and per Fq element in snarkjs files of ``curve``: 8 x the limbs."""
    spec = curves.resolve(curve)
    return 8 * spec.fr.limbs, 8 * spec.fq.limbs


@attrs.frozen(eq=False)
class SnarkjsProvingKey(ProvingKey):
    """A proving key read from a ``.zkey``, plus the zkey's A and B matrices (user rows).

    The zkey's extra A rows ``n_constraints + s`` (one per input, coefficient 1) are exactly the
    per-input rows cuzk's prover appends, so they are dropped here and re-added when proving.
    """

    matrix_a: CsrMatrix | None = None  #: A coefficients, ``n_constraints`` rows, Montgomery
    matrix_b: CsrMatrix | None = None  #: B coefficients
    r1cs: R1CS | None = None  #: the circuit's ``.r1cs`` when given: adds C, so bad witnesses fail the row check

    def witness(self, wtns) -> Synthesized:
        """The :class:`~cuzk.synth.Synthesized` for an assignment from a ``.wtns`` file.

        Args:
            wtns: a path to a ``.wtns`` file (of the key's curve), or the ``(n_vars, 4)``
                Montgomery array :func:`read_wtns` returns.

        Returns:
            ``Synthesized`` with ``a = A·z``, ``b = B·z`` and ``c = C·z`` when the ``.r1cs``
            was given, else ``c = a·b`` as snarkjs computes it (an unsatisfied witness then
            fails the prover's verify-before-return instead of the row check).

        Raises:
            KeyMismatchError: the witness has another number of values than the key has wires.
            UnsupportedCurveError: the ``.wtns`` is over the other curve's field (both named).
            InputError: wire 0 is not 1.

        >>> w = pk.witness("w.wtns"); w.public_inputs          # doctest: +SKIP
        [29362279647849827510584275082955369447768957771862249735830725162496493940369, 7]
        """
        cv = curves.get(self.curve)
        Fr = cv.Fr  # noqa: N806 (the field's name)
        z = read_wtns(wtns, curve=self.curve) if isinstance(wtns, (str, os.PathLike)) else np.asarray(wtns)
        if z.ndim != 2 or z.shape[1] != Fr.limbs or z.dtype != np.uint64:
            raise InputError(f"the witness must be an (n, {Fr.limbs}) uint64 Montgomery array, got {z.shape} {z.dtype}")
        if z.shape[0] != self.n_vars:
            raise KeyMismatchError(
                f"the .wtns has {z.shape[0]} values but the zkey has {self.n_vars} wires (witness of another circuit?)"
            )
        if not Fr.eq(z[:1], Fr.one(1))[0]:
            raise InputError("wire 0 of the witness must be 1 (the constant ONE)")
        z = np.ascontiguousarray(z)
        ma, mb = self.matrix_a, self.matrix_b
        if ma is None or mb is None:
            raise KeyMismatchError("this key carries no A/B coefficient matrices (build it with read_zkey)")
        k = for_curve(cv)
        a = k.csr_matvec(ma.indptr, ma.indices, ma.data, z)
        b = k.csr_matvec(mb.indptr, mb.indices, mb.data, z)
        if self.r1cs is not None:
            mc = self.r1cs.c
            c = k.csr_matvec(mc.indptr, mc.indices, mc.data, z)
        else:
            c = Fr.mul(a, b)
        n_pub = self.n_inputs - 1
        return Synthesized(z=z, a=a, b=b, c=c, public_inputs=Fr.to_ints(z[1:1 + n_pub]) if n_pub else [],
                           digest=self.digest, curve=self.curve)


def _points(body: memoryview, n: int, degree: int, what: str, where: str, checked: bool, threads: int,
            curve: str) -> np.ndarray:
    """``n`` affine points of ``curve`` from little-endian Montgomery bytes (limbs used as they
    are); when ``checked``, the first point off the curve is reported, else the first outside
    the subgroup."""
    cv = curves.get(curve)
    limbs = cv.spec.fq.limbs
    size = n * 2 * degree * 8 * limbs
    if len(body) != size:
        raise SnarkjsFormatError(f"{where}: {what} holds {len(body)} bytes, expected {n} points = {size} bytes")
    shape = (n, 2, limbs) if degree == 1 else (n, 2, 2, limbs)
    pts = np.frombuffer(body, dtype="<u8").astype(np.uint64).reshape(shape)
    ok = is_canonical(pts.reshape(-1, limbs), cv.spec.fq)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0]) // (2 * degree)
        raise SnarkjsFormatError(f"{where}: {what} point {i} has a coordinate >= q")
    group = cv.G1 if degree == 1 else cv.G2
    if checked and n:
        bad = first_off_curve(group, pts, threads=threads)
        if bad is not None:
            raise SnarkjsFormatError(f"{where}: {what} point {bad} is not on the curve")
        bad = first_outside_subgroup(group, pts, threads=threads)
        if bad is not None:
            raise SnarkjsFormatError(f"{where}: {what} point {bad} is not in the prime-order subgroup")
    return pts


def _header(sec: memoryview, where: str) -> dict:
    cur = Cursor(sec, where, "header (2)")
    n8q = cur.u32()
    q = cur.uint(n8q)
    curve = check_prime(q, "q", where)  # the curve whose base field this is
    n8r = cur.u32()
    r = cur.uint(n8r)
    check_prime(r, "r", where, curve=curve)
    want_r, want_q = _n8(curve)
    if (n8q, n8r) != (want_q, want_r):
        raise SnarkjsFormatError(f"{where}: field sizes n8q={n8q}, n8r={n8r}, expected {want_q}, {want_r}")
    h = {"curve": curve, "n_vars": cur.u32(), "n_public": cur.u32(), "domain_size": cur.u32()}
    for name, degree in (("alpha_g1", 1), ("beta_g1", 1), ("beta_g2", 2), ("gamma_g2", 2), ("delta_g1", 1), ("delta_g2", 2)):
        h[name] = cur.take(2 * degree * want_q)
    cur.done()
    m = h["domain_size"]
    adicity = curves.resolve(curve).fr.two_adicity
    if m < 2 or m & (m - 1) or m.bit_length() - 1 >= adicity:
        raise SnarkjsFormatError(f"{where}: domain size {m} is not a power of two in [2, 2^{adicity - 1}]")
    if h["n_public"] + 1 > h["n_vars"]:
        raise SnarkjsFormatError(f"{where}: {h['n_public']} public inputs but only {h['n_vars']} wires")
    return h


def _coefficients(sec: memoryview, h: dict, where: str):
    """Section 4 → CSR A and B over the user rows, and the number of user rows."""
    if len(sec) < 4:
        raise SnarkjsFormatError(f"{where}: coefficient section (4) is truncated")
    (count,) = struct.unpack_from("<I", sec)
    if len(sec) != 4 + count * _COEF.itemsize:
        raise SnarkjsFormatError(
            f"{where}: coefficient section (4) announces {count} entries = {4 + count * _COEF.itemsize} bytes, holds {len(sec)}"
        )
    t = np.frombuffer(sec, dtype=_COEF, offset=4, count=count)
    n_vars, n_inputs = h["n_vars"], h["n_public"] + 1
    if count and (t["m"].max() > 1 or t["s"].max() >= n_vars):
        i = int(np.flatnonzero((t["m"] > 1) | (t["s"] >= n_vars))[0])
        raise SnarkjsFormatError(f"{where}: coefficient {i} names matrix {t['m'][i]} / wire {t['s'][i]} (matrix must be 0 or 1, wire < {n_vars})")
    Fr = curves.get(h["curve"]).Fr  # noqa: N806 (the field's name)
    vals = np.ascontiguousarray(t["v"]).astype(np.uint64)
    ok = is_canonical(vals, Fr.params)
    if not ok.all():
        raise SnarkjsFormatError(f"{where}: coefficient {int(np.flatnonzero(~ok)[0])} is not reduced mod r")
    coeffs = Fr.from_mont(vals)  # stored coeff·R² → Montgomery coeff·R
    in_a = t["m"] == 0
    rows_a = t["c"][in_a].astype(np.int64)
    if not rows_a.size:
        raise SnarkjsFormatError(f"{where}: no A coefficients (the per-input rows are missing)")
    n_c = int(rows_a.max()) - (n_inputs - 1)
    # the input rows n_c + s hold exactly (wire s, coefficient 1) for s < n_inputs
    extra = rows_a >= n_c
    got = sorted(zip((rows_a[extra] - n_c).tolist(), t["s"][in_a][extra].tolist(),
                     Fr.to_ints(coeffs[in_a][extra]) if extra.any() else []))
    if n_c < 0 or got != [(s, s, 1) for s in range(n_inputs)]:
        raise SnarkjsFormatError(f"{where}: the per-input A rows (one per public input, coefficient 1) are missing or malformed")
    rows_b = t["c"][~in_a].astype(np.int64)
    if rows_b.size and rows_b.max() >= n_c:
        raise SnarkjsFormatError(f"{where}: a B coefficient lies in row {int(rows_b.max())}, past the {n_c} constraints")
    if n_c + n_inputs > h["domain_size"]:
        raise SnarkjsFormatError(f"{where}: {n_c} constraints + {n_inputs} inputs exceed the domain of {h['domain_size']}")
    keep = in_a.copy()
    keep[np.flatnonzero(in_a)[extra]] = False
    mats = []
    for sel in (keep, ~in_a):
        rows, cols, data = t["c"][sel].astype(np.int64), t["s"][sel].astype(np.int32), coeffs[sel]
        order = np.lexsort((cols, rows))
        indptr = np.zeros(n_c + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n_c), out=indptr[1:])
        mats.append(CsrMatrix(indptr=indptr, indices=np.ascontiguousarray(cols[order]),
                              data=np.ascontiguousarray(data[order])))
    return mats[0], mats[1], n_c


def _same_matrix(m1: CsrMatrix, m2: CsrMatrix) -> int:
    """-1 when equal as sets of (row, column, coefficient), else the first differing row."""
    def canon(m):
        rows = np.repeat(np.arange(m.n_rows), np.diff(m.indptr))
        keep = np.any(m.data != 0, axis=1)  # circom writes no zero terms; be lenient anyway
        rec = np.zeros(int(keep.sum()), dtype=[("r", "<i8"), ("c", "<i8"), ("v", "<u8", (m.data.shape[1],))])
        rec["r"], rec["c"], rec["v"] = rows[keep], m.indices[keep], m.data[keep]
        return np.sort(rec, order=("r", "c"))

    a, b = canon(m1), canon(m2)
    if a.shape == b.shape and np.array_equal(a["r"], b["r"]) and np.array_equal(a["c"], b["c"]) and np.array_equal(a["v"], b["v"]):
        return -1
    n = min(a.shape[0], b.shape[0])
    diff = np.flatnonzero((a["r"][:n] != b["r"][:n]) | (a["c"][:n] != b["c"][:n]) | np.any(a["v"][:n] != b["v"][:n], axis=1))
    return int(a["r"][diff[0]]) if diff.size else int(a["r"][n - 1] if n else 0)


def read_zkey(path, *, r1cs=None, checked: bool = True, threads=None) -> SnarkjsProvingKey:
    """Read a snarkjs Groth16 ``.zkey`` (BLS12-381 or bn128) as a proving key with
    ``convention="snarkjs"``; its curve is the one of the header's primes (``pk.curve``).

    Points at infinity (common in the A/B queries) are dropped and the key's :class:`Density`
    records which wires keep a base, as for bellperson keys.

    Args:
        path: the ``.zkey`` file.
        r1cs: the circuit's :class:`~cuzk.synth.R1CS` (or a ``.r1cs`` path): checked against the
            zkey's matrices; witnesses then get ``c = C·z`` and the digest is the R1CS digest.
        checked: validate every point (on the curve, in the subgroup); False for trusted files.
        threads: threads checking points (None: every core); errors name the first bad point
            whatever the thread count.

    Raises:
        SnarkjsFormatError: bad magic/version, truncated or missing section, counts that do not
            match, a non-Groth16 zkey, an invalid point.
        UnsupportedCurveError: the header's two primes belong to different curves.
        KeyMismatchError: ``r1cs`` is not the zkey's circuit (or is over the other curve).
        InputError: ``threads`` is not a positive integer or None.

    >>> pk = read_zkey("chain.zkey"); pk.convention, pk.domain_size     # doctest: +SKIP
    ('snarkjs', 1024)
    """
    where = os.fspath(path)
    threads = resolve_threads(threads)
    # the header is checked before the rest is read; section 10 (MPC contributions) is skipped
    sec = read_container(path, b"zkey", (1,), where, keep=range(1, 10))
    names = {1: "protocol", 2: "header", 3: "IC", 4: "coefficients", 5: "A", 6: "B1", 7: "B2", 8: "C", 9: "H"}
    for sid, name in names.items():
        if sid not in sec:
            raise SnarkjsFormatError(f"{where}: missing section {sid} ({name})")
    if len(sec[1]) != 4:
        raise SnarkjsFormatError(f"{where}: protocol section (1) holds {len(sec[1])} bytes, expected 4")
    (protocol,) = struct.unpack_from("<I", sec[1])
    if protocol != 1:
        kind = {2: "PLONK", 10: "FFLONK"}.get(protocol, f"id {protocol}")
        raise SnarkjsFormatError(f"{where}: the zkey is for protocol {kind}; only Groth16 (1) is supported")
    h = _header(sec[2], where)
    n_vars, n_pub, m, curve = h["n_vars"], h["n_public"], h["domain_size"], h["curve"]
    n_in = n_pub + 1

    def pt(buf, degree, what):
        return _points(buf, 1, degree, what, where, checked, threads, curve)[0]

    vk = VerifyingKey(
        alpha_g1=pt(h["alpha_g1"], 1, "alpha_1"), beta_g1=pt(h["beta_g1"], 1, "beta_1"),
        beta_g2=pt(h["beta_g2"], 2, "beta_2"), gamma_g2=pt(h["gamma_g2"], 2, "gamma_2"),
        delta_g1=pt(h["delta_g1"], 1, "delta_1"), delta_g2=pt(h["delta_g2"], 2, "delta_2"),
        ic=_points(sec[3], n_in, 1, "IC section (3)", where, checked, threads, curve), curve=curve,
    )
    a = _points(sec[5], n_vars, 1, "A section (5)", where, checked, threads, curve)
    b1 = _points(sec[6], n_vars, 1, "B1 section (6)", where, checked, threads, curve)
    b2 = _points(sec[7], n_vars, 2, "B2 section (7)", where, checked, threads, curve)
    l = _points(sec[8], n_vars - n_in, 1, "C section (8)", where, checked, threads, curve)
    hq = _points(sec[9], m, 1, "H section (9)", where, checked, threads, curve)
    # only now is the header's domain size backed by m points of bytes: the CSR row arrays are
    # sized by it, so a corrupt header read first would allocate up to 16 GiB
    mat_a, mat_b, n_c = _coefficients(sec[4], h, where)
    nz_a = a.reshape(n_vars, -1).any(axis=1)
    nz_b = b1.reshape(n_vars, -1).any(axis=1) | b2.reshape(n_vars, -1).any(axis=1)
    dens = Density(a_aux=nz_a[n_in:], b_input=nz_b[:n_in], b_aux=nz_b[n_in:])
    keep_a = np.concatenate([np.ones(n_in, bool), nz_a[n_in:]])  # every input keeps its A base
    digest = hashlib.sha256(b"cuzk-zkey-v1" + bytes(sec[2]) + bytes(sec[4])).hexdigest()
    pk = SnarkjsProvingKey(vk=vk, h=hq, l=l, a=a[keep_a], b_g1=b1[nz_b], b_g2=b2[nz_b], density=dens,
                           convention="snarkjs", digest=digest, n_constraints=n_c, matrix_a=mat_a, matrix_b=mat_b)
    if r1cs is not None:
        pk = _attach_r1cs(pk, read_r1cs(r1cs) if isinstance(r1cs, (str, os.PathLike)) else r1cs, where)
    return pk


def _attach_r1cs(pk: SnarkjsProvingKey, r1cs: R1CS, where: str) -> SnarkjsProvingKey:
    check_same_curve("the .r1cs", r1cs.curve, where, pk.curve)
    if (r1cs.n_vars, r1cs.n_public) != (pk.n_vars, pk.n_inputs - 1):
        raise KeyMismatchError(
            f"the .r1cs has {r1cs.n_vars} wires / {r1cs.n_public} public, {where} has {pk.n_vars} / {pk.n_inputs - 1}"
        )
    if r1cs.n_constraints != pk.n_constraints:
        raise KeyMismatchError(f"the .r1cs has {r1cs.n_constraints} constraints, {where} has {pk.n_constraints}")
    for label, mine, theirs in (("A", pk.matrix_a, r1cs.a), ("B", pk.matrix_b, r1cs.b)):
        row = _same_matrix(mine, theirs)
        if row >= 0:
            raise KeyMismatchError(f"the .r1cs is not {where}'s circuit: matrix {label} differs near constraint {row}")
    return attrs.evolve(pk, r1cs=r1cs, digest=r1cs.digest)


def wtns_curve(path) -> str:
    """The curve of a ``.wtns`` file: the one whose scalar field has the header's prime.

    Raises:
        SnarkjsFormatError: not a ``.wtns`` file, or a prime of neither curve.
    """
    return _read_wtns(path, None)[1]


def read_wtns(path, *, curve: str | None = None) -> np.ndarray:
    """Read a ``.wtns`` (v2) witness: ``(n_witness, 4)`` uint64 Montgomery Fr in wire order.

    Args:
        curve: the curve the witness must be over (a key's); None accepts either curve's
            (:func:`wtns_curve` says which).

    Raises:
        SnarkjsFormatError: bad magic/version, truncated or missing section, a value count that
            does not match the header, a value >= r.
        UnsupportedCurveError: the witness is over another curve's field than ``curve`` (both named).

    >>> z = read_wtns("w.wtns"); Fr.to_ints(z[:1])          # doctest: +SKIP
    [1]
    """
    return _read_wtns(path, curve)[0]


def _read_wtns(path, curve) -> tuple[np.ndarray, str]:
    where = os.fspath(path)
    sec = read_container(path, b"wtns", (2,), where)  # the header is checked before the rest is read
    for sid, name in ((1, "header"), (2, "values")):
        if sid not in sec:
            raise SnarkjsFormatError(f"{where}: missing section {sid} ({name})")
    cur = Cursor(sec[1], where, "header (1)")
    n8 = cur.u32()
    curve = check_prime(cur.uint(n8), "r", where, curve=curve)
    Fr = curves.get(curve).Fr  # noqa: N806 (the field's name)
    n = cur.u32()
    cur.done()
    n8r = 8 * Fr.limbs
    if n8 != n8r:  # the prime can be padded to any width; the values must be 32-byte Fr elements
        raise SnarkjsFormatError(f"{where}: field elements of {n8} bytes, expected {n8r}")
    if len(sec[2]) != n * n8:
        raise SnarkjsFormatError(f"{where}: header announces {n} values = {n * n8} bytes, the values section holds {len(sec[2])}")
    limbs = np.frombuffer(sec[2], dtype="<u8").astype(np.uint64).reshape(n, Fr.limbs)
    ok = is_canonical(limbs, Fr.params)
    if not ok.all():
        raise SnarkjsFormatError(f"{where}: witness value {int(np.flatnonzero(~ok)[0])} is not reduced mod r")
    return Fr.to_mont(limbs), curve


def write_wtns(path, z, *, curve: str | None = None) -> None:
    """Write a ``.wtns`` v2 file of ``curve`` (default BLS12-381) from a Montgomery ``(n, 4)``
    array or a list of ints (atomic).

    >>> write_wtns("w.wtns", [1, 35, 3, 9, 27], curve="bn128")          # doctest: +SKIP
    """
    Fr = curves.get(curves.canonical(curve)).Fr  # noqa: N806 (the field's name)
    n8r = 8 * Fr.limbs
    arr = Fr.from_mont(np.asarray(z, dtype=np.uint64)) if isinstance(z, np.ndarray) else Fr.ints_to_limbs(list(z))
    header = struct.pack("<I", n8r) + Fr.modulus.to_bytes(n8r, "little") + struct.pack("<I", arr.shape[0])
    write_container(path, b"wtns", 2, [(1, header), (2, np.ascontiguousarray(arr, dtype="<u8").tobytes())])
