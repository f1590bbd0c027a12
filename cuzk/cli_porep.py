"""``cuzk porep seal|c2|verify``: Filecoin's sealing proof from the shell, on files.

For a storage provider who wants to try cuzk on a sector without Curio: ``c2`` reads the C1
output filecoin-ffi writes (filecoin-proofs-api's ``SealCommitPhase1Output`` JSON, or Curio's
envelope around it) and the partition circuit's ``.params`` file under the name filecoin-proofs
looks for in its parameter cache, proves every partition and writes filecoin-proofs' proof bytes
(partitions × 192). ``seal`` makes such a C1 file with cuzk's native sealer, ``verify`` checks a
proof as the chain would (public inputs recomputed from the sector's statement)::

    cuzk porep seal sector.dat c1.json --registered-proof 5 --prover-id 00..01 --sector-id 7 \\
        --ticket 0909..09 --seed 6464..83
    cuzk porep c2 c1.json proof.bin --param-cache /var/tmp/filecoin-proof-parameters
    cuzk porep verify c1.json proof.bin --param-cache /var/tmp/filecoin-proof-parameters

The parameter cache defaults to ``$FIL_PROOFS_PARAMETER_CACHE``, else rust-fil-proofs' own
default ``/var/tmp/filecoin-proof-parameters`` (as ``cuzk serve``'s ``[srs] param_cache``).
``c2`` reads the ``.params`` file through the key cache, as ``cuzk groth16 prove`` reads a zkey:
the first read checks every point, later ones map the cached key. The partitions run as one
:class:`cuzk.Engine` job (a unit each, ``--concurrency`` syntheses at once), so a 32 GiB
sector's ten partitions synthesize while earlier ones prove. The proof is checked against
the statement before it is written (with the ``.vk`` file beside the parameters where there is
one, else the key's own), so a proof file on disk is one ``verify`` accepts.

    >>> build = __import__("argparse").ArgumentParser(prog="cuzk").add_subparsers(dest="command")
    >>> add_porep_parser(build).prog
    'cuzk porep'
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from cuzk.cli_groth16 import file_errors
from cuzk.errors import InputError

__all__ = ["add_porep_parser", "read_c1", "params_paths"]


def read_c1(path):
    """The :class:`~cuzk.circuits.filecoin.porep.c1.SealCommitPhase1Output` in ``path``: C1 JSON
    as filecoin-ffi writes it, or Curio's envelope ``{"SectorNum", "Phase1Out", "SectorSize"}``
    around it (whose ``SectorSize`` must be the C1 output's), checked (``VanillaFormatError``
    naming the field that is wrong; ``InputError`` for a path that is not a regular file)."""
    from cuzk.bounded_json import read_json_file
    from cuzk.circuits.filecoin.porep.c1 import (MAX_C1_JSON_BYTES, SealCommitPhase1Output, check_envelope_size,
                                                 curio_envelope_doc)
    from cuzk.errors import VanillaFormatError

    f, _ = _open_regular(path, "a C1 file")  # /dev/zero would be read up to the C1 bound below
    with f:
        head = f.read(256)
    if b'"Phase1Out"' in head:  # Go's json.Marshal writes SectorNum, then Phase1Out: near the start
        doc = read_json_file(path, VanillaFormatError, max_bytes=MAX_C1_JSON_BYTES // 3 * 4 + 4096,  # base64 of it
                             why="more than an envelope of the largest C1 output can be")
        env, text = curio_envelope_doc(doc, str(path))
        c1 = SealCommitPhase1Output.from_json(text, f"{path}: Phase1Out")
        # the check cuzk serve makes against its request's sector_size (cuzk/serve/payloads.py)
        check_envelope_size(env, c1.seal_proof.sector_size, str(path),
                            f"the sector size of its {c1.seal_proof.name} C1 output, {c1.seal_proof.sector_size}")
    else:
        c1 = SealCommitPhase1Output.read(path)  # refused before reading when over the C1 bound
    c1.check()
    return c1


def params_paths(c1, args) -> tuple[Path, Path]:
    """(the ``.params`` file, its ``.vk``) of ``c1``'s partition circuit: ``--params`` / ``--vk``
    where given, else Filecoin's v28 names in the parameter cache."""
    from cuzk.serve.config import default_param_cache
    from cuzk.serve.filecoin import FilecoinCircuit

    fc = FilecoinCircuit("porep", c1.seal_proof.sector_size)
    cache = Path(args.param_cache) if args.param_cache else default_param_cache()
    params = Path(args.params) if getattr(args, "params", None) else cache / fc.params_name
    vk = Path(args.vk) if args.vk else (params.with_suffix(".vk") if getattr(args, "params", None)
                                        else cache / fc.vk_name)
    return params, vk


