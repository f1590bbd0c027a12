"""``GpuProver``: proves synthesized witnesses on a GPU (CUDA through CuPy) or the CPU (Numba).

It picks the backend, keeps the proving key resident in prover-ready form (on the device for
CUDA) across proofs, and verifies each proof before returning it.

    >>> prover = GpuProver(pk)                  # device="auto": "cuda" if usable, else "cpu"   # doctest: +SKIP
    >>> proof = prover.prove(synth.synthesize(x=3, out=35))                                   # doctest: +SKIP
"""

from __future__ import annotations

import logging

import attrs

from cuzk.errors import BackendUnavailableError, DeviceOutOfMemoryError, InputError
from cuzk.groth16.bit_msm import blocks_for, check_mode as _check_bit_msm, check_ones_blocks
from cuzk.groth16.fixed_base import check_precompute, tables_for
from cuzk.groth16.keys import ProvingKey
from cuzk.groth16.prove import Bases, check_compatible, load_backend, prove
from cuzk.groth16.verify import prepare_verifying_key
from cuzk.groth16.witness_prep import query_rows
from cuzk.kernels.cpu_threads import resolve_threads
from cuzk.timeline import span

__all__ = ["GpuProver", "cuda_status"]

_DEVICES = ("auto", "cpu", "cuda")
_G2_PLACES = ("device", "cpu")
_ON_OOM = ("cpu", "raise")
_log = logging.getLogger("cuzk.prover")


def cuda_status() -> tuple[bool, str]:
    """``(usable, reason)`` for the CUDA backend on this machine (CuPy importable, a device present)."""
    try:
        from cuzk.kernels import cuda
    except Exception as e:  # CuPy missing or broken: the message is the reason
        return False, f"cuzk.kernels.cuda cannot be imported: {e}"
    return cuda.is_available()


def _cuda_builds(curve: str) -> bool:
    from cuzk.kernels import cuda

    return curve in cuda.CURVES


