"""JSON parsing with bounded nesting and bounded memory, for every JSON reader in cuzk.

``json.loads`` has two ways to fail badly on hostile input: its C scanner recurses once per
nesting level (a few 10^4 ``[`` overflow the C stack once some library has raised the recursion
limit, e.g. py_ecc sets 100000 at import: a segfault, not a RecursionError), and a file read
whole before any check lets a 3 GiB file decide how much memory we use. So:

* :func:`check_depth` counts bracket depth in a streaming pass over fixed-size chunks (a few MiB
  of temporaries whatever the input size) and refuses more than :data:`MAX_JSON_DEPTH` levels;
* :func:`read_json_file` compares the file's size with a per-kind limit *before* reading it, then
  reads it once, checks depth, decodes and parses, dropping the raw bytes before parsing;
* :func:`loads_bounded` does the same for text already in memory.

Every problem is raised as the caller's :class:`cuzk.errors.CuzkError` subclass. This module sits
at the top of the package (importable from everywhere, like :mod:`cuzk.errors`) because groth16
(``Proof.from_json``), formats (snarkjs and bellperson JSON) and timeline (saved timelines) all
parse JSON and may not import one another (DESIGN §2).

    >>> loads_bounded('{"a": [1]}', "x")
    {'a': [1]}
    >>> loads_bounded("[" * 100000, "x")
    Traceback (most recent call last):
    ...
    cuzk.errors.CuzkError: x: not valid JSON (nested deeper than 64 levels)
"""

from __future__ import annotations

import json
import os

import numpy as np

from cuzk.errors import CuzkError

__all__ = ["MAX_JSON_DEPTH", "check_depth", "check_items", "loads_bounded", "read_json_file"]

#: Deepest nesting accepted. snarkjs JSON nests 4 deep (vk_alphabeta_12), a timeline event 3.
MAX_JSON_DEPTH = 64

# Bytes scanned per step. The step's temporaries are an int32 running depth (4 bytes per input
# byte), one bool mask at a time and numpy's fixed casting buffers (~64 KiB): ~100 KiB in all,
# however big the input is (a lookup table _STEP[c] would convert c to 8-byte indices first).
_CHUNK = 1 << 13
_OPEN = (ord("["), ord("{"))
_CLOSE = (ord("]"), ord("}"))


def _chunks(data):
    """Fixed-size uint8 views (bytes-like) or encoded pieces (str) of ``data``; never a full copy."""
    if isinstance(data, str):
        for i in range(0, len(data), _CHUNK):
            # surrogatepass: lone surrogates are json's problem to report, not an encoding crash
            yield np.frombuffer(data[i : i + _CHUNK].encode("utf-8", "surrogatepass"), dtype=np.uint8)
        return
    view = memoryview(data).cast("B")
    for i in range(0, len(view), _CHUNK):
        yield np.frombuffer(view[i : i + _CHUNK], dtype=np.uint8)


def check_depth(data, where: str, error: type[Exception] = CuzkError, limit: int = MAX_JSON_DEPTH) -> None:
    """Raise ``error`` if brackets in ``data`` (str or bytes-like) nest deeper than ``limit``.

    Brackets inside strings count too, so this overestimates only for absurd files; in UTF-16
    or UTF-32 text a bracket is still one byte 0x5B/0x7B/0x5D/0x7D among zero bytes.

    >>> check_depth(b"[[1], {}]", "x") is None
    True
    """
    if isinstance(data, (str, bytes, bytearray)):
        # no copy, C speed: fewer opening brackets than the limit cannot nest deeper (the common
        # case, e.g. every line of a timeline file)
        opens = data.count("[") + data.count("{") if isinstance(data, str) else data.count(b"[") + data.count(b"{")
        if opens <= limit:
            return
    depth = 0
    for c in _chunks(data):
        running = (c == _OPEN[0]).astype(np.int32)
        running += c == _OPEN[1]
        running -= c == _CLOSE[0]
        running -= c == _CLOSE[1]
        np.cumsum(running, out=running)
        if running.size and depth + int(running.max()) > limit:
            raise error(f"{where}: not valid JSON (nested deeper than {limit} levels)")
        depth += int(running[-1]) if running.size else 0


def _parse(text: str, where: str, error: type[Exception]):
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:  # bad JSON (ValueError); RecursionError cannot pass check_depth
        raise error(f"{where}: not valid JSON ({type(e).__name__}: {str(e)[:200]})") from None