def _vk_of(path: Path, fallback=None):
    from cuzk.formats.bellperson import MAX_VK_BYTES, vk_from_bytes

    if not path.exists():
        if fallback is None:
            raise InputError(f"no verifying key {path} (pass --vk, or --param-cache with Filecoin's .vk file)")
        return fallback
    f, size = _open_regular(path, "a verifying key (.vk)")
    with f:
        if size > MAX_VK_BYTES:
            raise InputError(f"{path}: {size} bytes; a verifying key (.vk) is at most {MAX_VK_BYTES} bytes")
        return vk_from_bytes(f)  # streamed: each count is checked against the bytes left before its points


def _open_regular(path, what: str):
    """(the open binary file, its size): every size check here is on fstat's size, so a device
    (whose size reads as 0) or a pipe is refused before a byte is read."""
    from cuzk.engine.keysource import open_regular

    return open_regular(path, what)


def _read_exact(path, size: int, what: str, why: str) -> bytes:
    """The ``size`` bytes of file ``path``, refused unread when it holds another number
    (``what``: the file, ``why``: what that size is, for the messages)."""
    f, have = _open_regular(path, what)
    with f:
        if have != size:
            raise InputError(f"{path}: {have} bytes; {why}")
        data = f.read(size + 1)
    if len(data) != size:
        raise InputError(f"{path}: changed size while being read; {why}")
    return data


def _cache_dir(path: str) -> None:
    """Make ``--cache-dir`` before sealing, so that a path that cannot be a directory is refused
    naming the option (the sealer's own ``os.makedirs`` says only "File exists")."""
    if os.path.lexists(path) and not os.path.isdir(path):
        raise InputError(f"--cache-dir {path}: exists and is not a directory")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise InputError(f"--cache-dir {path}: cannot make the directory: {e.strerror or e}") from None


def _bytes32(text: str, what: str) -> bytes:
    try:
        raw = bytes.fromhex(text.removeprefix("0x"))
    except ValueError:
        raise InputError(f"--{what}: not hex: {text!r:.70}") from None
    if len(raw) != 32:
        raise InputError(f"--{what}: needs 32 bytes (64 hex digits), got {len(raw)}")
    return raw


def _cmd_seal(args) -> int:
    import numpy as np

    from cuzk.atomic_file import atomic_write
    from cuzk.circuits.filecoin.porep import commit_phase1, fr32_pad, registered_seal_proof, seal

    proof = registered_seal_proof(args.registered_proof)
    ids = {k: _bytes32(getattr(args, k), k.replace("_", "-")) for k in ("prover_id", "ticket", "seed")}
    want = proof.sector_size // 128 * 127
    if args.raw:  # payload bytes: Fr32-padded here (127 payload bytes per 128)
        data = fr32_pad(_read_exact(args.data, want, "the sector's payload",
                                    f"a {proof.sector_size}-byte sector holds {want} unpadded bytes"))
    else:  # already padded, as a sector's staged file: mapped, not read into memory
        f, size = _open_regular(args.data, "the sector data")
        with f:
            if size != proof.sector_size:  # an empty file cannot even be mapped
                raise InputError(f"{args.data}: {size} bytes; a {proof.sector_size}-byte sector's Fr32-padded data "
                                 f"is {proof.sector_size} bytes (with --raw, its {want} payload bytes)")
            data = np.memmap(f, dtype=np.uint8, mode="r", shape=(size,))
    if args.cache_dir is not None:
        _cache_dir(args.cache_dir)
    t0 = time.perf_counter()
    sealed = seal(data, registered_proof=proof, prover_id=ids["prover_id"], sector_id=args.sector_id,
                  ticket=ids["ticket"], cache_dir=args.cache_dir)
    t1 = time.perf_counter()
    c1 = commit_phase1(sealed, ids["seed"])
    with atomic_write(args.c1) as f:
        f.write(c1.to_json().encode())
    print(f"comm_d {sealed.comm_d.hex()}\ncomm_r {sealed.comm_r.hex()}")
    if args.verbose:
        print(f"sealed in {t1 - t0:.2f} s, C1 in {time.perf_counter() - t1:.2f} s ({proof.name})", file=sys.stderr)
    return 0


def _cmd_c2(args) -> int:
    from cuzk.atomic_file import atomic_write
    from cuzk.circuits.filecoin.porep import c2
    from cuzk.engine.engine import Engine
    from cuzk.engine.keycache import KeyCache
    from cuzk.groth16.bit_msm import check_ones_blocks
    from cuzk.synth import Synthesizer

    t0 = time.perf_counter()
    check_ones_blocks(args.ones_blocks, "auto")  # before the key is read: the Engine's provers run "auto"
    c1 = read_c1(args.c1)
    params, vk_path = params_paths(c1, args)
    if not params.is_file():
        raise InputError(f"no parameter file {params} for {c1.seal_proof.name} (fetch Filecoin's parameters, "
                         f"or pass --params / --param-cache)")
    pk, info = KeyCache(args.key_cache).load(params, kind="params")
    vk = _vk_of(vk_path, fallback=pk.vk)
    t1 = time.perf_counter()
    # one Engine job of a unit per partition: a 32 GiB sector's ten partitions synthesize while
    # earlier ones prove (the idle gap of docs/pipeline.md), each proof verified by the prover
    with Engine(device=args.device) as engine:  # "auto": CUDA where it is usable
        name = c1.seal_proof.name
        engine.register(name, Synthesizer(c2.circuit_for(c1.seal_proof)), pk, concurrency=args.concurrency,
                        ones_blocks=args.ones_blocks)
        data = c2.commit_phase2(c1, None, engine=engine, name=name)
    c2.check_commit_phase2(c1, vk, data)  # and the whole against the statement: never a bad file
    t2 = time.perf_counter()
    with atomic_write(args.proof) as f:
        f.write(data)
    print(f"{args.proof}: {len(data)} bytes, {len(data) // c2.PROOF_BYTES} partition(s) of {c1.seal_proof.name}, "
          f"verified")
    if args.verbose:
        how = "key cache hit" if info.hit else "checked read, cached"
        print(f"C1 + key ({how}) {t1 - t0:.2f} s, C2 {t2 - t1:.2f} s ({engine.backend}); the Engine's timeline:\n"
              f"{engine.timeline.summary()}", file=sys.stderr)
    return 0


