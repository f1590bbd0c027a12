"""Groth16 prover orchestration, independent of where the kernels run.

``create_proof`` is the deterministic core (explicit r, s); ``prove`` draws them from
``secrets``. Fields, groups and kernels are the key's curve's (``cuzk.curves.get(pk.curve)``).
The heavy steps are the backend's (``"cpu"``: the curve's Numba kernels; ``"cuda"``:
``cuzk.kernels.cuda``, BLS12-381 only) and each is reported as a timeline sub-span (``H``, ``MSM_A``, ``MSM_B1``, ``MSM_B2``,
``MSM_L``, ``MSM_H``), a no-op outside a pipeline.

    A = α + Σ z_i·A_i + r·δ                       (G1)
    B = β + Σ z_i·B_i + s·δ                       (G2, and in G1 for C)
    C = Σ w_j·L_j + Σ h_k·H_k + s·A + r·B1 − r·s·δ (G1)

    >>> proof = cuzk.groth16.prove(pk, synth.synthesize(x=3, out=35))     # doctest: +SKIP
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import contextvars
import importlib
import secrets
import threading
from types import ModuleType

import attrs
import numpy as np

from cuzk import curves
from cuzk.errors import BackendUnavailableError, InputError, KeyMismatchError, ProofVerificationError, UnsatisfiedConstraint
from cuzk.groth16 import bit_msm as _bits, witness_prep as _prep
from cuzk.groth16.keys import ProvingKey, check_same_curve
from cuzk.groth16.proof import Proof
from cuzk.groth16.r1cs_to_qap import compute_h, witness_parts
from cuzk.groth16.verify import prepare_verifying_key, verify as _verify
from cuzk.timeline import span

__all__ = ["Bases", "create_proof", "prove", "query_scalars", "check_witness", "check_compatible", "load_backend"]


def load_backend(name, curve: str | None = None):
    """The kernels of ``curve`` (default BLS12-381) on backend ``name``: ``"cpu"`` → the curve's
    CPU kernels (``cuzk.curves.get(curve).kernels``), ``"cuda"`` → its CUDA kernels
    (``cuda.kernels_for(curve)``); a module or kernel object passes through.

    Raises:
        InputError: another backend name.
        BackendUnavailableError: ``"cuda"`` for a curve the CUDA kernels are not built for.
    """
    if isinstance(name, ModuleType) or hasattr(name, "msm_g1"):
        return name
    if name not in ("cpu", "cuda"):
        raise InputError(f"backend must be 'cpu' or 'cuda', got {name!r}")
    bundle = curves.get(curves.canonical(curve))
    if name == "cpu":
        return bundle.kernels
    cuda = importlib.import_module("cuzk.kernels.cuda")
    if bundle.name not in cuda.CURVES:
        raise BackendUnavailableError(f"the CUDA kernels are not built for {bundle.spec.title} "
                                      f"(only {', '.join(cuda.CURVES)}); use device='cpu'")
    return cuda.kernels_for(bundle.cuda)


@attrs.frozen
class Bases:
    """The proving key's query points as the backend wants them (host arrays for the CPU,
    device-resident arrays for CUDA); by default the key's own arrays."""

    a: object
    b_g1: object
    b_g2: object
    l: object
    h: object
    #: the A and B queries' rows of z, resident where the backend gathers the scalars itself
    #: (CUDA: ``upload_rows``); None: taken from the key's density per proof
    rows: object = None
    #: query -> the key's block sums for its bit-aware MSM (CPU: ``bit_msm.blocks_for``); None: none
    blocks: object = None

    @classmethod
    def of(cls, pk: ProvingKey) -> "Bases":
        return cls(a=pk.a, b_g1=pk.b_g1, b_g2=pk.b_g2, l=pk.l, h=pk.h)


