"""Where synthesis runs: ``"threads"`` (the calling thread) or ``"processes"`` (worker processes).

Numba synthesis releases the GIL, so threads synthesize in parallel (``"threads"``, the default
for cuzk's own :class:`~cuzk.synth.Synthesizer`). A synthesizer that holds the GIL — circom's
WASM witness calculator (:mod:`cuzk.formats.snarkjs_wasm`), or any pure-Python witness code —
gets no parallelism from threads; ``"processes"`` runs it in worker processes instead.

Both executors offer the same blocking call, safe from several threads at once::

    ex = make_executor("processes", synthesizer, workers=2)
    w = ex.synthesize(x=3, out=35)        # one job per call; blocks until its result
    ex.close()

``"processes"`` in detail:

* Workers are started when the executor is made (``spawn`` by default, or ``forkserver``; never
  ``fork``: forking a parent whose TBB/OpenMP threads run is unsafe), and each gets the
  synthesizer once. Once ready, each warms itself in the background (Numba's cached machine
  code for its synthesizer, :mod:`cuzk.engine.synth_warmup`), so the first job does not pay for it. It is pickled — so it must be picklable (cuzk's circom synthesizer is: it
  travels as its R1CS and ``.wasm`` path and each worker instantiates the WASM module again) —
  or, for one that is not, pass ``factory=``: a picklable callable that builds it in each
  worker, e.g. ``functools.partial(synthesizer_from_circom, "c.r1cs", "c.wasm")``. Only this
  process's own pickles cross to its workers; nothing a user hands us is unpickled.
* A job's inputs go to one idle worker; its result's numpy arrays come back through one
  shared-memory segment named by the parent (:mod:`cuzk.engine.shared_arrays`), copied out and
  unlinked; the other fields (public inputs, digest) are pickled. No segment outlives its job,
  even when the worker dies.
* A worker that dies mid-job (crash, signal, ``os._exit``) fails only that job, with
  :class:`~cuzk.errors.SynthesisWorkerDied`, and is replaced at once; other jobs carry on.
  An exception raised by the synthesizer comes back as itself (same type, so ``except
  InputError`` works) with the worker's traceback as a note; one that cannot be pickled comes
  back as :class:`~cuzk.errors.RemoteSynthesisError` holding its type, text and traceback.

The executor has ``estimate_bytes()`` exactly when the synthesizer's result size is known (its
own ``estimate_bytes()``, else its R1CS counts; :func:`cuzk.pipeline.scheduler.estimate_synthesized_bytes`),
so it can stand in for the synthesizer wherever a :class:`~cuzk.pipeline.Pipeline` takes one.

    >>> from cuzk.circuits import Cube
    >>> from cuzk.synth import Synthesizer
    >>> with make_executor("threads", Synthesizer(Cube())) as ex:
    ...     ex.synthesize(x=3, out=35).public_inputs
    [35]
"""

from __future__ import annotations

import copyreg
import io
import logging
import multiprocessing
import pickle
import threading
from multiprocessing.connection import wait as wait_any

from cuzk.engine.shared_arrays import segment_name, take_arrays, unlink_segment
from cuzk.engine.synth_worker import reduce_circom, worker_main
from cuzk.errors import ExecutorClosedError, InputError, RemoteSynthesisError, SynthesisWorkerDied
from cuzk.pipeline.scheduler import estimate_synthesized_bytes

__all__ = ["make_executor", "ThreadExecutor", "ProcessExecutor", "KINDS", "START_METHODS"]

KINDS = ("threads", "processes")
START_METHODS = ("spawn", "forkserver")
_log = logging.getLogger("cuzk.engine.executors")


