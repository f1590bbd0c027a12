"""The daemon's logic without grpc: one :class:`cuzk.Engine`, its circuits and the jobs.

Every RPC of :mod:`cuzk.serve.service` is one method here, taking the request message (any
object with the proto's field names) and returning plain values (a
:class:`~cuzk.serve.pending.Pending` for one that waits on a job) or raising
:class:`~cuzk.serve.validate.RequestError`. The Engine is used through its public API only
(register, submit, submit_partitioned, cancel, status, metrics, preload, evict, serve_status,
close). Filecoin circuits are registered at their first use (tracing a 32 GiB WindowPoSt
circuit takes a minute, and most daemons prove one or two kinds); ``[[circuits]]`` at start.
"""

from __future__ import annotations

import json
import logging
import threading
import time

from cuzk.errors import CuzkError, EngineError, InputError, KeyMismatchError, MemoryBudgetError
from cuzk.serve import payloads
from cuzk.serve.circuits import TOKEN, CircuitAnswer, answer_texts, load_entry, parse_inputs
from cuzk.serve.filecoin import FilecoinCircuit, all_circuit_ids, filecoin_circuit
from cuzk.serve.jobs import JobTable, outcome_of, request_digest
from cuzk.serve.metrics import serve_metrics
from cuzk.serve.pending import Pending
from cuzk.serve.snap import snap_work
from cuzk.serve.validate import (
    RequestError, check_circuit_id, check_deadline_ms, check_job_id, check_priority, check_proof_kind,
    check_request_id, check_timeout_ms, invalid,
)

__all__ = ["Daemon", "answer_fields"]

_log = logging.getLogger("cuzk.serve")
#: the proto's ProofKind number of each circuit kind
_KIND_NUMBER = {"porep": 1, "snap": 2, "wpost": 3, "winning": 4}
#: the Engine's key tiers as Curio's SRSStatus.Tier names them
TIERS = {"device": "HOT", "host": "HOT", "disk": "WARM", "cold": "COLD"}


def _ms(seconds) -> int:
    return max(0, int(round((seconds or 0.0) * 1000)))


def answer_fields(job, status: str, value) -> dict:
    """AwaitProofResponse's fields for a job's outcome (``value``: a Filecoin job's proof bytes
    or an extension job's :class:`~cuzk.serve.circuits.CircuitAnswer`)."""
    out = {"job_id": job.id, "status": status}
    if status == "COMPLETED":
        out["proof"] = value.proof_bytes if isinstance(value, CircuitAnswer) else value
    elif status == "FAILED":
        out["error_message"] = f"{type(value).__name__}: {value}"[:4000]
    t = getattr(job.engine_future, "timings", None) if job.engine_future is not None else None
    if t is not None and status in ("COMPLETED", "FAILED"):
        out.update(queue_wait_ms=_ms(t.queue_wait_s), srs_load_ms=_ms(t.key_load_s), synthesis_ms=_ms(t.synth_s),
                   gpu_compute_ms=_ms(t.device_s if t.device_s is not None else t.prove_s), total_ms=_ms(t.total_s))
    return out


def _engine_error(e: Exception) -> RequestError:
    if isinstance(e, RequestError):
        return e
    if isinstance(e, MemoryBudgetError):
        return RequestError("RESOURCE_EXHAUSTED", str(e))
    if isinstance(e, KeyMismatchError):
        return RequestError("FAILED_PRECONDITION", str(e))
    if isinstance(e, EngineError):
        return RequestError("UNAVAILABLE" if "closed" in str(e) else "FAILED_PRECONDITION", str(e))
    if isinstance(e, InputError):
        return RequestError("INVALID_ARGUMENT", str(e))
    return RequestError("INTERNAL", f"{type(e).__name__}: {e}")


