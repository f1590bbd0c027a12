"""Exceptions raised by cuzk.

Every error a user can provoke with bad input is a subclass of :class:`CuzkError`, and most
also derive from the builtin they refine (``ValueError``, ``RuntimeError``) so generic
handlers keep working::

    >>> import cuzk
    >>> try:
    ...     cuzk.field.FR.check_canonical(-1)
    ... except cuzk.errors.FieldValueError as e:
    ...     print("bad:", e)
    bad: Fr element must satisfy 0 <= x < r, got -1
"""

__all__ = [
    "CuzkError",
    "FieldValueError",
    "PointEncodingError",
    "NotOnCurveError",
    "NotInSubgroupError",
    "CircuitError",
    "ValueDependentTraceError",
    "InputError",
    "VanillaFormatError",
    "ConfigError",
    "UnsatisfiedConstraint",
    "PceFormatError",
    "R1csFormatError",
    "ParamsFormatError",
    "SnarkjsFormatError",
    "UnsupportedCurveError",
    "CurveSpecError",
    "KeyMismatchError",
    "ProofVerificationError",
    "BackendUnavailableError",
    "DeviceOutOfMemoryError",
    "PipelineClosedError",
    "TimelineFormatError",
    "DeadlineExceededError",
    "EngineError",
    "ClusterError",
    "MemoryBudgetError",
    "KeyCacheFormatError",
    "KeyCacheError",
    "SynthesisWorkerDied",
    "RemoteSynthesisError",
    "ExecutorClosedError",
]


class CuzkError(Exception):
    """Base class of every cuzk error."""


class FieldValueError(CuzkError, ValueError):
    """A value is not a valid field element (out of range, wrong shape or dtype)."""


class PointEncodingError(CuzkError, ValueError):
    """Bytes do not encode a point: wrong length, bad flag bits, coordinate >= p, bad infinity."""


class NotOnCurveError(PointEncodingError):
    """The coordinates do not satisfy the curve equation."""


class NotInSubgroupError(PointEncodingError):
    """The point is on the curve but not in the prime-order subgroup."""


class CircuitError(CuzkError, ValueError):
    """A circuit definition misuses the DSL (wrong types, unknown variables, ...)."""


class ValueDependentTraceError(CircuitError):
    """``define`` branched on a witness value while being traced; traces must not depend on inputs."""


class InputError(CuzkError, ValueError):
    """Inputs given to ``synthesize``/``prove``/``verify`` are missing, extra, malformed or out of range."""


class VanillaFormatError(InputError):
    """A serde JSON or bincode document of rust-fil-proofs' types (a C1 output, a vanilla proof)
    is malformed, or its values do not check out (a path root, label or encoding that does not
    match); ``path`` names the bad field (``$.vanilla_proofs.StackedDrg2KiBV1[0][1].comm_d_proofs``)
    and, for bincode, the message names the byte offset."""

    def __init__(self, message, path=None):
        super().__init__(message)
        self.path = path


class ConfigError(InputError):
    """A ``cuzk serve`` configuration that cannot be used: an unknown key, a value of the wrong
    type or range, a file that is missing; the message names the key (``[daemon] listen``)."""


class UnsatisfiedConstraint(CuzkError, ValueError):
    """A witness does not satisfy a constraint. ``index`` and ``name`` identify the first failing row."""

    def __init__(self, message, index=None, name=None):
        super().__init__(message)
        self.index = index
        self.name = name


class PceFormatError(CuzkError, ValueError):
    """A PCE file is truncated, corrupted or of an unknown version."""


class SnarkjsFormatError(CuzkError, ValueError):
    """A snarkjs ``.zkey``/``.wtns``/``.r1cs``/JSON file is malformed."""


class R1csFormatError(SnarkjsFormatError):
    """A ``.r1cs`` file (a circom/snarkjs format, hence the base class) or an R1CS is malformed."""


class ParamsFormatError(CuzkError, ValueError):
    """A bellperson ``.params``/``.vk``/proof byte string is malformed (field and offset named)."""


class UnsupportedCurveError(CuzkError, ValueError):
    """The data is for a curve cuzk does not support (e.g. bn128 before BN254 exists)."""


class CurveSpecError(CuzkError, ValueError):
    """A curve specification is inconsistent: a given number disagrees with what its defining
    parameters imply (moduli from the seed, twist coefficient, cofactors, generators off the curve)."""


class KeyMismatchError(CuzkError, ValueError):
    """A proving key and a synthesized witness (or circuit) do not belong together."""


class ProofVerificationError(CuzkError, RuntimeError):
    """The prover produced a proof that does not verify (bad witness for a C-less key, or a kernel fault)."""


class BackendUnavailableError(CuzkError, RuntimeError):
    """The requested backend (e.g. ``device="cuda"``) cannot be used here; the message says why."""


class DeviceOutOfMemoryError(CuzkError, MemoryError):
    """The GPU ran out of memory; the job can be retried on the CPU backend."""


class PipelineClosedError(CuzkError, RuntimeError):
    """``submit`` was called on a pipeline that is closed or closing."""


class TimelineFormatError(CuzkError, ValueError):
    """A saved timeline file cannot be read."""


class KeyCacheFormatError(CuzkError, ValueError):
    """A proving-key cache file is truncated, corrupted or of another format version (the key
    cache rebuilds such an entry from its source; it never uses it)."""


class KeyCacheError(CuzkError, RuntimeError):
    """The key cache cannot serve a key: e.g. the source file changed while it was being read."""


class SynthesisWorkerDied(CuzkError, RuntimeError):
    """A synthesis worker process ended (crash, signal, ``os._exit``) while it ran this job; the
    worker is replaced and other jobs carry on."""


class RemoteSynthesisError(CuzkError, RuntimeError):
    """A synthesizer in a worker process raised an exception that could not be sent back as
    itself (not picklable); the message holds its type, text and the remote traceback."""


class ExecutorClosedError(CuzkError, RuntimeError):
    """``synthesize`` was called on a synthesis executor that is closed or closing."""


class DeadlineExceededError(CuzkError, TimeoutError):
    """A job's deadline passed while it was still queued; it was failed instead of proved late."""


class EngineError(CuzkError, RuntimeError):
    """The Engine cannot do what was asked (unknown circuit, closed engine, key in use, no room)."""


class MemoryBudgetError(EngineError, MemoryError):
    """A job, key or circuit can never fit the engine's memory budget; the message names the sizes."""


class ClusterError(EngineError):
    """A RayEngine cannot reach or use its cluster: Ray not installed, an address that does not
    answer, a key a worker node cannot read, a circuit Ray cannot serialise, no prover left, or
    a job that failed on dead workers more than ``max_retries`` times (docs/cluster.md)."""