def make_executor(kind: str, synthesizer=None, *, factory=None, workers: int = 1, start_method: str = "spawn",
                  start_timeout: float = 300.0, warm_up: bool = True):
    """A synthesis executor of ``kind`` ``"threads"`` or ``"processes"``.

    Args:
        kind: ``"threads"``: ``synthesize`` runs on the calling thread; ``"processes"``: in one
            of ``workers`` worker processes.
        synthesizer: an object with ``synthesize(**inputs)``; for ``"processes"`` it must be
            picklable. Give this or ``factory``.
        factory: a callable returning the synthesizer, called once per worker process (for
            ``"threads"``: once per calling thread, so each thread has its own instance —
            right for synthesizers that are not thread-safe). Must be picklable for ``"processes"``.
        workers: processes to run (``"processes"``) or at most this many calls at once
            (``"threads"``).
        start_method: ``"spawn"`` (default) or ``"forkserver"``, for ``"processes"``.
        start_timeout: seconds to wait for a worker process to report ready.
        warm_up: (``"processes"``) each worker loads its synthesizer's Numba code from Numba's
            cache right after it is ready, in the background, so the first job does not
            (:mod:`cuzk.engine.synth_warmup`); False: the first job loads it.

    Raises:
        InputError: unknown ``kind``/``start_method``, ``workers`` < 1, neither or both of
            ``synthesizer``/``factory``, no ``synthesize`` method, or (``"processes"``) a
            synthesizer or factory that cannot be pickled (the message says to pass a factory).
        SynthesisWorkerDied: a worker process ended before it was ready.
        Exception: whatever building the synthesizer raised in a worker (e.g. ImportError).

    >>> make_executor("gpu", object())
    Traceback (most recent call last):
    ...
    cuzk.errors.InputError: executor kind must be one of ('threads', 'processes'), got 'gpu'
    """
    if kind not in KINDS:
        raise InputError(f"executor kind must be one of {KINDS}, got {kind!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"workers must be an int >= 1, got {workers!r}")
    if (synthesizer is None) == (factory is None):
        raise InputError("give exactly one of synthesizer= and factory=")
    if factory is not None and not callable(factory):
        raise InputError(f"factory must be callable (it builds the synthesizer), got {type(factory).__name__}")
    if synthesizer is not None and not callable(getattr(synthesizer, "synthesize", None)):
        raise InputError(f"synthesizer {type(synthesizer).__name__} has no synthesize(**inputs) method")
    if kind == "threads":
        return ThreadExecutor(synthesizer, factory=factory, workers=workers)
    if start_method not in START_METHODS:
        raise InputError(f"start_method must be one of {START_METHODS}, got {start_method!r}")
    return ProcessExecutor(synthesizer, factory=factory, workers=workers, start_method=start_method,
                           start_timeout=start_timeout, warm_up=warm_up)


class _EstimateMixin:
    # estimate_bytes() exists only when the size is known: a Pipeline calls int(estimate_bytes())
    # whenever the method exists, so a method returning None would break it
    _estimate: int | None = None

    def __getattr__(self, name):
        if name == "estimate_bytes" and self._estimate is not None:
            return lambda: self._estimate
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class ThreadExecutor(_EstimateMixin):
    """Synthesis on the calling thread (at most ``workers`` calls at once); see :func:`make_executor`."""

    kind = "threads"

    def __init__(self, synthesizer=None, *, factory=None, workers: int = 1):
        self.workers = workers
        self._factory = factory
        self._local = threading.local()
        self._gate = threading.BoundedSemaphore(workers)
        self._closed = False
        first = synthesizer if synthesizer is not None else factory()
        if not callable(getattr(first, "synthesize", None)):
            raise InputError(f"factory built {type(first).__name__}, which has no synthesize(**inputs) method")
        self._shared = synthesizer
        self._local.synth = first  # the constructing thread keeps the instance built for the estimate
        self._estimate = estimate_synthesized_bytes(first)

    def _synth(self):
        if self._shared is not None:
            return self._shared
        s = getattr(self._local, "synth", None)
        if s is None:
            s = self._local.synth = self._factory()
        return s

    def synthesize(self, **inputs):
        """The synthesizer's result for ``inputs``, computed on this thread.

        Raises:
            ExecutorClosedError: the executor is closed.
            Exception: whatever the synthesizer raises.
        """
        if self._closed:
            raise ExecutorClosedError("synthesize() on a closed executor")
        with self._gate:
            return self._synth().synthesize(**inputs)

    def close(self, wait: bool = True) -> None:
        """Refuse further calls (running ones finish on their own threads)."""
        self._closed = True

    def __repr__(self) -> str:
        return f"ThreadExecutor(workers={self.workers}{', closed' if self._closed else ''})"


class _Worker:
    """One worker process and the parent's end of its pipe."""

    def __init__(self, ctx, payload: bytes, index: int, warm: bool = True):
        self.index = index
        self.conn, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=worker_main, args=(child, payload, warm), name=f"cuzk-synthproc-{index}",
                                daemon=True)
        self.proc.start()
        child.close()  # only the worker holds that end now: its death closes the pipe
        self.ready = False
        self.info: dict = {}

    def wait_ready(self, timeout: float | None) -> None:
        """Consume the worker's first message; raise what building the synthesizer raised."""
        if self.ready:
            return
        msg = self._recv(timeout, "while starting")
        if msg[0] == "fatal":
            self.proc.join(5)
            raise _unpack_exception(msg[1], self.proc.pid, "while building the synthesizer")
        self.ready, self.info = True, msg[1]

    def _recv(self, timeout, when: str):
        ready = wait_any([self.conn, self.proc.sentinel], timeout)
        if self.conn in ready or self.conn.poll():
            try:
                return self.conn.recv()
            except (EOFError, OSError):
                pass  # closed pipe: the worker died; report it below
        elif not ready:
            raise SynthesisWorkerDied(f"synthesis worker process {self.proc.pid} did not answer within {timeout} s "
                                      f"{when}")
        self.proc.join(5)
        raise SynthesisWorkerDied(f"synthesis worker process {self.proc.pid} ended {when} ({_exit_text(self.proc)})")

    def run(self, job: bytes):
        """Send one pickled job and wait for its reply (the worker may still be starting)."""
        try:
            self.conn.send_bytes(job)
        except OSError:  # broken pipe: the worker is gone; _recv says how it ended
            pass
        self.wait_ready(None)
        return self._recv(None, "during the job")

    def stop(self, timeout: float) -> None:
        try:
            self.conn.send(("stop",))
        except (OSError, ValueError):
            pass
        self.proc.join(timeout)
        self.kill()

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)
        self.conn.close()