class Daemon:
    """See the module doc. ``engine``: an Engine to use instead of one made from ``cfg``."""

    def __init__(self, cfg, *, engine=None):
        from cuzk.engine.engine import Engine

        self.cfg = cfg
        if cfg.synthesis_threads:
            import numba

            numba.set_num_threads(min(cfg.synthesis_threads, numba.config.NUMBA_NUM_THREADS))
        self.engine = engine or Engine(device=cfg.device, devices=list(cfg.devices) or None,
                                       workers_per_device=cfg.workers_per_device, memory_budget=cfg.engine_budget(),
                                       lookahead=cfg.lookahead, key_cache=cfg.key_cache)
        self.jobs = JobTable(retention_s=cfg.request_retention_s, max_jobs=cfg.max_jobs)
        self.started = time.time()
        self.draining = False
        self.rpc_counts: dict = {}
        self.metric_sources: list = []  #: callables adding series to serve_metrics' text (the Server's)
        self._lock = threading.Lock()
        self._circuit_locks: dict[str, threading.Lock] = {}
        self.registered: dict[str, dict] = {}  # name -> {"source", "key", "priority", "synth"}
        try:
            for entry in cfg.circuits:
                synth, key = load_entry(entry)
                self.engine.register(entry.name, synth, key, priority=entry.priority, concurrency=entry.concurrency)
                self.registered[entry.name] = {"source": "config", "key": str(key), "priority": entry.priority,
                                               "synth": synth}
        except BaseException:
            self.engine.close(wait=False, cancel_futures=True)
            raise

    def start_preload(self) -> threading.Thread | None:
        """Register and load ``[srs] preload``'s circuits on a background thread (start-up does not
        wait for a key's first read); a failure is logged and the daemon serves on."""
        if not self.cfg.preload:
            return None

        def run():
            for cid in self.cfg.preload:
                if self.draining:
                    return
                try:
                    _, ms = self.preload(cid)
                    _log.info("preloaded %s in %d ms", cid, ms)
                except (RequestError, CuzkError) as e:
                    _log.warning("[srs] preload %s: %s", cid, e)

        t = threading.Thread(target=run, name="cuzk-serve-preload", daemon=True)
        t.start()
        return t

    # -- circuits -----------------------------------------------------------------------------
    def _params(self, fc: FilecoinCircuit):
        path = self.cfg.param_cache / fc.params_name
        if not path.is_file():
            raise RequestError("FAILED_PRECONDITION", f"{fc.id}: no parameter file {path} ([srs] param_cache); "
                                                      f"fetch Filecoin's parameters for this sector size")
        return path

    def verifying_key(self, fc: FilecoinCircuit):
        from cuzk.formats.bellperson import vk_from_bytes

        path = self.cfg.param_cache / fc.vk_name
        if not path.is_file():
            raise RequestError("FAILED_PRECONDITION", f"{fc.id}: no verifying key {path} beside its parameters")
        return vk_from_bytes(path.read_bytes())

    def ensure_filecoin(self, fc: FilecoinCircuit) -> str:
        """Register ``fc`` with the Engine unless it is; returns its name."""
        from cuzk.synth import Synthesizer

        if fc.id in self.registered:
            return fc.id
        with self._lock:
            lock = self._circuit_locks.setdefault(fc.id, threading.Lock())
        with lock:  # one trace per circuit; other circuits register meanwhile
            if fc.id not in self.registered and fc.id in self.engine.circuits():
                # an Engine handed to the daemon with this circuit already registered (its key in memory)
                self.registered[fc.id] = {"source": "filecoin", "key": "(registered with the Engine by its host)",
                                          "priority": self.engine.status()["circuits"][fc.id]["priority"].lower()}
            if fc.id not in self.registered:
                params = self._params(fc)
                if fc.kind in ("porep", "snap"):
                    self.verifying_key(fc)  # refused now, not after the proof
                t0 = time.perf_counter()
                synth = Synthesizer(fc.circuit())
                priority = payloads.KIND_PRIORITY[_KIND_NUMBER[fc.kind]]
                try:
                    self.engine.register(fc.id, synth, params, priority=priority,
                                         concurrency=self.cfg.synthesis_concurrency)
                except CuzkError as e:
                    raise _engine_error(e) from None
                _log.info("registered %s (%d constraints, traced in %.1f s) with %s", fc.id,
                          synth.r1cs.n_constraints, time.perf_counter() - t0, params)
                self.registered[fc.id] = {"source": "filecoin", "key": str(params), "priority": priority}
        return fc.id

    def _name(self, circuit_id: str) -> str:
        """The Engine name of a Filecoin id or a [[circuits]] name (registering a Filecoin one)."""
        check_circuit_id(circuit_id)
        fc = filecoin_circuit(circuit_id)
        if fc is not None:
            return self.ensure_filecoin(fc)
        if circuit_id in self.registered:
            return circuit_id
        raise RequestError("NOT_FOUND", f"circuit_id: no circuit {circuit_id!r} (Filecoin ids such as wpost-32g, or "
                                        f"a [[circuits]] name: {sorted(self.registered)})")

    # -- proofs -------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self.draining:
            raise RequestError("UNAVAILABLE", "the daemon is shutting down: it takes no new work")

    def _start(self, job, new: bool, make_work, *, heavy: bool = False):
        """Submit a claimed job: ``make_work()`` -> (engine name, inputs list, partitioned, finish)."""
        if not new:
            return job
        try:
            name, inputs, partitioned, finish = make_work()
            kw = {"priority": job.priority, "deadline": job.deadline}
            future = (self.engine.submit_partitioned(name, inputs, **kw) if partitioned
                      else self.engine.submit(name, inputs[0], **kw))
        except BaseException as e:
            self.jobs.fail_claim(job, e)
            raise _engine_error(e) if isinstance(e, Exception) else e
        self.jobs.start(job, future, finish, heavy=heavy)
        return job

    def submit(self, req):
        """SubmitProof: the job (new or the one ``request_id`` names) and its queue position."""
        self._check_open()
        kind = check_proof_kind(req.proof_kind)
        request_id = check_request_id(req.request_id)
        priority = check_priority(req.priority) or payloads.KIND_PRIORITY[req.proof_kind]
        deadline = check_deadline_ms(req.deadline_unix_ms)
        fc = filecoin_circuit(payloads.circuit_of_request(req))
        defining = type(req)()
        defining.CopyFrom(req)
        for f in ("request_id", "priority", "deadline_unix_ms"):
            defining.ClearField(f)
        digest = request_digest(defining.SerializeToString(deterministic=True))
        job, new = self.jobs.claim(request_id, digest, kind, fc.id, priority, deadline)

        def work():
            if kind == "POREP_SEAL_COMMIT":
                w = payloads.porep_work(req, self.verifying_key)
            elif kind == "SNAP_DEALS_UPDATE":
                w = snap_work(req, self.verifying_key)
            else:
                w = payloads.post_work(req)
            return self.ensure_filecoin(w.circuit), list(w.inputs), w.partitioned, w.finish

        # a PoRep's or an update's check against its statement runs on the pool, not the Engine's thread
        return self._start(job, new, work, heavy=kind in ("POREP_SEAL_COMMIT", "SNAP_DEALS_UPDATE"))

    def await_job(self, job_id: str, timeout_ms: int) -> Pending:
        """AwaitProof: the answer's fields (:func:`answer_fields`) when the job ends or the timeout
        passes (:class:`~cuzk.serve.pending.Pending`: the transport waits)."""
        job = self.jobs.get(check_job_id(job_id))
        return Pending(job, check_timeout_ms(timeout_ms), lambda status, value: answer_fields(job, status, value))

    def cancel(self, job_id: str) -> tuple[bool, bool]:
        """CancelProof: (was_running, cancelled). A running proof is not stopped: it finishes."""
        job = self.jobs.get(check_job_id(job_id))
        if not job.live:
            return False, False
        if job.engine_future is not None and self.engine.cancel(job.engine_future):
            return False, True
        return job.started, False

    def assigned_device(self, job) -> str:
        f = job.engine_future
        if f is None:
            return ""
        for w in self.engine.status()["workers"]:
            if w["kind"] == "prove" and w["job"] is not None and str(w["job"]) == str(f.job_id):
                return "cpu" if w["device"] is None else f"cuda:{w['device']}"
        return ""

    # -- the extension ------------------------------------------------------------------------
    def prove_circuit(self, req) -> Pending:
        """CircuitProver.ProveCircuit: a :class:`~cuzk.serve.pending.Pending` whose answer is
        (answer fields, the proof's texts and bytes or None)."""
        self._check_open()
        name = check_circuit_id(req.circuit, "circuit")
        info = self.registered.get(name)
        if info is None or info["source"] != "config":
            raise RequestError("NOT_FOUND", f"circuit: no [[circuits]] entry {name!r} (known: "
                                            f"{sorted(n for n, i in self.registered.items() if i['source'] == 'config')})"
                                            "; Filecoin proofs go through ProvingEngine.Prove")
        if bool(req.inputs_json) == bool(req.wtns):
            raise invalid("inputs_json", "send exactly one of inputs_json and wtns")
        request_id = check_request_id(req.request_id)
        priority = check_priority(req.priority) or info["priority"]
        deadline = check_deadline_ms(req.deadline_unix_ms)
        timeout = check_timeout_ms(req.timeout_ms)
        digest = request_digest("circuit", name, req.inputs_json, req.wtns)
        job, new = self.jobs.claim(request_id, digest, f"circuit:{name}", name, priority, deadline)
        synth = info["synth"]

        def work():
            inputs = parse_inputs(req.inputs_json) if req.inputs_json else {"wtns": bytes(req.wtns)}
            inputs[TOKEN] = job.id
            job.result.add_done_callback(lambda _f: synth.take(job.id) if job.extra is None else None)

            def finish(proof):
                public = synth.take(job.id)
                job.extra = public
                return answer_texts(proof, public)  # on the prover's thread (see answer_texts)
            return name, [inputs], False, finish

        self._start(job, new, work)

        def answer(status, value):
            if status == "COMPLETED":
                return answer_fields(job, status, b""), value
            return answer_fields(job, status, value), None
        return Pending(job, timeout, answer)

    def circuit_list(self) -> list[dict]:
        keys = self.engine.status()["keys"]
        out = []
        for name, info in self.registered.items():
            if info["source"] == "config":
                out.append({"name": name, "source": "config", "curve": info["synth"].curve,
                            "priority": info["priority"], "key": info["key"], "registered": True})
        for cid in all_circuit_ids():
            fc = filecoin_circuit(cid)
            out.append({"name": cid, "source": "filecoin", "curve": "bls12_381", "registered": cid in keys,
                        "priority": payloads.KIND_PRIORITY[_KIND_NUMBER[fc.kind]],
                        "key": str(self.cfg.param_cache / fc.params_name)})
        return out

    # -- keys -----------------------------------------------------------------------------------
    def preload(self, circuit_id: str) -> tuple[bool, int]:
        name = self._name(circuit_id)
        already = self.engine.status()["keys"][name]["tier"] in ("host", "device")
        t0 = time.perf_counter()
        try:
            self.engine.preload(name)
        except CuzkError as e:
            raise RequestError("FAILED_PRECONDITION", f"{circuit_id}: {type(e).__name__}: {e}") from None
        return already, 0 if already else _ms(time.perf_counter() - t0)

    def evict(self, circuit_id: str) -> tuple[bool, int]:
        check_circuit_id(circuit_id)
        fc = filecoin_circuit(circuit_id)
        if circuit_id not in self.registered:
            if fc is not None:
                return False, 0  # a Filecoin circuit never used: nothing loaded
            raise RequestError("NOT_FOUND", f"circuit_id: no circuit {circuit_id!r}")
        loaded = self.engine.status()["keys"][circuit_id]["tier"] in ("host", "device")
        try:
            freed = self.engine.evict(circuit_id)
        except EngineError as e:
            raise RequestError("FAILED_PRECONDITION", str(e)) from None
        return loaded, freed

    # -- status ---------------------------------------------------------------------------------
    def status(self) -> dict:
        """The daemon's status: the Engine's, plus jobs, uptime and configuration facts."""
        st = self.engine.status()
        jobs = self.jobs.snapshot()
        per_kind: dict = {}
        for j in jobs:
            if j.live:
                q = per_kind.setdefault(j.kind, {"pending": 0, "in_progress": 0})
                q["in_progress" if j.started else "pending"] += 1
        return {"engine": st, "uptime_s": time.time() - self.started, "draining": self.draining,
                "queues": per_kind, "jobs": dict(self.jobs.counts), "jobs_by_kind": self.jobs.per_kind(),
                "circuits": {n: {k: v for k, v in i.items() if k != "synth"} for n, i in self.registered.items()},
                "param_cache": str(self.cfg.param_cache)}

    def metrics(self) -> str:
        return self.engine.metrics() + serve_metrics(self)

    def count_rpc(self, method: str, code: str) -> None:
        with self._lock:
            self.rpc_counts[(method, code)] = self.rpc_counts.get((method, code), 0) + 1

    def status_json(self) -> str:
        from cuzk.engine.status_http import to_jsonable

        return json.dumps(to_jsonable(self.status()))

    # -- stopping -------------------------------------------------------------------------------
    def drain(self, grace_s: float) -> dict:
        """No new work; queued jobs cancelled (answered CANCELLED); running ones given ``grace_s``
        to finish. Returns counts for the log."""
        self.draining = True
        cancelled = self.jobs.cancel_queued(self.engine.cancel)
        deadline = time.monotonic() + grace_s
        running = [j for j in self.jobs.snapshot() if j.live]
        for j in running:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            outcome_of(j, left)
        unfinished = sum(1 for j in running if j.live)
        return {"cancelled": cancelled, "running": len(running), "unfinished": unfinished}

    def close(self) -> None:
        self.draining = True
        self.engine.close(wait=False, cancel_futures=True)
        self.jobs.close()