def check_compatible(pk: ProvingKey, synthesized) -> None:
    """Refuse a witness of another circuit or shape, with a message that says which."""
    missing = [k for k in ("z", "a", "b", "c", "public_inputs") if not hasattr(synthesized, k)]
    if missing:
        raise InputError(f"expected a cuzk.synth.Synthesized (Synthesizer.synthesize(...)), got "
                         f"{type(synthesized).__name__} without {', '.join(missing)}")
    check_same_curve("the witness", getattr(synthesized, "curve", curves.DEFAULT), "the proving key", pk.curve)
    if pk.digest is not None and getattr(synthesized, "digest", None) not in (None, pk.digest):
        raise KeyMismatchError(
            f"the witness is for circuit {synthesized.digest[:16]}…, the proving key for {pk.digest[:16]}…"
        )
    z = synthesized.z
    limbs = curves.resolve(pk.curve).fr.limbs
    if z.ndim != 2 or z.shape[1] != limbs or z.dtype != np.uint64:
        raise InputError(f"synthesized.z must be an (n, {limbs}) uint64 array, got {z.shape} {z.dtype}")
    if z.shape[0] != pk.n_vars:
        raise KeyMismatchError(f"the witness has {z.shape[0]} variables, the proving key {pk.n_vars}")
    if len(synthesized.public_inputs) != pk.n_inputs - 1:
        raise KeyMismatchError(
            f"the witness has {len(synthesized.public_inputs)} public inputs, the proving key {pk.n_inputs - 1}"
        )
    n_c = synthesized.a.shape[0]
    if pk.n_constraints is not None and n_c != pk.n_constraints:
        raise KeyMismatchError(f"the witness has {n_c} constraint rows, the proving key {pk.n_constraints}")
    if n_c + pk.n_inputs > pk.domain_size:
        raise KeyMismatchError(f"{n_c} rows + {pk.n_inputs} inputs exceed the key's domain of {pk.domain_size}")


def check_witness(synthesized, threads=None) -> None:
    """Raise :class:`UnsatisfiedConstraint` at the first row where a·b ≠ c (n Fr muls, in the
    witness's curve's Fr, on up to ``threads`` threads)."""
    fr = curves.get(getattr(synthesized, "curve", curves.DEFAULT)).Fr
    row = _prep.unsatisfied_row(fr, synthesized.a, synthesized.b, synthesized.c, threads)
    if row is not None:
        raise UnsatisfiedConstraint(f"constraint {row} is not satisfied by the witness (a·b ≠ c)", index=row)