def _exit_text(proc) -> str:
    code = proc.exitcode
    if code is None:
        return "still running, pipe closed"
    if code < 0:
        import signal

        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _unpack_exception(packed: tuple, pid, when: str) -> BaseException:
    blob, type_name, text, tb = packed
    exc = None
    if blob is not None:
        try:
            exc = pickle.loads(blob)  # pickled by our own worker process (see synth_worker)
        except Exception:
            exc = None
    if exc is None:
        return RemoteSynthesisError(f"{type_name}: {text} (raised in synthesis worker process {pid} {when}; "
                                    f"remote traceback:\n{tb})")
    try:
        exc.add_note(f"raised in synthesis worker process {pid} {when}; remote traceback:\n{tb}")
    except (TypeError, AttributeError):  # a non-list __notes__ must not lose the error itself
        pass
    return exc


def _dumps(obj) -> bytes:
    """Pickle for the workers; cuzk's circom synthesizer (whose WASM instance cannot be pickled)
    travels as its R1CS and ``.wasm`` path and is rebuilt in each worker. A private dispatch
    table, so nothing global (copyreg) changes."""
    from cuzk.formats.snarkjs_wasm import CircomSynthesizer

    buf = io.BytesIO()
    p = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
    p.dispatch_table = {**copyreg.dispatch_table, CircomSynthesizer: reduce_circom}
    p.dump(obj)
    return buf.getvalue()


