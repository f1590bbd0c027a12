"""Key-cache soak: proving processes beside an operator who edits, truncates, replaces, prunes
and clears their cache files.

Method. ``provers`` worker processes (``python -m tests.reliability.keycache_soak --worker``)
loop: load a small circuit's ``.zkey`` through one shared :class:`cuzk.engine.keycache.KeyCache`
directory, prove ``jobs_per_load`` statements with that one mapping (``GpuProver(device="cpu")``,
which verifies every proof before returning it), drop the key, load again. Meanwhile the driver
applies seeded faults to the cache directory, one every 10–60 ms:

* ``edit``: one to eight random bytes written in place into a cache file (made writable first,
  as root or a stray ``chmod`` would), half of them into its CSR index arrays, half anywhere;
  half the time the mtime is put back (so only the chunk samples or the proof can notice);
* ``replace``: a shortened copy renamed over an entry (``cp --remove-destination``, rsync);
* ``truncate``: an entry truncated in place, at a moment no worker has a key mapped (workers
  hold a shared ``flock`` on a gate file from load to drop, the driver takes it exclusively): a
  truncation under a live mapping is SIGBUS by the kernel's rules, documented in docs/engine.md
  as what an operator must not do, so the soak checks the rest: that every later load detects it;
* ``clear`` (``KeyCache.clear``), ``prune`` (``prune(0)``), ``unlink`` (``rm`` of an entry).

Each job ends as a proof (verified), a ``cuzk.errors`` exception (counted by type: mostly
``ProofVerificationError`` from a damaged mapping), or a *non-cuzk exception* (a defect, with its
traceback). A worker that dies by a signal is a *crash* (a defect) and is restarted.

    >>> r = run(seconds=10, provers=2, seed=1)              # doctest: +SKIP
    >>> r.crashes, r.non_cuzk, r.jobs > 0                  # doctest: +SKIP
    (0, 0, True)
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import fcntl
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import attrs

__all__ = ["SoakResult", "run", "make_keys", "main"]


@attrs.frozen
class SoakResult:
    """What a key-cache soak run counted."""

    seconds: float
    faults: dict  #: fault kind -> how many were applied (the soak's inputs)
    jobs: int  #: proofs attempted by the workers
    proofs: int  #: of those, proofs returned (each verified by the prover)
    errors: dict  #: cuzk.errors exception type -> count
    non_cuzk: int  #: jobs or loads that raised anything else (a defect)
    crashes: int  #: workers that died by a signal (a defect)
    loads: int  #: key loads
    rebuilt: int  #: loads that found their entry damaged and rebuilt it
    samples: list  #: up to 5 non-cuzk tracebacks or crash stderr tails

    @property
    def inputs(self) -> int:
        return sum(self.faults.values())


def make_keys(folder) -> tuple[str, str]:
    """A small circuit's ``.zkey`` and ``.wtns`` in ``folder`` (deterministic)."""
    import numpy as np

    from cuzk.circuits.cube import Cube
    from cuzk.formats.snarkjs import write_wtns
    from cuzk.formats.snarkjs_setup import setup_snarkjs
    from cuzk.formats.snarkjs_write import write_zkey
    from cuzk.synth import Synthesizer

    synth = Synthesizer(Cube())
    zkey, wtns = os.path.join(folder, "c.zkey"), os.path.join(folder, "c.wtns")
    write_zkey(setup_snarkjs(synth.r1cs, np.random.default_rng(3), threads=1), zkey)
    write_wtns(wtns, synth.synthesize(x=3, out=35).z)
    return zkey, wtns