def _cmd_verify(args) -> int:
    from cuzk.circuits.filecoin.porep import c2

    c1 = read_c1(args.c1)
    _, vk_path = params_paths(c1, args)
    vk = _vk_of(vk_path)
    sp = c1.seal_proof
    size = sp.partitions * c2.PROOF_BYTES
    data = _read_exact(args.proof, size, "a proof",
                       f"a {sp.name} proof is {sp.partitions} partition(s) x {c2.PROOF_BYTES} = {size} bytes")
    if c2.verify_commit_phase2(c1, vk, data):
        print("OK!")
        return 0
    print("Invalid proof")
    return 1


_files = file_errors("porep")  # a missing or unreadable file: one line, exit status 1


def add_porep_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``porep`` command (``seal``, ``c2``, ``verify``) to an argparse subparsers object."""
    g = subparsers.add_parser("porep", help="Filecoin PoRep from files: seal a sector and write its C1, prove C2 "
                                            "from a C1 file, verify a C2 proof")
    sub = g.add_subparsers(dest="porep_command", required=True)

    s = sub.add_parser("seal", help="seal a sector with cuzk's native sealer and write its C1 JSON")
    s.add_argument("data", help="the sector's Fr32-padded bytes (exactly the sector size), or with --raw its payload")
    s.add_argument("c1", help="output: the C1 JSON (filecoin-proofs-api's SealCommitPhase1Output)")
    s.add_argument("--registered-proof", type=int, required=True, help="RegisteredSealProof id, 0..19 (5: 2 KiB V1_1)")
    s.add_argument("--prover-id", required=True, help="32 bytes, hex")
    s.add_argument("--sector-id", type=int, required=True)
    s.add_argument("--ticket", required=True, help="32 bytes, hex")
    s.add_argument("--seed", required=True, help="the interactive seed, 32 bytes, hex")
    s.add_argument("--raw", action="store_true", help="DATA is unpadded payload (127 bytes per 128 of the sector)")
    s.add_argument("--cache-dir", default=None, help="write the layers and trees there, as rust-fil-proofs does")
    s.add_argument("-v", "--verbose", action="store_true")
    s.set_defaults(fn=_files(_cmd_seal), fast_exit=True)  # no engine, no threads left: cuzk/cli_exit.py

    for name, helptext in [("c2", "prove every partition of a C1 file; write the proof bytes (partitions x 192)"),
                           ("verify", "verify a C2 proof for a C1 file's sector (prints OK! or Invalid proof)")]:
        c = sub.add_parser(name, help=helptext)
        c.add_argument("c1", help="C1 JSON, or Curio's envelope around it")
        c.add_argument("proof", help="the proof bytes (output of c2, input of verify)")
        c.add_argument("--param-cache", default=None,
                       help="Filecoin's parameter folder (default: $FIL_PROOFS_PARAMETER_CACHE or "
                            "/var/tmp/filecoin-proof-parameters)")
        c.add_argument("--vk", default=None, help="the verifying key (.vk), instead of the one in the cache")
        if name == "c2":
            c.add_argument("--params", default=None, help="the .params file, instead of the one in the cache")
            c.add_argument("--device", default="auto", help="auto, cuda or cpu")
            c.add_argument("--concurrency", type=int, default=2,
                           help="partitions synthesized at once while others prove (default 2)")
            c.add_argument("--key-cache", default=None,
                           help="key-cache directory (default: $CUZK_CACHE_DIR/keys or the user's cache dir)")
            c.add_argument("--ones-blocks", type=int, default=None, metavar="B",
                           help="CPU: keep the key's A, B and L points summed in blocks of B rows (2, 4 or 8) "
                                "for faster bit-aware MSMs, 1/B of those queries' bytes more (docs/engine.md)")
            c.add_argument("-v", "--verbose", action="store_true", help="print stage times to stderr")
        # c2 runs an Engine: its process exits normally (cuzk/cli_exit.py)
        c.set_defaults(fn=_files(_cmd_c2 if name == "c2" else _cmd_verify), fast_exit=name == "verify")
    return g
