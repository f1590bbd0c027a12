"""Check the CUDA backend and time it: one short GPU window, the most proof.

    python3 benchmarks/gpu_check.py                  # the whole run (<= 6 min on a GPU)
    python3 benchmarks/gpu_check.py --quick          # 2^20 kernels and a 2^16 proof
    python3 benchmarks/gpu_check.py --only smoke,proofs   # a short rerun of what failed
    python3 benchmarks/gpu_check.py --dry-run        # the time budget per section, nothing run
    python3 benchmarks/gpu_check.py --host           # the same script on the host build of the
                                                     # kernels at toy sizes (CI runs it; needs g++)

Order: (1) smoke: every kernel once, each launch synchronised, a sticky CUDA error aborts the run
naming its kernel; (2) verified timings at every timed size (MSM bases tiled from 4096 points,
checked by one 4096-point CPU MSM of the folded scalars; NTT forward-then-inverse on the device,
and the CPU NTT at 2^16); (3) per-phase event breakdown of the G1/G2 MSM and the NTT passes; (4)
the sweep (MSM window/segment, NTT pass plans); the build (registers, local memory per kernel);
(5) verified Groth16 proofs at 2^18 then 2^20 (a failing one is taken apart: H and the five MSMs
against the CPU backend), then the G1 MSM built with field.cuh's per-instruction chains
(-DCUZK_CHAIN_ONLY) against the default PTX blocks; (6) optional sections behind flags (--cpu-proof,
--g2-cpu, --two-workers, --all-optional), skipped once past the soft deadline. Between them, the
Engine on the GPU (gpu_check_engine.py): two circuits, a CRITICAL job behind a backlog.

While the GPU works the CPU works too: at the start the NVRTC compile into the cubin cache, the
Numba warm-up and the trace + setup + witness of each proof circuit (saved to --work) start in the
background, and ``nvidia-smi dmon`` logs clocks and throttling into $OUT/dmon.txt. Every row is
printed and appended to $OUT/gpu_check.jsonl the moment it is measured; Ctrl-C (gpu_session.sh's
timeout sends SIGINT first) still prints the summary. Exit status 0 only if every verified row
matched and no section failed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
import traceback

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cuzk.kernels import cuda  # noqa: E402
from cuzk.curves import get as _get_curve
BLS_CUDA = cuda.kernels_for(_get_curve("bls12_381").cuda)  # BLS12-381's CUDA kernels
cpu = _get_curve("bls12_381").kernels  # BLS12-381's CPU kernels
import gpu_check_sections as sections  # noqa: E402

ANCHORS = {  # ICICLE v3 on an RTX 4090 (inputs on GPU) and the H200 targets; ms
    "Fr NTT 2^20": "0.36 (target <= 0.4)", "G1 MSM 2^20": "24.7 (target <= 20)", "G2 MSM 2^20": "70.3",
    "G1 MSM 2^24": "109 (Yrrid)",
}
POREP_CHALLENGES = {10: 0, 12: 1, 14: 5, 16: 22, 18: 88, 20: 350}  # porep_like(leaves=1024) fits 2^k


class Reporter:
    """Prints each row and appends it to ``<out>/gpu_check.jsonl`` at once (nothing measured is lost)."""

    def __init__(self, out_dir: str, t0: float):
        os.makedirs(out_dir, exist_ok=True)
        self.path = os.path.join(out_dir, "gpu_check.jsonl")
        self.t0, self.rows, self.failed_sections, self.notes = t0, [], [], []
        self._lock = threading.Lock()

    def _write(self, rec: dict) -> None:
        with self._lock, open(self.path, "a") as f:
            f.write(json.dumps(rec, default=float) + "\n")

    def row(self, section: str, label: str, ms: float | None = None, verified: bool | None = None, note: str = "",
            **fields) -> None:
        rec = {"t_s": round(time.perf_counter() - self.t0, 2), "section": section, "label": label, "ms": ms,
               "verified": verified, "note": note, **fields}
        self.rows.append(rec)
        self._write(rec)
        ok = {True: "OK", False: "MISMATCH", None: ""}[verified]
        ms_txt = f"{ms:11.3f} ms" if ms is not None else " " * 14
        print(f"    {label:<58}{ms_txt}  {ok:<8} {ANCHORS.get(label, '')} {note}".rstrip(), flush=True)

    def note(self, text: str) -> None:
        self.notes.append(text)
        self._write({"t_s": round(time.perf_counter() - self.t0, 2), "note": text})
        print(f"  note: {text}", flush=True)

    def summary(self, interrupted: bool = False) -> int:
        bad = [r["label"] for r in self.rows if r.get("verified") is False]
        checked = sum(1 for r in self.rows if r.get("verified") is not None)
        status = "INTERRUPTED" if interrupted else ("all OK" if not (bad or self.failed_sections) else "FAILED")
        print(f"total {time.perf_counter() - self.t0:.0f} s; {len(self.rows)} rows, {checked} verified, "
              f"{len(bad)} mismatched; {status}")
        if bad:
            print("  mismatched: " + "; ".join(bad))
        if self.failed_sections:
            print("  failed sections: " + ", ".join(self.failed_sections))
        self._write({"summary": status, "rows": len(self.rows), "verified": checked, "mismatched": bad,
                     "failed_sections": self.failed_sections})
        return 0 if status == "all OK" else 1


# ---------------------------------------------------------------- background work
def _porep(log: int):
    from cuzk.circuits import Cube
    from cuzk.circuits.porep import porep_like

    k = POREP_CHALLENGES.get(log)
    if k is None:
        raise SystemExit(f"proof sizes must be among {sorted(POREP_CHALLENGES)}, got 2^{log}")
    if k == 0:
        return Cube(), {"x": 3, "out": 35}
    circuit = porep_like(leaves=1024, challenges=k)
    return circuit, circuit.sample_inputs(seed=1)


def prepare_proof(log: int, work: str) -> None:
    """Trace, set up and synthesize the 2^log circuit; save key and witness under ``work`` (npz +
    JSON, never pickle), then a marker file, so another process can take them."""
    import cuzk
    from cuzk.groth16 import setup

    circuit, inputs = _porep(log)
    synth = cuzk.Synthesizer(circuit)
    pk, _ = setup(synth.r1cs, rng=np.random.default_rng(1))
    save_proof(f"proof_{log}", work, pk, synth.synthesize(**inputs), synth.r1cs.n_constraints)


def save_proof(name: str, work: str, pk, w, constraints: int, **extra) -> None:
    """Key, witness and public inputs under ``work/name*`` (npz + JSON), then ``name.done``."""
    base = os.path.join(work, name)
    d = pk.resolved_density()
    np.savez(base + "_key.npz", h=pk.h, l=pk.l, a=pk.a, b_g1=pk.b_g1, b_g2=pk.b_g2, a_aux=d.a_aux,
             b_input=d.b_input, b_aux=d.b_aux, vk=np.frombuffer(pk.vk.to_bytes(), np.uint8))
    np.savez(base + "_witness.npz", z=w.z, a=w.a, b=w.b, c=w.c)
    meta = {"public": [int(x) for x in w.public_inputs], "digest": w.digest, "convention": pk.convention,
            "key_digest": pk.digest, "n_constraints": pk.n_constraints, "constraints": constraints, **extra}
    with open(base + ".json", "w") as f:
        json.dump(meta, f)
    open(base + ".done", "w").close()


def load_proof(log, work: str):
    """(pk, witness, public inputs) saved by :func:`save_proof`: ``log`` an int (``proof_<log>``)
    or a name."""
    from cuzk.groth16 import ProvingKey, VerifyingKey
    from cuzk.groth16.keys import Density
    from cuzk.synth import Synthesized

    base = os.path.join(work, log if isinstance(log, str) else f"proof_{log}")
    with open(base + ".json") as f:
        meta = json.load(f)
    k = np.load(base + "_key.npz", allow_pickle=False)
    pk = ProvingKey(vk=VerifyingKey.from_bytes(k["vk"].tobytes(), checked=False), h=k["h"], l=k["l"], a=k["a"],
                    b_g1=k["b_g1"], b_g2=k["b_g2"], density=Density(k["a_aux"], k["b_input"], k["b_aux"]),
                    convention=meta["convention"], digest=meta["key_digest"], n_constraints=meta["n_constraints"])
    wz = np.load(base + "_witness.npz", allow_pickle=False)
    w = Synthesized(z=wz["z"], a=wz["a"], b=wz["b"], c=wz["c"], public_inputs=meta["public"], digest=meta["digest"])
    return pk, w, meta["public"]


def warm_numba() -> None:
    """Compile (or load) every CPU kernel the run uses: the CPU prover, CPU MSMs, NTT, the combine."""
    import cuzk
    from cuzk.circuits import Cube
    from cuzk.groth16 import create_proof, setup

    synth = cuzk.Synthesizer(Cube())
    pk, _ = setup(synth.r1cs, rng=np.random.default_rng(2))
    create_proof(pk, synth.synthesize(x=3, out=35), 5, 6, backend="cpu")
    for group in ("g1", "g2"):
        pts, sc = sections._edge_msm_instance(group, 8)
        getattr(cpu, f"msm_{group}")(pts, sc)


class Background:
    """The CPU work started at the beginning: subprocesses on a GPU machine (16 cores), threads on
    the host build and the fake (same functions, less start-up time in CI)."""

    def __init__(self, args, rep: Reporter, arch: str | None):
        self.args, self.rep, self.work = args, rep, args.work
        self.procs: dict = {}
        self.threads: dict = {}
        self.errors: dict = {}
        os.makedirs(self.work, exist_ok=True)
        for name in os.listdir(self.work):  # stale markers from an earlier run
            if name.endswith(".done"):
                os.remove(os.path.join(self.work, name))
        self.use_processes = not (args.host or args.toy)
        if arch is not None:
            self._start("compile", ["--task", "compile", "--arch", arch])
            if _wanted(args, "chain A/B", None):
                self._start("compile-chain", ["--task", "compile", "--arch", arch, "--define", "CUZK_CHAIN_ONLY"])
        if self.use_processes:  # a thread would only contend for the GIL with the main thread's own compiles
            self._start("numba", ["--task", "numba"], warm_numba)
        else:
            rep.note("Numba warm-up: on demand here (a background process on a GPU machine)")
        logs = ",".join(str(k) for k in args.sizes.prove_logs)
        self._start("prepare", ["--task", "prepare", "--prove-logs", logs, "--work", self.work],
                    lambda: [prepare_proof(k, self.work) for k in args.sizes.prove_logs])
        if self.use_processes and _wanted(args, "PoRep", None):  # seal + C1 + setup: minutes, a GPU machine's cores
            self._start("porep", ["--task", "porep", "--work", self.work])

    def _start(self, name, argv, fn=None):
        if self.use_processes:
            log = open(os.path.join(self.work, f"{name}.log"), "w")
            self.procs[name] = subprocess.Popen([sys.executable, os.path.abspath(__file__), *argv], stdout=log,
                                                stderr=subprocess.STDOUT, env=os.environ.copy())
            return

        def run():
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - reported where its result is needed
                self.errors[name] = e

        t = self.threads[name] = threading.Thread(target=run, name=f"gpu-check-{name}", daemon=True)
        t.start()

    def wait(self, name: str, timeout: float = 600) -> None:
        if name in self.procs:
            rc = self.procs[name].wait(timeout)
            if rc:
                tail = open(os.path.join(self.work, f"{name}.log")).read()[-2000:]
                raise RuntimeError(f"background task {name} failed (rc {rc}):\n{tail}")
        elif name in self.threads:
            self.threads[name].join(timeout)
            if name in self.errors:
                raise RuntimeError(f"background task {name} failed") from self.errors[name]

    def proof(self, log, timeout: float = 300, task: str = "prepare"):
        """What background ``task`` saved for ``log`` (a size 2^log, or a name): waits for its marker."""
        name = log if isinstance(log, str) else f"proof_{log}"
        what = name if isinstance(log, str) else f"the 2^{log} proof circuit"
        marker = os.path.join(self.work, f"{name}.done")
        t0 = time.perf_counter()
        while not os.path.exists(marker):
            if time.perf_counter() - t0 > timeout:
                raise TimeoutError(f"{what} was not ready after {timeout:.0f} s (see {self.work})")
            proc = self.procs.get(task)
            if (proc is not None and proc.poll() is not None) or (task in self.threads and
                                                                  not self.threads[task].is_alive()):
                self.wait(task, 1)
                raise RuntimeError(f"{what} was not prepared")
            if proc is None and task not in self.threads:
                raise RuntimeError(f"{what}: no background task {task!r} was started")
            time.sleep(0.2)
        waited = time.perf_counter() - t0
        if waited > 1:
            self.rep.note(f"waited {waited:.0f} s for the background preparation of {what}")
        return load_proof(log, self.work)

    def chain_runtime(self):
        if "compile-chain" not in self.procs:
            return None
        self.wait("compile-chain")
        return cuda.CupyRuntime(0, defines=("CUZK_CHAIN_ONLY",))

    def stop(self) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                p.terminate()


def run_task(args) -> int:
    """A background task in its own process (``--task``)."""
    if args.task == "compile":
        from cuzk.kernels.cuda_runtime import _compile_cubin

        t0 = time.perf_counter()
        path = _compile_cubin(args.arch, tuple(args.define))
        print(f"cubin {path} in {time.perf_counter() - t0:.1f} s")
    elif args.task == "numba":
        warm_numba()
    elif args.task == "porep":
        from gpu_check_porep import prepare_partition

        prepare_partition(args.work, save_proof)
    elif args.task == "prepare":
        for log in (int(k) for k in args.prove_logs.split(",")):
            t0 = time.perf_counter()
            prepare_proof(log, args.work)
            print(f"2^{log}: trace + setup + witness {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


# ---------------------------------------------------------------- driver
def _host_runtime():
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from cuda_host import host_runtime

    rt = host_runtime.get_runtime()

    def get_runtime(device_id=None, curve=None):  # the public wrappers and GpuProver use the host build
        return rt if curve is None or curve.name == rt.curve.name else host_runtime.get_runtime(curve=curve.name)

    cuda.get_runtime = get_runtime
    cuda.is_available = lambda device_id=0: (True, "host build of the kernels")
    return rt


def _describe(rt, host: bool) -> str:
    import numba

    from cuzk import _runtime

    base = (f"python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__} "
            f"({_runtime.threading_layer_choice()}), {os.cpu_count()} CPU cores")
    if host:
        return f"host build of the CUDA sources (g++), {base}"
    dev = rt.xp.cuda.runtime.getDeviceProperties(rt.device_id)
    return (f"{dev['name'].decode()}: {dev['multiProcessorCount']} SMs, {dev['totalGlobalMem'] / 2**30:.0f} GiB, "
            f"sm_{dev['major']}{dev['minor']}, CUDA runtime {rt.xp.cuda.runtime.runtimeGetVersion()}, "
            f"cupy {rt.xp.__version__}; {base}")


def _dmon(args, rep):
    if args.host or args.toy or not shutil.which("nvidia-smi"):
        rep.note("nvidia-smi dmon skipped (" + ("host build" if args.host or args.toy else "no nvidia-smi") + ")")
        return None
    f = open(os.path.join(args.out, "dmon.txt"), "w")
    return subprocess.Popen(["nvidia-smi", "dmon", "-s", "pucv", "-o", "T"], stdout=f, stderr=subprocess.STDOUT)


def dry_run(args) -> int:
    host = args.host or args.toy
    total = 0
    print(f"time budget per section ({'host build' if host else 'GPU'}; background: NVRTC compile ~25 s, "
          "Numba warm-up ~90 s cold, trace + setup of the proof circuits ~60-120 s, all beside the GPU):")
    for name, _, gpu_s, host_s, flag in sections.SECTIONS:
        on = _wanted(args, name, flag)
        s = host_s if host else gpu_s
        total += s if on else 0
        why = "" if on else f"(skipped: {'--' + flag.replace('_', '-') if flag else 'not in --only'})"
        print(f"  {name:<22}{s:>5} s  {why}")
    print(f"  {'total':<22}{total:>5} s  (+ machine start; soft deadline {args.deadline:.0f} s for optional sections)")
    return 0


def _wanted(args, name: str, flag) -> bool:
    """--only picks sections by (part of) their name; else every section but --skip's, the
    optional ones only with their flag or --all-optional."""
    if args.only:
        return any(o.strip().lower() in name.lower() for o in args.only.split(",") if o.strip())
    if any(o.strip().lower() in name.lower() for o in args.skip.split(",") if o.strip()):
        return False
    return flag is None or args.all_optional or getattr(args, flag)


class Context:
    def __init__(self, rt, sz, rep, background):
        self.rt, self.sz, self.rep, self.background, self.proofs = rt, sz, rep, background, {}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the 2^20 kernel timings, a 2^16 proof")
    ap.add_argument("--host", action="store_true", help="run on the host build of the kernels (toy sizes)")
    ap.add_argument("--toy", action="store_true", help="toy sizes on the CUDA runtime (tests, with a fake CuPy)")
    ap.add_argument("--dry-run", action="store_true", help="print the time budget per section and exit")
    ap.add_argument("--only", default="", help="comma-separated section names to run (a rerun of what failed)")
    ap.add_argument("--skip", default="", help="comma-separated section names to skip")
    ap.add_argument("--prove-logs", default="", help="proof sizes 2^k, comma-separated (default 18,20)")
    ap.add_argument("--out", default=os.environ.get("OUT") or os.path.join(ROOT, "gpu_check_out"),
                    help="where gpu_check.jsonl and dmon.txt go (default $OUT or ./gpu_check_out)")
    ap.add_argument("--work", default=None, help="scratch for the prepared proof circuits (default a temp dir)")
    ap.add_argument("--deadline", type=float, default=330.0, help="soft deadline (s): optional sections start before it")
    for flag, what in (("cpu-proof", "the CPU backend's proof of the largest size"),
                       ("g2-cpu", "the largest proof with MSM_B2 on the CPU beside the GPU"),
                       ("two-workers", "two threads proving at once"),
                       ("bn254", "a BN254 proof through the CUDA path (its own kernel module)")):
        ap.add_argument(f"--{flag}", action="store_true", help=f"optional: {what}")
    ap.add_argument("--all-optional", action="store_true", help="every optional section (until the deadline)")
    ap.add_argument("--task", choices=("compile", "numba", "prepare", "porep"), help=argparse.SUPPRESS)
    ap.add_argument("--arch", help=argparse.SUPPRESS)
    ap.add_argument("--define", action="append", default=[], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.task:
        return run_task(args)
    toy = args.host or args.toy
    args.sizes = sections.Sizes(toy, args.quick, [int(k) for k in args.prove_logs.split(",") if k])
    if args.dry_run:
        return dry_run(args)
    args.work = args.work or os.path.join(os.environ.get("TMPDIR", "/tmp"), f"cuzk_gpu_check_{os.getpid()}")
    t_start = time.perf_counter()
    rep = Reporter(args.out, t_start)
    rep._write({"run": "start", "argv": sys.argv[1:] if argv is None else list(argv), "host": args.host})
    arch = None
    if not toy:
        ok, reason = cuda.is_available()
        if not ok:  # a failure, not a quiet 0: on the lent machine this means the run checked nothing
            print(f"gpu_check: FAILED: no usable GPU ({reason}). Run on a CUDA machine with CuPy, "
                  "or with --host on the host build of the kernels.")
            return 2
        import cupy

        arch = str(cupy.cuda.Device(0).compute_capability)
    dmon = _dmon(args, rep)
    background = Background(args, rep, arch)
    interrupted = False
    try:
        if args.host:
            rt = _host_runtime()
            rep.note("timings are wall clock on the host build (CUDA-event timing needs a GPU)")
        else:
            if arch is not None:
                t0 = time.perf_counter()
                background.wait("compile")
                rep.row("start", "NVRTC compile into the cubin cache (background)", ms=(time.perf_counter() - t0) * 1e3)
            t0 = time.perf_counter()
            rt = cuda.get_runtime(curve=BLS_CUDA.curve)
            rep.row("start", "kernel module load", ms=(time.perf_counter() - t0) * 1e3)
        print(_describe(rt, args.host), flush=True)
        ctx = Context(rt, args.sizes, rep, background)
        for name, fn, _, _, flag in sections.SECTIONS:
            if not _wanted(args, name, flag):
                continue
            if flag and time.perf_counter() - t_start > args.deadline:
                rep.note(f"{name}: skipped, past the soft deadline of {args.deadline:.0f} s")
                continue
            t0 = time.perf_counter()
            print(f"{name}:", flush=True)
            try:
                fn(ctx)
            except Exception:  # noqa: BLE001 - report and go on: one run must say as much as it can
                rep.failed_sections.append(name)
                print(f"{name}: FAILED after {time.perf_counter() - t0:.1f} s")
                traceback.print_exc(file=sys.stdout)
            print(f"{name}: {time.perf_counter() - t0:.1f} s", flush=True)
            if getattr(rt, "broken", None):  # a sticky CUDA error: every later call would fail too
                rep.note(f"aborting: {rt.broken}")
                break
    except KeyboardInterrupt:
        interrupted = True
        print("\ninterrupted (SIGINT): the rows so far are in " + rep.path)
    finally:
        background.stop()
        if dmon is not None:
            dmon.terminate()
    return rep.summary(interrupted)


if __name__ == "__main__":
    sys.exit(main())
