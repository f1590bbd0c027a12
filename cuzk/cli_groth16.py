"""``cuzk groth16 prove|verify``: snarkjs-compatible proving and verification from the shell.

Mirrors snarkjs's argument order, so a script can swap ``snarkjs`` for ``cuzk``::

    cuzk groth16 prove circuit.zkey witness.wtns proof.json public.json
    cuzk groth16 verify verification_key.json public.json proof.json

``prove`` reads the zkey through the key cache (:mod:`cuzk.engine.keycache`): the first prove
checks every point and caches the key; later ones map it and skip the checks (``--no-cache``
reads and checks it every time). ``proof.json`` and ``public.json`` are written both or neither.
``verify`` prints ``OK!`` and exits 0 for a valid proof, prints ``Invalid proof`` and exits 1
otherwise (as snarkjs does). Also runnable as ``python -m cuzk.cli_groth16 prove ...``.

    >>> main(["verify", "vk.json", "public.json", "proof.json"])     # doctest: +SKIP
    OK!
    0
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Sequence

from cuzk.errors import CuzkError

__all__ = ["add_groth16_parser", "main", "file_errors"]


def file_errors(command: str):
    """A decorator for ``cuzk <command> <sub-command>`` functions: a missing or unreadable file is
    reported as one line and exit status 1 (also under ``cuzk``'s own main)."""
    def wrap(fn):
        def run(args) -> int:
            try:
                return fn(args)
            except OSError as e:
                print(f"cuzk {command} {getattr(args, command + '_command')}: error: {e}", file=sys.stderr)
                return 1
        return run
    return wrap


_files = file_errors("groth16")


@_files
def _cmd_prove(args) -> int:
    from cuzk.atomic_file import refuse_same_file, write_together
    from cuzk.formats.snarkjs import read_zkey
    from cuzk.formats.snarkjs_json import proof_to_json, public_to_json
    from cuzk.prover import GpuProver

    refuse_same_file([args.proof, args.public])  # before the proving, not after it
    t0 = time.perf_counter()
    if args.trusted or args.no_cache:
        pk, how = read_zkey(args.zkey, r1cs=args.r1cs, checked=not args.trusted), "read"
    else:  # checked once, then memory-mapped from the key cache (docs/engine.md, "Key tiers")
        from cuzk.engine.keycache import KeyCache

        pk, info = KeyCache(args.key_cache).load(args.zkey, kind="zkey", r1cs=args.r1cs, progress=_progress_bar())
        how = "key cache hit" if info.hit else "checked read, cached"
    t1 = time.perf_counter()
    witness = pk.witness(args.wtns)
    prover = GpuProver(pk, device=args.device, threads=args.threads)
    t2 = time.perf_counter()
    proof = prover.prove(witness)  # verified before it is returned
    t3 = time.perf_counter()
    # both files or neither: a proof.json without its public.json would be read as another statement
    write_together({args.proof: _json_bytes(proof_to_json(proof)),
                    args.public: _json_bytes(public_to_json(witness.public_inputs))})
    if args.verbose:
        print(f"zkey ({how}) {t1 - t0:.3f} s, witness + prover set-up {t2 - t1:.3f} s, prove {t3 - t2:.3f} s "
              f"({prover.device})", file=sys.stderr)
    return 0


def _json_bytes(obj) -> bytes:
    import json

    return json.dumps(obj, indent=1).encode()


def _progress_bar():
    """A one-line progress bar on stderr for a long first (checked) read, only on a terminal."""
    if not sys.stderr.isatty():
        return None
    last = [-1]

    def show(stage: str, done: int, total: int) -> None:
        pct = int(100 * done / total) if total else 100
        if pct != last[0]:
            last[0] = pct
            bar = "#" * (pct // 4)
            print(f"\r{stage:>5} [{bar:<25}] {pct:3d}%", end="" if pct < 100 else "\n", file=sys.stderr, flush=True)

    return show


@_files
def _cmd_verify(args) -> int:
    from cuzk.formats.snarkjs_json import read_proof_json, read_public_json, read_vk_json
    from cuzk.groth16 import verify

    vk = read_vk_json(args.vk)
    public = read_public_json(args.public)
    proof = read_proof_json(args.proof)
    if len(public) != vk.n_public:
        print(f"Invalid proof: {len(public)} public signals, the key expects {vk.n_public}")
        return 1
    if verify(vk, public, proof):
        print("OK!")
        return 0
    print("Invalid proof")
    return 1


def add_groth16_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``groth16`` command (with ``prove`` and ``verify``) to an argparse subparsers object."""
    g = subparsers.add_parser("groth16", help="snarkjs-compatible Groth16: prove from .zkey + .wtns, verify JSON proofs")
    gsub = g.add_subparsers(dest="groth16_command", required=True)
    p = gsub.add_parser("prove", help="prove a snarkjs .zkey + .wtns; write proof.json and public.json")
    p.add_argument("zkey")
    p.add_argument("wtns")
    p.add_argument("proof", help="output proof.json")
    p.add_argument("public", help="output public.json")
    p.add_argument("--r1cs", help="the circuit's .r1cs: check it against the zkey and the witness row by row")
    p.add_argument("--device", default="auto", help="auto, cuda or cpu")
    p.add_argument("--threads", type=int, default=None, help="CPU kernel threads (default: all)")
    p.add_argument("--trusted", action="store_true",
                   help="skip the on-curve/subgroup check of every zkey point (the proof is still verified)")
    p.add_argument("--no-cache", action="store_true",
                   help="read and check the zkey every time instead of going through the key cache")
    p.add_argument("--key-cache", default=None,
                   help="key-cache directory (default: $CUZK_CACHE_DIR/keys or the user's cache dir)")
    p.add_argument("-v", "--verbose", action="store_true", help="print stage times to stderr")
    p.set_defaults(fn=_cmd_prove, fast_exit=True)  # nothing to tear down: cuzk/cli_exit.py
    v = gsub.add_parser("verify", help="verify a snarkjs proof.json against verification_key.json and public.json")
    v.add_argument("vk")
    v.add_argument("public")
    v.add_argument("proof")
    v.set_defaults(fn=_cmd_verify, fast_exit=True)
    return g


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m cuzk.cli_groth16 prove|verify ...``; returns the exit status (1 on a cuzk error)."""
    return _run(argv)[0]


def _run(argv):
    parser = argparse.ArgumentParser(prog="cuzk groth16")
    sub = parser.add_subparsers(dest="command", required=True)
    add_groth16_parser(sub)
    args = parser.parse_args(["groth16", *(argv if argv is not None else sys.argv[1:])])
    try:
        return args.fn(args), args
    except CuzkError as e:
        print(f"cuzk groth16 {args.groth16_command}: error: {e}", file=sys.stderr)
        return 1, args


if __name__ == "__main__":
    from cuzk.cli_exit import exit_process

    exit_process(*_run(None))
