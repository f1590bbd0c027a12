"""The synthesis worker process: the child side of :class:`cuzk.engine.executors.ProcessExecutor`.

Protocol over one duplex ``multiprocessing`` pipe (messages are tuples; the parent and this
process run the same cuzk, so pickles only cross between them, never from a user's file):

* parent → worker at start: the pickled ``("synthesizer", obj)`` or ``("factory", callable)``
  payload, as the process's argument;
* worker → parent once: ``("ready", {"pid", "estimate_bytes"})`` or ``("fatal", error)`` when the
  synthesizer cannot be built (the process then exits); after "ready" the worker warms itself
  (:mod:`cuzk.engine.synth_warmup`) unless started with ``warm=False``, and only then reads jobs;
* parent → worker per job: ``("job", segment name, inputs)``; worker → parent:
  ``("ok", result class, layout, other fields)`` with the result's arrays in the named
  shared-memory segment (:mod:`cuzk.engine.shared_arrays`), or ``("err", error)``;
* parent → worker: ``("stop",)``; a closed pipe (parent gone) also ends the loop.

``error`` is :func:`pack_exception`'s tuple: the pickled exception when it survives a pickle
round trip, and always its type name, text and formatted traceback.

The worker ignores SIGINT: a Ctrl-C in the terminal reaches the whole process group, and the
parent, not each worker, decides what an interrupt means for the jobs in flight.

    >>> pack_exception(ValueError("bad x"))[1:3]
    ('ValueError', 'bad x')
"""

from __future__ import annotations

import os
import pickle
import signal
import traceback

import attrs
import numpy as np

from cuzk.engine.shared_arrays import put_arrays
from cuzk.errors import InputError
from cuzk.pipeline.scheduler import estimate_synthesized_bytes

__all__ = ["worker_main", "pack_exception", "pack_result", "reduce_circom", "rebuild_circom"]


def rebuild_circom(r1cs, wasm_path: str, check: bool):
    """A :class:`~cuzk.formats.snarkjs_wasm.CircomSynthesizer` built afresh in a worker."""
    from cuzk.formats.snarkjs_wasm import CircomSynthesizer, CircomWitnessCalculator

    return CircomSynthesizer(r1cs, CircomWitnessCalculator(wasm_path), check=check)


def reduce_circom(synth) -> tuple:
    """Pickle a circom synthesizer as its R1CS, ``.wasm`` path and check flag: its WASM
    instance cannot be pickled, but each worker can instantiate the module again."""
    return rebuild_circom, (synth.r1cs, synth.calculator.where, synth.check)


def pack_exception(exc: BaseException) -> tuple:
    """``(pickled exception or None, type name, text, traceback text)``."""
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    try:
        blob = pickle.dumps(exc)
        pickle.loads(blob)  # some exceptions pickle but cannot be rebuilt (required __init__ args)
    except Exception:
        blob = None
    return blob, type(exc).__qualname__, str(exc), tb


def pack_result(result, segment: str) -> tuple:
    """``("ok", class, layout, other fields)`` with the result's ndarray fields in ``segment``;
    a result that is not an attrs instance goes back whole, as ``("ok", None, [], result)``."""
    if not attrs.has(type(result)):
        return "ok", None, [], result
    fields = {f.name: getattr(result, f.name) for f in attrs.fields(type(result)) if f.init}
    arrays = {k: v for k, v in fields.items() if isinstance(v, np.ndarray)}
    layout = put_arrays(segment, arrays) if arrays else []
    return "ok", type(result), layout, {k: v for k, v in fields.items() if k not in arrays}


def _build(payload: bytes):
    how, obj = pickle.loads(payload)
    synth = obj() if how == "factory" else obj
    if not callable(getattr(synth, "synthesize", None)):
        raise InputError(f"the synthesis worker's {'factory built' if how == 'factory' else 'synthesizer is'} "
                         f"{type(synth).__name__}, which has no synthesize(**inputs) method")
    return synth


def worker_main(conn, payload: bytes, warm: bool = True) -> None:
    """Entry point of a worker process (spawned or forkserver'd; never forked from a threaded parent)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        synth = _build(payload)
        info = {"pid": os.getpid(), "estimate_bytes": estimate_synthesized_bytes(synth)}
    except BaseException as e:  # the parent raises it where the executor is made
        conn.send(("fatal", pack_exception(e)))
        conn.close()
        return
    conn.send(("ready", info))
    if warm:  # the parent does not wait for this; a first job waits in the pipe meanwhile
        from cuzk.engine.synth_warmup import warm_up

        warm_up(synth, stop=conn.poll)  # a job waiting in the pipe ends it
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):  # the parent is gone
            return
        if msg[0] != "job":
            return
        _, segment, inputs = msg
        try:
            reply = pack_result(synth.synthesize(**inputs), segment)
        except BaseException as e:  # SystemExit from user code fails the job, not the worker
            reply = ("err", pack_exception(e))
        try:
            conn.send(reply)
        except Exception as e:  # e.g. a result field that cannot be pickled
            conn.send(("err", pack_exception(e)))