class GpuProver:
    """Groth16 prover with the key kept resident.

    Args:
        pk: the proving key; its curve (``pk.curve``) picks the fields, groups and kernels.
        device: ``"auto"`` (CUDA when usable, else CPU), ``"cuda"`` or ``"cpu"``.
        device_id: which GPU, for ``"cuda"``.
        threads: cores the CPU kernels may use (None: all; a pipeline may pass 1).
        verify: check every proof with a pairing before returning it (default True).
        check: refuse a witness with a·b ≠ c before any MSM (default True). It tests the a, b, c
            the ``Synthesized`` carries, row by row; it does not recompute A·z, B·z, C·z, so a
            hand-built ``Synthesized`` whose ``z`` was changed afterwards passes it. ``verify``
            (the default) is what catches that: the proof fails its pairing check and
            ``ProofVerificationError`` is raised instead of returning it
            (tests/test_groth16.py::test_tampered_assignment_never_leaves_as_a_proof). The
            witness's circuit digest is checked against the key's whenever the key knows it.
        g2_msm: where the G2 MSM (MSM_B2) runs: ``"device"`` (with the others) or ``"cpu"``: on
            a thread of its own, concurrently with the GPU's H and G1 MSMs, with ``threads``
            cores (bellperson's split; ``benchmarks/gpu_check.py`` times both). The key's G2
            points then stay on the host.
        on_oom: when the GPU runs out of memory mid-proof, ``"cpu"`` (default) proves that witness
            again on the CPU backend, logs a warning to ``cuzk.prover`` and marks the job's
            timeline with a ``CPU_FALLBACK`` sub-span, so no job is lost to a full device;
            ``"raise"`` lets :class:`~cuzk.errors.DeviceOutOfMemoryError` through.
        precompute: fixed-base tables for the key's MSMs (CPU backend, docs/perf/kernels.md): ``None``
            (default: none), ``"auto"`` (up to 2x the key's query bytes, at most a quarter of
            physical memory), an int of bytes the tables may take, or
            :class:`~cuzk.groth16.fixed_base.KeyTables` built earlier (an Engine maps them from
            its key cache). Built here, once, so the first proof does not pay for them
            (``prover.tables.seconds``; 2-6 s per 2^16 G1 points of query on 2 busy cores);
            every proof's MSMs then run fewer windows. Proofs are the same bytes as without
            (for the same r, s). The CUDA backend ignores it (its MSMs keep the key's points on
            the device, where a table would multiply the key's device memory); so does the
            ``on_oom`` fallback.
        warm_up: CPU backend: start compiling (cold Numba cache) or loading (warm) the kernels of
            a proof on a background thread ``cuzk-warmup`` (:mod:`cuzk.groth16.warmup`), so what
            the caller does before the first proof overlaps it; that proof waits for a kernel
            the thread is compiling, never compiles one twice. ``prover.warm_up_future`` holds
            its Future (None when off). Default False.
        bit_msm: the A, B (G1, G2) and L MSMs bit-aware (:mod:`cuzk.groth16.bit_msm`): each
            query's scalars are scanned, the 0s skipped and the 1s' points added directly, the
            rest through the general MSM, on either backend. ``False`` (default), ``True``, or
            ``"auto"`` (a query whose scalars are at least ``AUTO_MIN_FRACTION`` 0/1: a
            SHA-256-heavy witness such as PoRep's). The same proof bytes either way.
        ones_blocks: CPU backend, with ``bit_msm``: keep the sums of the A, B and L queries'
            points in blocks of this many rows (2, 4 or 8; :mod:`cuzk.kernels.ones_blocks`), so a
            block of ones and zeros costs its sum less its zeros' points where that is fewer
            additions. Memory buys time: 1/``ones_blocks`` of those queries' bytes
            (``prover.ones_blocks_bytes``), built here once (~0.4 s per 2.7M G1 points on 2
            cores); the bit-aware MSMs of a PoRep witness then run ~1.1x faster (blocks of 4:
            docs/perf/kernels.md). None (default): none. The same proof bytes either way. The
            CUDA backend ignores it.

    Raises:
        InputError: a bad argument (``precompute`` included).
        BackendUnavailableError: ``device="cuda"`` but no usable GPU, or no CUDA kernels for the
            key's curve (the reason is in the message).
        KeyMismatchError: the key's queries are sparse and it carries no density bitmaps.
    """

    def __init__(self, pk: ProvingKey, device: str = "auto", *, device_id: int = 0, threads=None,
                 verify: bool = True, check: bool = True, g2_msm: str = "device", on_oom: str = "cpu",
                 precompute=None, warm_up: bool = False, bit_msm=False, ones_blocks=None):
        if not isinstance(pk, ProvingKey):
            raise InputError(f"GpuProver needs a cuzk.groth16.ProvingKey, got {type(pk).__name__}")
        if device not in _DEVICES:
            raise InputError(f"device must be one of {_DEVICES}, got {device!r}")
        if threads is not None:
            resolve_threads(threads)  # InputError now, not at the first proof
        if isinstance(device_id, bool) or not isinstance(device_id, int) or device_id < 0:
            raise InputError(f"device_id must be an int >= 0, got {device_id!r}")
        if on_oom not in _ON_OOM:
            raise InputError(f"on_oom must be one of {_ON_OOM}, got {on_oom!r}")
        if g2_msm not in _G2_PLACES:
            raise InputError(f"g2_msm must be one of {_G2_PLACES}, got {g2_msm!r}")
        check_precompute(precompute)
        self.bit_msm = _check_bit_msm(bit_msm)
        ones_blocks = check_ones_blocks(ones_blocks, bit_msm)
        if device == "auto":
            device = "cuda" if cuda_status()[0] and _cuda_builds(pk.curve) else "cpu"
        elif device == "cuda":
            ok, why = cuda_status()
            if not ok:
                raise BackendUnavailableError(f"device='cuda' is not usable here: {why}")
        pk.resolved_density()  # fail now, not at the first proof
        self.pk = pk
        self.device = device
        self.device_id = device_id
        self.threads = threads
        self.verify = verify
        self.check = check
        self.g2_msm = g2_msm
        self.on_oom = on_oom
        self._g2_backend = "cpu" if g2_msm == "cpu" and device != "cpu" else None
        self._backend = load_backend(device, pk.curve)
        self.warm_up_future = None
        if warm_up and device == "cpu":  # before the vk's lines and tables: they compile too
            from cuzk.groth16.warmup import start_warm_up

            self.warm_up_future = start_warm_up(pk, verify=verify, threads=threads, bit_msm=self.bit_msm)
        self._pvk = prepare_verifying_key(pk.vk)
        #: the fixed-base tables the CPU MSMs use (None: plain MSMs)
        self.tables = tables_for(pk, precompute, threads) if device == "cpu" else None
        #: query -> the key's block sums for the bit-aware MSMs (None: none)
        self.blocks = blocks_for(pk, ones_blocks, threads) if device == "cpu" and ones_blocks else None
        self._bases = self._resident_bases()
        warm_up = getattr(self._backend, "warm_up", None)
        if warm_up is not None:  # load every kernel and the host combine now, not in the first proof
            warm_up(device_id)

    def _resident_bases(self) -> Bases:
        upload = getattr(self._backend, "upload_points", None)
        if upload is None:
            bases = self.tables.bases(Bases.of(self.pk)) if self.tables is not None else Bases.of(self.pk)
            return attrs.evolve(bases, blocks=self.blocks) if self.blocks else bases
        pk = self.pk
        # the A and B queries' rows of z stay on the device too: each proof gathers its scalars there
        rows = tuple(self._backend.upload_rows(r, pk.n_vars, self.device_id)
                     for r in query_rows(pk.resolved_density(), pk.n_inputs))
        return Bases(a=upload(pk.a, self.device_id), b_g1=upload(pk.b_g1, self.device_id),
                     b_g2=pk.b_g2 if self._g2_backend else upload(pk.b_g2, self.device_id),
                     l=upload(pk.l, self.device_id),
                     h=upload(pk.h, self.device_id), rows=rows)

    def __repr__(self) -> str:
        g2 = ", g2_msm='cpu'" if self._g2_backend else ""
        g2 += f", tables={self.tables.nbytes}B" if self.tables is not None else ""
        g2 += f", bit_msm={self.bit_msm!r}" if self.bit_msm is not False else ""
        g2 += f", ones_blocks={self.ones_blocks_bytes}B" if self.blocks else ""
        return (f"GpuProver(device={self.device!r}{g2}, curve={self.pk.curve!r}, vars={self.pk.n_vars}, "
                f"domain={self.pk.domain_size})")

    @property
    def ones_blocks_bytes(self) -> int:
        """Bytes of the key's block sums (0: none)."""
        return sum(b.nbytes for b in (self.blocks or {}).values())

    def check_compatible(self, synthesized) -> None:
        """Raise :class:`~cuzk.errors.KeyMismatchError` if ``synthesized`` is not for this key."""
        check_compatible(self.pk, synthesized)

    def prove(self, synthesized, r: int | None = None, s: int | None = None):
        """Prove one :class:`~cuzk.synth.Synthesized`; returns a :class:`~cuzk.groth16.Proof`.

        Raises:
            KeyMismatchError, UnsatisfiedConstraint, ProofVerificationError: see
            :func:`cuzk.groth16.prove`.
        """
        try:
            return prove(self.pk, synthesized, r, s, backend=self._backend, verify=self.verify, check=self.check,
                         threads=self.threads, bases=self._bases, prepared_vk=self._pvk, g2_backend=self._g2_backend,
                         bit_msm=self.bit_msm)
        except DeviceOutOfMemoryError as e:
            if self.on_oom != "cpu" or self.device == "cpu":
                raise
            _log.warning("GPU out of memory (%s); proving this witness on the CPU backend instead", e)
            with span("CPU_FALLBACK"):  # the witness was checked above: no second check
                return prove(self.pk, synthesized, r, s, backend="cpu", verify=self.verify, check=False,
                             threads=self.threads, prepared_vk=self._pvk, bit_msm=self.bit_msm)