def _decode(raw: bytes, where: str, error: type[Exception]) -> str:
    try:  # the encodings json itself accepts (UTF-8/16/32, BOM or not)
        return raw.decode(json.detect_encoding(raw), "surrogatepass")
    except (UnicodeDecodeError, LookupError) as e:
        raise error(f"{where}: not valid JSON (UnicodeDecodeError: {str(e)[:200]})") from None


def check_items(data, where: str, error: type[Exception], max_items: int) -> None:
    """Raise ``error`` if ``data`` holds more than ``max_items`` commas, i.e. more JSON values
    than the caller's kind of file can hold (commas inside strings count too: an overestimate
    only for absurd files). This bounds the parsed objects: ``[1,1,1,...]`` becomes 8 bytes of
    list per 2 bytes of text, a small string ~55 bytes per 4 bytes of text.

    >>> check_items(b'["1", "2"]', "x", ValueError, 1) is None
    True
    """
    if isinstance(data, str):
        n = data.count(",")
    elif isinstance(data, (bytes, bytearray)):
        n = data.count(b",")
    else:
        n = sum(int(np.count_nonzero(c == ord(","))) for c in _chunks(data))
    if n > max_items:
        raise error(f"{where}: {n + 1} JSON values, more than the {max_items + 1} this kind of input can hold")


def loads_bounded(data, where: str, error: type[Exception] = CuzkError, *, max_bytes: int | None = None,
                  max_items: int | None = None):
    """``json.loads`` that refuses nesting deeper than :data:`MAX_JSON_DEPTH` (checked in a
    streaming pass first) and text longer than ``max_bytes``, reporting every problem as ``error``.

    Args:
        data: JSON text (str, or UTF-8/16/32 bytes-like).
        where: names the input in messages (a path, "proof JSON").
        error: the exception class to raise (a :class:`~cuzk.errors.CuzkError` subclass).
        max_bytes: refuse longer input (counted in bytes for bytes-like, characters for str).
        max_items: refuse input with more commas (see :func:`check_items`).

    >>> loads_bounded(b'["1", "2"]', "public.json")
    ['1', '2']
    """
    if not isinstance(data, (str, bytes, bytearray, memoryview)):
        raise error(f"{where}: expected JSON text, got {type(data).__name__}")
    size = len(data) if isinstance(data, str) else memoryview(data).nbytes
    if max_bytes is not None and size > max_bytes:
        raise error(f"{where}: {size} bytes of JSON, more than the {max_bytes} this kind of input can hold")
    check_depth(data, where, error)
    if max_items is not None:
        check_items(data, where, error, max_items)
    text = data if isinstance(data, str) else _decode(bytes(data), where, error)
    return _parse(text, where, error)


def read_json_file(path, error: type[Exception] = CuzkError, *, max_bytes: int, max_items: int | None = None,
                   why: str = ""):
    """Parse the JSON file at ``path``, refusing it *before reading* when it is over ``max_bytes``.

    Peak memory is about twice the file size while the bytes are decoded, then the text plus
    the parsed objects (the bytes are dropped before parsing); ``max_items`` bounds the number
    of parsed objects, so files of many tiny values cannot multiply their size in objects.

    Args:
        path: the file.
        error: the exception class to raise.
        max_bytes: the largest file this kind can legitimately be.
        max_items: the most JSON values (commas + 1) it can legitimately hold.
        why: how ``max_bytes`` was derived, appended to the refusal message.

    Raises:
        OSError: the file cannot be opened or read.
        error: over the size limit, nested too deep, bad encoding or not JSON.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.json"); _ = open(p, "w").write("[1, 2]")
    >>> read_json_file(p, max_bytes=100)
    [1, 2]
    """
    where = os.fspath(path)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > max_bytes:
            raise error(f"{where}: {size} bytes is larger than {max_bytes} bytes{', ' + why if why else ''}; "
                        "refusing to read it")
        # ask for what fstat says, not the bound: read(n) reserves n bytes first, and the bound of
        # a C1 output is 1.4 GB of address space for a file of megabytes
        raw = f.read(min(size, max_bytes) + 1)
        if size < len(raw) <= max_bytes:  # growing under us, or no size to go by (a pipe): cut at the bound
            raw += f.read(max_bytes + 1 - len(raw))
    if len(raw) > max_bytes:
        raise error(f"{where}: the file grew past {max_bytes} bytes while being read")
    check_depth(raw, where, error)
    if max_items is not None:
        check_items(raw, where, error, max_items)
    text = _decode(raw, where, error)
    del raw  # parse from the text alone
    return _parse(text, where, error)
