"""The two kinds of worker threads: synthesis (``cuzk-synth-N``) and prove (``cuzk-gpu-N``).

A synthesis worker holds a concurrency permit from taking a unit until its result is in the
channel, so at most ``concurrency`` results exist outside the channel and the prove workers:
with ``lookahead`` in the channel and one per prove worker, at most
``concurrency + lookahead + gpu_workers`` synthesized jobs are alive at once.

Job bookkeeping (futures, states, counters) belongs to the pipeline, passed in as ``core``;
the workers only run stages, time them and report. Whatever a stage raises, ``BaseException``
included (as ``concurrent.futures`` does), goes to that job's future; the worker carries on.
Every stage call runs inside :func:`cuzk.timeline.stage_context`, so ``cuzk.timeline.span()``
inside a real prover records sub-spans for the right job. An unexpected error in the bookkeeping itself fails that job's
future (and is logged); it never ends the thread.
"""

from __future__ import annotations

import logging
import threading

from cuzk.timeline.context import stage_context
from cuzk.timeline.events import EventKind as K

__all__ = ["SynthWorker", "GpuWorker"]

_log = logging.getLogger("cuzk.pipeline")


class SynthWorker(threading.Thread):
    """Takes units (those ``accept`` takes, if given) from the queue, synthesizes them with
    their route, sends the results to the channel; holds a permit of ``gate`` meanwhile."""

    def __init__(self, core, index: int, gate, accept=None):
        super().__init__(name=f"cuzk-synth-{index}", daemon=True)
        self.core, self.gate, self.accept = core, gate, accept
        self.current = None  #: the unit being synthesized (for status), or None

    def run(self) -> None:
        core, gate = self.core, self.gate
        try:
            while gate.acquire():
                try:
                    unit = core.queue.take(accept=self.accept)
                    if unit is None:  # closed and drained: wake idle workers so they exit too
                        gate.shutdown()
                        break
                    self.current = unit
                    try:
                        self._synthesize(unit)
                    except BaseException as bug:  # pipeline bug, or a done-callback's SystemExit: keep serving
                        _log.exception("cuzk pipeline internal error in %s", self.name)
                        core.fail_unit(unit, bug, "pipeline (synthesis side)")
                    unit = self.current = None
                finally:
                    gate.release()
        finally:
            core.synth_worker_exited()

    def _synthesize(self, unit) -> None:
        core, tl, name = self.core, self.core.timeline, self.name
        job_id, part = unit.job.id, unit.partition
        c = unit.route.circuit_detail
        started = False
        try:
            started = core.start_unit(unit)
        finally:  # an expiry runs done-callbacks: their BaseException must not keep the bytes
            if not started:
                core.queue.release(unit.nbytes)
        if not started:
            return
        t0 = unit.marks["synth_start_ns"] = tl.now_ns()
        stamp = not unit.route.stamps_synthesis
        if stamp:
            tl.record_with_cpu(K.SYNTH_START, job_id, part, name, **c)
        try:
            with stage_context(tl, job_id, part, name, circuit=unit.route.name):
                synthesized = unit.route.synthesize(**unit.inputs)
        except BaseException as exc:  # KeyboardInterrupt/SystemExit too: ending the thread lost every job
            if stamp:
                tl.record_with_cpu(K.SYNTH_END, job_id, part, name, error=type(exc).__name__, **c)
            core.queue.release(unit.nbytes)
            core.fail_unit(unit, exc, "synthesis")
            return
        if stamp:
            tl.record_with_cpu(K.SYNTH_END, job_id, part, name, **c)
        seconds = (tl.now_ns() - t0) / 1e9
        unit.marks["synth_s"] = seconds
        core.metrics_registry.observe("synth", seconds)
        core.note_synth_seconds(seconds)
        core.set_state(unit, "waiting_for_gpu")
        tl.record(K.CHAN_SEND, job_id, part, name, **c)
        core.channel.put((unit, synthesized), unit.order)
        del synthesized  # the channel owns it now; a stale local would count against the bound


class ProveLoop(threading.Thread):
    """Takes ``(unit, payload)`` items from the core's channel (best order first) and hands each
    to ``_prove``; an internal error fails that unit only and the worker lives on. The Pipeline's
    and Engine's :class:`GpuWorker` and the cluster's prove worker share this loop."""

    _logger = _log
    _label = "pipeline"  #: names the worker's package in its log line and the failure's context

    def run(self) -> None:
        core = self.core
        while True:
            item = core.channel.get()
            if item is None:
                break
            unit, payload = item
            item = None
            try:
                self._prove(unit, payload)
            except BaseException as bug:  # as in SynthWorker.run
                self._logger.exception("cuzk %s internal error in %s", self._label, self.name)
                core.fail_unit(unit, bug, f"{self._label} (prove side)")
            self.current = None
            # Drop references before blocking in get(): an idle worker must hold no job.
            unit = payload = None

    def _prove(self, unit, payload) -> None:
        raise NotImplementedError


class GpuWorker(ProveLoop):
    """Takes synthesized jobs from the channel (best order first), proves them with the prover
    their route gives for this worker's ``device``, resolves the futures."""

    def __init__(self, core, index: int, device=None):
        super().__init__(name=f"cuzk-gpu-{index}", daemon=True)
        self.core, self.device = core, device
        self.current = None  #: the unit being proved (for status), or None

    def _prove(self, unit, synthesized) -> None:
        core, tl, name = self.core, self.core.timeline, self.name
        job_id, part = unit.job.id, unit.partition
        c = unit.route.circuit_detail
        wanted = False
        try:
            wanted = core.still_wanted(unit)
        finally:  # as in SynthWorker._synthesize
            if not wanted:
                core.queue.release(unit.nbytes)
        if not wanted:
            return
        tl.record(K.GPU_PICKUP, job_id, part, name, **c)
        self.current = unit
        try:
            prover = unit.route.prover_for(self, unit)  # may load a key: before GPU_START
        except BaseException as exc:
            core.queue.release(unit.nbytes)
            core.fail_unit(unit, exc, "key load")
            return
        core.set_state(unit, "proving")
        device_ms: list = []
        t0 = tl.now_ns()
        tl.record_with_cpu(K.GPU_START, job_id, part, name, **c)
        try:
            with stage_context(tl, job_id, part, name, device_ms=device_ms, circuit=unit.route.name):
                proof = prover.prove(synthesized)
        except BaseException as exc:  # as in _synthesize: the future gets it, the worker lives on
            tl.record_with_cpu(K.GPU_END, job_id, part, name, error=type(exc).__name__, **c)
            core.queue.release(unit.nbytes)
            core.fail_unit(unit, exc, "proving")
            return
        tl.record_with_cpu(K.GPU_END, job_id, part, name, **c)
        seconds = (tl.now_ns() - t0) / 1e9
        unit.marks["prove_s"] = seconds
        if device_ms:
            unit.marks["device_s"] = sum(device_ms) / 1e3
        core.metrics_registry.observe("gpu", seconds)
        core.queue.release(unit.nbytes)
        core.complete_unit(unit, proof)
        core.after_prove()