# ---------------------------------------------------------------------------- the worker process
def _worker(cache_dir: str, zkey: str, wtns: str, gate: str, stop: str, jobs_per_load: int) -> int:
    import gc
    import traceback

    from cuzk.engine.keycache import KeyCache
    from cuzk.errors import CuzkError
    from cuzk.prover import GpuProver

    out = sys.stdout
    fd = os.open(gate, os.O_RDWR | os.O_CREAT, 0o600)
    while not os.path.exists(stop):
        while os.path.exists(gate + ".pause") and not os.path.exists(stop):
            time.sleep(0.005)
        fcntl.flock(fd, fcntl.LOCK_SH)
        try:
            rec = {"load": 1}
            try:
                key, info = KeyCache(cache_dir, max_bytes="unlimited").load(zkey, kind="zkey")
                rec["rebuilt"] = int(bool(info.note and info.note.startswith("rebuilt")))
            except CuzkError as e:
                key, rec["load_error"] = None, type(e).__name__
            except Exception:  # noqa: BLE001 (a defect: reported)
                key, rec["non_cuzk"], rec["trace"] = None, 1, "load: " + traceback.format_exc()[-1500:]
            results = []
            prover = None
            if key is not None:
                try:  # preparing the vk checks its points: a damaged mapping may fail here already
                    prover = GpuProver(key, device="cpu", threads=1)
                except CuzkError as e:
                    results.append(type(e).__name__)
                except Exception:  # noqa: BLE001
                    results.append("non_cuzk")
                    rec["non_cuzk"] = 1
                    rec["trace"] = "prover: " + traceback.format_exc()[-1500:]
            if prover is not None:
                for _ in range(jobs_per_load):
                    try:
                        prover.prove(key.witness(wtns))
                        results.append("proof")
                    except CuzkError as e:
                        results.append(type(e).__name__)
                    except Exception:  # noqa: BLE001
                        results.append("non_cuzk")
                        rec["non_cuzk"] = rec.get("non_cuzk", 0) + 1
                        rec.setdefault("trace", "prove: " + traceback.format_exc()[-1500:])
                del prover
            rec["jobs"] = results
            del key
            gc.collect()  # the mapping goes with the key, before the gate is released
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
        out.write(json.dumps(rec) + "\n")
        out.flush()
    return 0


