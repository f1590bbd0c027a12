"""``cuzk keys list|load|prune|clear``: look at and manage the proving-key cache (:mod:`cuzk.engine.keycache`).

    cuzk keys list                       # entries, most recently used first; the cap and usage
    cuzk keys load porep.params          # fill (first time: checked read) or hit; prints timings
    cuzk keys prune 100G                 # remove least recently used entries down to 100 GiB
    cuzk keys clear                      # remove every entry

``--dir`` picks another cache directory (default: ``$CUZK_CACHE_DIR/keys`` or the user's cache
dir). The cache's size cap is ``$CUZK_CACHE_MAX_BYTES`` (default half the filesystem, see
:mod:`cuzk.engine.keycache_cap`). Also runnable as ``python -m cuzk.cli_keys list``.

    >>> import tempfile
    >>> main(["--dir", tempfile.mkdtemp(), "list"])   # doctest: +ELLIPSIS
    no cached keys in ...
    cap: ... (...); in use: 0 B (0.0% of the cap)
    0
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Sequence

from cuzk.errors import CuzkError

__all__ = ["add_keys_parser", "main"]


def _cache(args):
    from cuzk.engine.keycache import KeyCache

    return KeyCache(args.dir)


def size_text(n: int) -> str:
    """Bytes as a person reads them: 512 B, 1.5 KiB, 3.2 GiB (also ``cuzk client``'s)."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover - the loop returns at GiB


def _cap_line(cache, used: int) -> str:
    from cuzk.engine.keycache_cap import ENV

    if cache.max_bytes is None:
        return f"cap: unlimited (${ENV}); in use: {size_text(used)}"
    origin = f"${ENV}" if os.environ.get(ENV, "").strip() else "default: half the filesystem"
    return (f"cap: {size_text(cache.max_bytes)} ({origin}); in use: {size_text(used)} "
            f"({100 * used / max(cache.max_bytes, 1):.1f}% of the cap)")


def _cmd_list(args) -> int:
    cache = _cache(args)
    entries = cache.entries()
    if not entries:
        print(f"no cached keys in {cache.directory}")
        print(_cap_line(cache, 0))
        return 0
    print(f"{'last use':<19}  {'size':>10}  {'kind':<6}  source")
    for e in reversed(entries):  # most recent first on screen
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e.last_use))
        what = e.source if e.error is None else f"DAMAGED (rebuilt on next load): {e.error}"
        print(f"{when:<19}  {size_text(e.bytes):>10}  {e.kind or '?':<6}  {what}")
    used = sum(e.bytes for e in entries)
    print(f"{len(entries)} entries, {size_text(used)} in {cache.directory}")
    print(_cap_line(cache, used))
    return 0


def _cmd_clear(args) -> int:
    cache = _cache(args)
    files, nbytes = cache.clear()
    print(f"removed {files} files ({size_text(nbytes)}) from {cache.directory}")
    return 0


def _bytes(text: str) -> int:
    """argparse type: ``123``, ``10K``, ``5M``, ``100G``, ``2T`` (powers of 1024)."""
    from cuzk.engine.keycache_cap import parse_size

    try:
        value = parse_size(text)
    except CuzkError:
        value = None
    if value is None:
        raise argparse.ArgumentTypeError(f"expected a size such as 500M or 100G, got {text!r}")
    return value


def _cmd_prune(args) -> int:
    cache = _cache(args)
    removed = cache.prune(args.max_size)
    for e in removed:
        print(f"removed {e.path} ({size_text(e.bytes)}{', damaged' if e.error else ''})")
    left = sum(e.bytes for e in cache.entries())
    print(f"removed {len(removed)} entries; {size_text(left)} left in {cache.directory}")
    print(_cap_line(cache, left))
    return 0


def _cmd_load(args) -> int:
    def progress(stage, done, total):
        if args.verbose:
            print(f"\r{stage:<5} {100 * done / max(total, 1):5.1f}%", end="", file=sys.stderr, flush=True)

    _, info = _cache(args).load(args.source, kind=args.kind, progress=progress)
    if args.verbose:
        print(file=sys.stderr)
    how = "hit" if info.hit else "filled (checked read)"
    print(f"{how}: {info.source} -> {info.path or 'not cached: ' + str(info.note)} "
          f"({size_text(info.bytes)}, {info.seconds:.3f} s, source {info.source_check}, data {info.data_check})")
    return 0


def add_keys_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``keys`` command (``list``, ``load``, ``prune``, ``clear``) to an argparse subparsers object."""
    k = subparsers.add_parser("keys", help="list, fill, prune or clear the proving-key cache")
    k.add_argument("--dir", default=None, help="cache directory (default: $CUZK_CACHE_DIR/keys or ~/.cache/cuzk/keys)")
    ksub = k.add_subparsers(dest="keys_command", required=True)
    ksub.add_parser("list", help="cached keys, most recently used first").set_defaults(fn=_cmd_list)
    ksub.add_parser("clear", help="remove every cached key").set_defaults(fn=_cmd_clear)
    pr = ksub.add_parser("prune", help="remove least recently used keys until the cache fits a size")
    pr.add_argument("max_size", type=_bytes, help="e.g. 500M, 100G")
    pr.set_defaults(fn=_cmd_prune)
    ld = ksub.add_parser("load", help="load a .params/.zkey through the cache (fills it the first time)")
    ld.add_argument("source")
    ld.add_argument("--kind", choices=("params", "zkey"), default=None, help="default: from the file's first bytes")
    ld.add_argument("-v", "--verbose", action="store_true", help="show progress on stderr")
    ld.set_defaults(fn=_cmd_load)
    return k


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m cuzk.cli_keys list|load|prune|clear ...``; returns the exit status (1 on an error)."""
    parser = argparse.ArgumentParser(prog="cuzk keys")
    sub = parser.add_subparsers(dest="command", required=True)
    add_keys_parser(sub)
    args = parser.parse_args(["keys", *(argv if argv is not None else sys.argv[1:])])
    try:
        return args.fn(args)
    except (CuzkError, OSError) as e:
        print(f"cuzk keys {args.keys_command}: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