class ProcessExecutor(_EstimateMixin):
    """Synthesis in ``workers`` worker processes; see :func:`make_executor` and the module doc."""

    kind = "processes"

    def __init__(self, synthesizer=None, *, factory=None, workers: int = 1, start_method: str = "spawn",
                 start_timeout: float = 300.0, warm_up: bool = True):
        how, obj = ("synthesizer", synthesizer) if synthesizer is not None else ("factory", factory)
        try:
            self._payload = _dumps((how, obj))
        except Exception as e:
            raise InputError(
                f"the {how} ({type(obj).__name__}) cannot be sent to a worker process: it is not picklable "
                f"({type(e).__name__}: {e}). Pass factory=, a picklable callable that builds the synthesizer "
                "in each worker, e.g. functools.partial(synthesizer_from_circom, 'c.r1cs', 'c_js/c.wasm')"
            ) from None
        self.workers = workers
        self.start_method = start_method
        self.warm_up = bool(warm_up)
        self._ctx = multiprocessing.get_context(start_method)
        self._cond = threading.Condition()
        self._closed = False
        self._stopping = 0  # workers being stopped after close() by the thread that used them
        self._lost: str | None = None  # why the last worker could not be replaced
        self._next_index = workers
        started = [_Worker(self._ctx, self._payload, i, self.warm_up) for i in range(workers)]
        try:
            for w in started:
                w.wait_ready(start_timeout)
        except BaseException:
            for w in started:
                w.kill()
            raise
        self._idle: list[_Worker] = list(started)
        self._live: set[_Worker] = set(started)  # idle or busy
        self._estimate = started[0].info.get("estimate_bytes")

    def __repr__(self) -> str:
        return (f"ProcessExecutor(workers={self.workers}, start_method={self.start_method!r}"
                f"{', closed' if self._closed else ''})")

    @property
    def pids(self) -> list[int]:
        """Process ids of the live workers (for tests and diagnostics)."""
        with self._cond:
            return sorted(w.proc.pid for w in self._live)

    def _acquire(self) -> _Worker:
        with self._cond:
            while not self._idle and self._live and not self._closed:
                self._cond.wait()
            if self._closed:
                raise ExecutorClosedError("synthesize() on a closed executor")
            if not self._live:
                raise SynthesisWorkerDied(f"no synthesis worker process is left: {self._lost}")
            # a started worker before a replacement still starting up
            i = next((i for i in range(len(self._idle) - 1, -1, -1) if self._idle[i].ready), len(self._idle) - 1)
            return self._idle.pop(i)

    def _release(self, w: _Worker | None) -> None:
        stop = False
        with self._cond:
            if w is not None:
                if self._closed:
                    self._live.discard(w)
                    self._stopping += 1
                    stop = True
                else:
                    self._live.add(w)
                    self._idle.append(w)
            self._cond.notify_all()
        if stop:  # outside the lock: joining takes up to seconds; close() waits for it
            try:
                w.stop(5)
            finally:
                with self._cond:
                    self._stopping -= 1
                    self._cond.notify_all()

    def _replace(self, dead: _Worker, why: str) -> _Worker | None:
        """A new worker in place of ``dead`` (not waited for: it becomes ready while queued)."""
        dead.kill()
        with self._cond:
            self._live.discard(dead)
            if self._closed:
                return None
            index, self._next_index = self._next_index, self._next_index + 1
        try:
            return _Worker(self._ctx, self._payload, index, self.warm_up)
        except Exception as e:  # cannot start a process at all: run on with fewer workers
            _log.exception("cuzk: could not start a replacement synthesis worker")
            self._lost = f"{why}; starting a replacement failed: {e!r}"
            return None

    def synthesize(self, **inputs):
        """The synthesizer's result for ``inputs``, computed in a worker process.

        Raises:
            ExecutorClosedError: the executor is closed (or was closed without waiting during the job).
            SynthesisWorkerDied: the worker process ended during this job (it has been replaced),
                or no worker is left (replacements failed to start).
            InputError: ``inputs`` cannot be pickled.
            Exception: what the synthesizer raised, as itself (the worker's traceback in a note).
        """
        segment = segment_name("job")
        try:
            job = pickle.dumps(("job", segment, inputs), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as e:
            raise InputError(f"synthesis inputs cannot be sent to a worker process: {type(e).__name__}: {e}") from None
        w = self._acquire()
        keep: _Worker | None = w
        try:
            try:
                msg = w.run(job)
            except SynthesisWorkerDied as e:
                keep = self._replace(w, str(e))
                if self._closed:
                    raise ExecutorClosedError("the executor was closed while this job ran") from None
                raise
            except BaseException as e:  # a replacement that failed to build, or an interrupt: start afresh
                keep = self._replace(w, f"{type(e).__name__}: {e}")
                raise
            if msg[0] == "err":
                raise _unpack_exception(msg[1], w.proc.pid, "during the job")
            _, cls, layout, rest = msg
            if cls is None:
                return rest
            arrays = take_arrays(segment, layout) if layout else {}
            return cls(**rest, **arrays)
        finally:
            unlink_segment(segment)  # no-op after take_arrays; frees a segment a dead worker left
            self._release(keep)

    def close(self, wait: bool = True) -> None:
        """Stop the workers. ``wait=True``: jobs running finish first; ``wait=False``: their
        workers are killed and they fail with :class:`~cuzk.errors.ExecutorClosedError`. Idempotent."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            idle, self._idle = self._idle, []
            busy = [w for w in self._live if w not in idle]
            self._live.difference_update(idle)
        for w in idle:
            w.stop(5)
        if not wait:
            for w in busy:
                w.proc.kill()  # its caller sees the death and raises ExecutorClosedError
        with self._cond:
            while self._live or self._stopping:
                self._cond.wait()