# ---------------------------------------------------------------------------- the driver
@contextlib.contextmanager
def _no_mappings(gate: str):
    """No worker has a key mapped inside this block."""
    Path(gate + ".pause").touch()
    fd = os.open(gate, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
        os.unlink(gate + ".pause")


def _entries(cache_dir: str) -> list[Path]:
    return sorted(Path(cache_dir).glob("*.cuzkkey"))


def _csr_span(entry: Path):
    from cuzk.engine.keyfile import read_table

    try:
        arrays = [e for e in read_table(entry)[0]["arrays"] if ".ind" in e["name"] and e["nbytes"]]
    except Exception:  # noqa: BLE001 (damaged already: any offset will do)
        return None
    return random.choice(arrays) if arrays else None


def _fault(kind: str, cache_dir: str, gate: str, rng: random.Random) -> bool:
    """Apply one fault; whether there was something to apply it to."""
    from cuzk.engine.keycache import KeyCache

    entries = _entries(cache_dir)
    if kind in ("clear", "prune"):
        cache = KeyCache(cache_dir, max_bytes="unlimited")
        cache.clear() if kind == "clear" else cache.prune(0)
        return True
    if not entries:
        return False
    entry = rng.choice(entries)
    try:
        size = entry.stat().st_size
        if kind == "unlink":
            entry.unlink()
        elif kind == "replace":
            cut = entry.with_name(entry.name + ".cut")
            cut.write_bytes(entry.read_bytes()[: rng.randrange(max(size, 1))])
            os.replace(cut, entry)
        elif kind == "truncate":
            with _no_mappings(gate):
                os.chmod(entry, 0o644)
                os.truncate(entry, rng.randrange(max(size, 1)))
        elif kind == "edit":
            st = entry.stat()
            span = _csr_span(entry) if rng.random() < 0.5 else None
            lo, n = (span["offset"], span["nbytes"]) if span else (0, size)
            os.chmod(entry, 0o644)
            fd = os.open(entry, os.O_WRONLY)
            try:
                for _ in range(rng.randint(1, 8)):
                    os.pwrite(fd, bytes([rng.randrange(256)]), lo + rng.randrange(max(n, 1)))
            finally:
                os.close(fd)
            os.chmod(entry, 0o444)
            if rng.random() < 0.5:
                os.utime(entry, ns=(st.st_atime_ns, st.st_mtime_ns))
    except FileNotFoundError:  # cleared or replaced meanwhile
        return False
    return True


_KINDS = ("edit",) * 6 + ("replace", "truncate", "clear", "prune", "unlink")


def run(seconds: float = 20.0, provers: int = 2, seed: int = 0, jobs_per_load: int = 4, folder=None,
        log=None, min_faults: int = 0) -> SoakResult:
    """Run the soak for ``seconds`` of faults, and on until ``min_faults`` edits and as many
    other faults were applied (at most 10x ``seconds``: a loaded machine slows the workers, and
    a truncation waits for their mappings); see the module doc."""
    rng = random.Random(seed)
    root = Path(folder or tempfile.mkdtemp(prefix="cuzk-kc-soak-"))
    root.mkdir(parents=True, exist_ok=True)
    zkey, wtns = make_keys(root)
    cache_dir, gate, stop = str(root / "cache"), str(root / "gate"), str(root / "stop")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]), *sys.path])}
    cmd = [sys.executable, "-m", "tests.reliability.keycache_soak", "--worker", cache_dir, zkey, wtns, gate, stop,
           str(jobs_per_load)]

    def spawn(i):
        return subprocess.Popen(cmd, stdout=open(root / f"w{i}.out", "a"), stderr=open(root / f"w{i}.err", "a"), env=env)

    workers = [spawn(i) for i in range(provers)]
    faults, crashes, samples = collections.Counter(), 0, []
    t0 = time.monotonic()
    # the first loads fill the cache before any fault (a worker's import takes a few seconds)
    while not _entries(cache_dir) and time.monotonic() - t0 < 120:
        time.sleep(0.05)
    t0 = time.monotonic()
    def more() -> bool:
        spent = time.monotonic() - t0
        short = faults["edit"] < min_faults or sum(faults.values()) < 2 * min_faults
        return spent < seconds or (short and spent < 10 * seconds)

    while more():
        kind = rng.choice(_KINDS)
        if _fault(kind, cache_dir, gate, rng):
            faults[kind] += 1
        for i, w in enumerate(workers):
            if w.poll() is not None:  # a worker only exits when told to: anything else is a crash
                crashes += 1
                samples.append(f"worker exit {w.returncode}: {(root / f'w{i}.err').read_text()[-1500:]}")
                workers[i] = spawn(i)
        time.sleep(rng.uniform(0.01, 0.06))
    wall = time.monotonic() - t0
    Path(stop).touch()
    for w in workers:
        try:
            w.wait(120)
        except subprocess.TimeoutExpired:
            w.kill()
            samples.append("worker did not stop")
        crashes += w.returncode is not None and w.returncode != 0
    jobs = proofs = loads = rebuilt = non_cuzk = 0
    errors: collections.Counter = collections.Counter()
    for i in range(provers):
        for line in (root / f"w{i}.out").read_text().splitlines():
            rec = json.loads(line)
            loads += rec["load"]
            rebuilt += rec.get("rebuilt", 0)
            if "load_error" in rec:
                errors[rec["load_error"]] += 1
            for r in rec["jobs"]:
                jobs += 1
                proofs += r == "proof"
                if r not in ("proof", "non_cuzk"):
                    errors[r] += 1
            non_cuzk += rec.get("non_cuzk", 0)
            if "trace" in rec:
                samples.append(rec["trace"])
    res = SoakResult(seconds=wall, faults=dict(faults), jobs=jobs, proofs=proofs, errors=dict(errors),
                     non_cuzk=non_cuzk, crashes=crashes, loads=loads, rebuilt=rebuilt, samples=samples[:5])
    if log:
        log(format_result(res))
    return res


def format_result(r: SoakResult) -> str:
    return (f"{r.seconds:.0f} s: {r.inputs} faults {dict(sorted(r.faults.items()))}; {r.loads} loads "
            f"({r.rebuilt} rebuilt), {r.jobs} jobs: {r.proofs} proofs, cuzk errors {dict(sorted(r.errors.items()))}; "
            f"crashes {r.crashes}, non-cuzk exceptions {r.non_cuzk}")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        cache_dir, zkey, wtns, gate, stop, k = argv[1:7]
        return _worker(cache_dir, zkey, wtns, gate, stop, int(k))
    ap = argparse.ArgumentParser(prog="python -m tests.reliability.keycache_soak", description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--provers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs-per-load", type=int, default=4)
    args = ap.parse_args(argv)
    r = run(args.seconds, args.provers, args.seed, args.jobs_per_load, log=print)
    for s in r.samples:
        print("----\n" + s)
    return 1 if r.crashes or r.non_cuzk else 0


if __name__ == "__main__":
    sys.exit(main())