def query_scalars(pk: ProvingKey, z: np.ndarray, threads=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The MSM scalars of the A, B (G1 and G2) and L queries from the canonical assignment z,
    paired with the key's points by its density (queries omit variables absent from A or B).
    The gathers run on up to ``threads`` threads; L's scalars are a view of z.

    >>> a_sc, b_sc, l_sc = query_scalars(pk, curves.get(pk.curve).Fr.from_mont(w.z))   # doctest: +SKIP
    """
    return _prep.query_scalars(pk, np.ascontiguousarray(z), threads)


def _scalar(x: int, what: str, r: int) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or not 0 <= int(x) < r:
        raise InputError(f"{what} must be an int in [0, r), got {x!r}")
    return int(x)


def _aside(fn, *args) -> concurrent.futures.Future:
    """Run ``fn(*args)`` on a new thread that records its spans into the caller's stage context."""
    fut: concurrent.futures.Future = concurrent.futures.Future()
    ctx = contextvars.copy_context()

    def body():
        try:
            fut.set_result(ctx.run(fn, *args))
        except BaseException as e:  # handed to the caller at result()
            fut.set_exception(e)

    threading.Thread(target=body, name=f"{threading.current_thread().name}-msm-b2", daemon=True).start()
    return fut


@contextlib.contextmanager
def _device_time(sp: span, kern, device_id=None):
    """Inside a recording span, note as ``device_ms`` the GPU time of the kernels launched in
    the block (the backend's ``device_timer``: CUDA events on this thread's stream; nothing on
    the CPU). Events measure the GPU's clock from start to stop, so the block should hold only
    the device work: host preparation before it would count as GPU time."""
    timer = getattr(kern, "device_timer", None) if sp.active else None
    if timer is None:
        yield
        return
    with timer(device_id) as t:
        yield
    if t.ms is not None:
        sp.note(device_ms=t.ms)


@contextlib.contextmanager
def _sub_span(name: str, kern, device_id=None):
    """``span(name)`` whose whole body is device work (an MSM), timed by :func:`_device_time`."""
    with span(name) as sp, _device_time(sp, kern, device_id):
        yield


def _scalars_on_device(kern, g2_kern, bit_msm) -> bool:
    """Whether the query scalars are made where the MSMs run (``kern.query_scalars``: CUDA) rather
    than on the host: the backend offers it, MSM_B2 runs there too, and no MSM wants a host
    split of its scalars (``bit_msm`` False, or "auto" on a backend that never splits)."""
    if not hasattr(kern, "query_scalars") or g2_kern is not kern:
        return False
    return bit_msm is False or (bit_msm == "auto" and getattr(kern, "AUTO_BIT_MSM", True) is False)


def _msm(kern, group: str, points, scalars, split, threads, blocks=None):
    """``kern``'s MSM over ``group``: the bit-aware one where the scalars have a split (host
    scalars; with the points' block sums where the key has them), else the general one (staged
    or host scalars)."""
    if split is not None:
        more = {} if blocks is None else {"blocks": blocks}
        return getattr(kern, f"msm_bits_{group}")(points, scalars, threads=threads, split=split, **more)
    return getattr(kern, f"msm_{group}")(points, scalars, threads=threads)


def _msm_b2(kern, points, scalars, threads, device_id=None, split=None, blocks=None):
    with _sub_span("MSM_B2", kern, device_id):
        return _msm(kern, "g2", points, scalars, split, threads, blocks)


def create_proof(pk: ProvingKey, synthesized, r: int, s: int, *, backend="cpu", bases: Bases | None = None,
                 check: bool = True, threads=None, g2_backend=None, bit_msm=False) -> Proof:
    """The deterministic prover: the proof for ``synthesized`` with blinding factors ``r``, ``s``.

    Args:
        pk: the proving key (either H convention: bellperson or snarkjs).
        synthesized: a :class:`cuzk.synth.Synthesized` of the key's circuit.
        r, s: blinding scalars in [0, r).
        backend: ``"cpu"``, ``"cuda"`` or a kernel module.
        bases: device-resident query points (the GpuProver passes them); default the key's.
        check: refuse an unsatisfied witness before any MSM.
        threads: cores for CPU kernels (None: all).
        g2_backend: where MSM_B2 runs (None: ``backend``). A different one (``"cpu"`` next to
            ``"cuda"``) runs it on its own thread from the moment the scalars exist, concurrently
            with H and the G1 MSMs, over the key's host points.
        bit_msm: the A, B and L MSMs with the scalars 0 skipped and the scalars 1 added
            directly (``msm_bits_g1/g2``; :mod:`cuzk.groth16.bit_msm`): ``False`` (default),
            ``True``, or ``"auto"`` (each query whose scalars are mostly bits). The same proof.

    Raises:
        KeyMismatchError: witness and key belong to different circuits, shapes or curves.
        UnsatisfiedConstraint: ``check`` found a row with a·b ≠ c.
    """
    cv = curves.get(pk.curve)
    G1, G2, Fr = cv.G1, cv.G2, cv.Fr  # noqa: N806 (the groups' and field's names)
    r, s = _scalar(r, "r", Fr.modulus), _scalar(s, "s", Fr.modulus)
    check_compatible(pk, synthesized)
    if check:
        check_witness(synthesized, threads)
    kern = load_backend(backend, pk.curve)
    g2_kern = kern if g2_backend is None else load_backend(g2_backend, pk.curve)
    bases = bases or Bases.of(pk)
    blocks = bases.blocks or {}
    vk = pk.vk

    # stage() starts the device copies (CUDA; the CPU backend returns its inputs), so the
    # host work between here and the first kernel that reads an array overlaps its copy.
    b2 = None
    on_device = _scalars_on_device(kern, g2_kern, bit_msm)
    try:
        dev = getattr(bases.a, "device_id", None)  # resident bases pin the GPU (CUDA backend)
        with span("H") as h_span:
            # the domain's zero rows are the backend's: a memset on the device for CUDA
            a, b, c = kern.stage(*witness_parts(synthesized, pk.n_inputs, pk.domain_size), rows=pk.domain_size,
                                 device_id=dev, threads=threads)
            if on_device:  # z staged once (after a, b, c), converted and gathered there
                z, = kern.stage(synthesized.z, device_id=dev, threads=threads)
                splits = (None, None, None)
            else:
                scalars = query_scalars(pk, _prep.canonical(Fr, synthesized.z, threads), threads)  # integers
                splits = _bits.splits_for(bit_msm, kern, scalars, threads)  # None: the general MSM
                if g2_kern is not kern:
                    b2_pts = bases.b_g2 if isinstance(bases.b_g2, np.ndarray) else pk.b_g2
                    b2_split = splits[1] if _bits.supports(g2_kern) else None
                    b2 = _aside(_msm_b2, g2_kern, b2_pts, scalars[1], threads, None, b2_split)
                # a split MSM reads its host scalars (it gathers the others itself): stage the rest
                staged = iter(kern.stage(*[sc for sc, sp in zip(scalars, splits) if sp is None], device_id=dev,
                                         threads=threads))
                a_sc, b_sc, l_sc = [sc if sp is not None else next(staged) for sc, sp in zip(scalars, splits)]
            with _device_time(h_span, kern, dev):  # from the first kernel: what waits for copies counts
                h = compute_h(a, b, c, kern, threads=threads, convention=pk.convention, curve=pk.curve)
                if on_device:  # queued after H's transforms: z's copy (behind a, b, c's) never holds them up
                    rows = bases.rows or _prep.query_rows(pk.resolved_density(), pk.n_inputs)
                    a_sc, b_sc, l_sc = kern.query_scalars(z, rows, pk.n_inputs)
                h = kern.to_canonical(h)
        with _sub_span("MSM_A", kern, dev):
            a_sum = _msm(kern, "g1", bases.a, a_sc, splits[0], threads, blocks.get("a"))
        with _sub_span("MSM_B1", kern, dev):
            b1_sum = _msm(kern, "g1", bases.b_g1, b_sc, splits[1], threads, blocks.get("b_g1"))
        if b2 is None:
            b2_sum = _msm_b2(kern, bases.b_g2, b_sc, threads, dev, splits[1], blocks.get("b_g2"))
        with _sub_span("MSM_L", kern, dev):
            l_sum = _msm(kern, "g1", bases.l, l_sc, splits[2], threads, blocks.get("l"))
        with _sub_span("MSM_H", kern, dev):
            h_sum = kern.msm_g1(bases.h, h, threads=threads)
    finally:
        if b2 is not None:  # never leave the thread running past the call, even on an error
            concurrent.futures.wait([b2])
    if b2 is not None:
        b2_sum = b2.result()

    g1 = _combiner(cv, G1, kern, "msm_g1")
    g2 = _combiner(cv, G2, g2_kern, "msm_g2")
    g1_a = g1([vk.alpha_g1, a_sum, vk.delta_g1], [1, 1, r])
    g2_b = g2([vk.beta_g2, b2_sum, vk.delta_g2], [1, 1, s])
    g1_b = g1([vk.beta_g1, b1_sum, vk.delta_g1], [1, 1, s])
    g1_c = g1([l_sum, h_sum, g1_a, g1_b, vk.delta_g1], [1, 1, s, r, -r * s % Fr.modulus])
    return Proof(a=g1_a, b=g2_b, c=g1_c, curve=pk.curve)


def _combiner(cv, group, kern, msm_name: str):
    """``(points, ints) -> Σ k_i·P_i`` for the proof's last few terms (affine, canonical like any
    group result). With the CPU kernels it is a small MSM on the kernels the proof's own MSMs
    have just run, so a cold start compiles no separate point arithmetic for it
    (docs/perf/cold-start.md); with another backend (CUDA) it is the group's own operations on
    the host. Both give the same point, hence the same proof bytes."""
    if kern is cv.kernels:
        msm, fr = getattr(kern, msm_name), cv.Fr
        return lambda points, ks: msm(np.stack(points), fr.ints_to_limbs(ks))
    return lambda points, ks: group.linear_combination(np.stack(points), ks)


def prove(pk: ProvingKey, synthesized, r: int | None = None, s: int | None = None, *, backend="cpu",
          verify: bool = True, check: bool = True, threads=None, bases: Bases | None = None,
          prepared_vk=None, g2_backend=None, bit_msm=False) -> Proof:
    """A Groth16 proof with fresh blinding (``secrets``) unless r, s are given.

    With ``verify=True`` (default) the proof is checked with one multi-pairing before it is
    returned, so a kernel fault or a bad witness never leaves as a proof.

    Raises:
        ProofVerificationError: the proof did not verify.
        plus everything :func:`create_proof` raises.
    """
    order = curves.resolve(pk.curve).fr.modulus
    r = secrets.randbelow(order) if r is None else r
    s = secrets.randbelow(order) if s is None else s
    proof = create_proof(pk, synthesized, r, s, backend=backend, bases=bases, check=check, threads=threads,
                         g2_backend=g2_backend, bit_msm=bit_msm)
    if verify:
        pvk = prepared_vk or prepare_verifying_key(pk.vk)
        cpu = curves.get(pk.curve).kernels
        msm = cpu.msm_g1 if load_backend(backend, pk.curve) is cpu else None  # kernels the proof compiled
        if not _verify(pvk, list(synthesized.public_inputs), proof, msm=msm):
            raise ProofVerificationError(
                "the proof does not verify: the witness does not satisfy the circuit or a kernel produced a wrong result"
            )
    return proof
