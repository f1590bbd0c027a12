"""Mutations: generic byte edits for every format, plus format-aware edits that keep a file
parseable enough to reach the deeper checks (counts, section sizes, header fields, JSON values),
recomputing the checksum where the format has one (the PCE file's sha256).

:func:`mutate` stacks one to three operations, drawn by a ``random.Random`` the caller seeds,
so an input is reproducible from (run seed, input number) alone.

    >>> import random
    >>> len(mutate(random.Random(1), b"hello world", [b"other seed"], "raw")) > 0
    True
"""

from __future__ import annotations

import hashlib
import json
import random
import struct

from cuzk.bounded_json import check_depth
from cuzk.field import FQ, FR

__all__ = ["mutate", "GENERIC", "FORMAT_OPS", "MAX_INPUT", "INTERESTING"]

#: inputs are capped here (a "grow" edit reaches it), so the memory bound of a run is 3x this
MAX_INPUT = 2 << 20

_R, _Q = FR.modulus, FQ.modulus  # scalar and base field moduli: values just past them must be refused
#: integer values worth writing into count, size and coordinate fields
INTERESTING = (0, 1, 2, 3, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000,
               0xFFFFFFFF, 0x100000000, (1 << 63) - 1, 1 << 63, (1 << 64) - 1)
_HOSTILE_JSON = (None, True, False, 0, -1, 1.5, 1e308, "", "0", "-1", "1", "x", "0x10", " 1", "1e3", str(_R),
                 str(_R - 1), str(_R + 1), str(2**384), str(2**1000), "٣", [], {}, [[]], [["1", "0"]] * 3,
                 ["0", "1", "0"], "\ud800", "9" * 400)


# ---------------------------------------------------------------------------- generic
def _truncate(rng, d, others):
    return d[: rng.choice((rng.randrange(len(d) + 1), len(d) - rng.randrange(1, 9)))] if d else d


def _bitflip(rng, d, others):
    b = bytearray(d)
    for _ in range(rng.choice((1, 1, 2, 4, 8))):
        if b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    return bytes(b)


def _byteset(rng, d, others):
    b = bytearray(d)
    for _ in range(rng.randint(1, 3)):
        if b:
            b[rng.randrange(len(b))] = rng.choice((0, 0xFF, 0x7F, 0x80, 0x40, 0xC0, 0x20, 0xE0, 0x5B, 0x22, 0x2C))
    return bytes(b)


def _insert(rng, d, others):
    i = rng.randrange(len(d) + 1)
    return d[:i] + rng.randbytes(rng.choice((1, 4, 8, 48, 96, 200))) + d[i:]


def _delete(rng, d, others):
    if not d:
        return d
    i = rng.randrange(len(d))
    return d[:i] + d[i + rng.choice((1, 4, 8, 48, 96, 192, 1000)):]


def _dup(rng, d, others):
    if not d:
        return d
    i, n = rng.randrange(len(d)), rng.choice((1, 4, 48, 96, 192, 1000))
    return d[:i] + d[i:i + n] * rng.choice((1, 2, 16)) + d[i:]


def _splice(rng, d, others):
    o = rng.choice(others) if others else d
    return d[: rng.randrange(len(d) + 1)] + o[rng.randrange(len(o) + 1):]


def _random(rng, d, others):
    return rng.randbytes(rng.choice((0, 1, 12, 100, len(d))))


def _int_overwrite(rng, d, others):
    if len(d) < 8:
        return d
    width, endian = rng.choice((4, 8)), rng.choice("<>")
    i = rng.randrange(len(d) - width + 1) & ~rng.choice((0, 3))
    v = rng.choice(INTERESTING + (len(d), len(d) - i, rng.getrandbits(width * 8)))
    return d[:i] + struct.pack(endian + ("I" if width == 4 else "Q"), v % (1 << (8 * width))) + d[i + width:]


def _grow(rng, d, others):
    # large inputs: the memory bound is checked against the largest input of a run
    target = rng.choice((64 << 10, 512 << 10, MAX_INPUT))
    i = rng.randrange(len(d) + 1)
    pad = rng.choice((b" ", b"\x00", d[:96] or b"0", rng.randbytes(64)))
    return (d[:i] + pad * (target // max(1, len(pad))) + d[i:])[:MAX_INPUT]


#: (operation, weight)
GENERIC = ((_truncate, 3), (_bitflip, 6), (_byteset, 4), (_insert, 2), (_delete, 2), (_dup, 2), (_splice, 3),
           (_random, 1), (_int_overwrite, 4), (_grow, 0.2))


# ---------------------------------------------------------------------------- iden3 container
def _sections(d):
    """[(offset of the entry, id, size)] as far as the table parses."""
    out, off = [], 12
    if len(d) < 12:
        return out
    for _ in range(min(struct.unpack_from("<I", d, 8)[0], 64)):
        if off + 12 > len(d):
            break
        sid, size = struct.unpack_from("<IQ", d, off)
        out.append((off, sid, size))
        off += 12 + size
    return out


def _container_field(rng, d, others):
    secs = _sections(d)
    fields = [(4, 4), (8, 4)] + [(o, 4) for o, _, _ in secs] + [(o + 4, 8) for o, _, _ in secs]
    fields += [(o + 12 + k, 4) for o, _, size in secs for k in range(0, min(size, 64), 4)]  # section heads
    off, width = rng.choice(fields)
    if off + width > len(d):
        return d
    old = int.from_bytes(d[off:off + width], "little")
    v = rng.choice(INTERESTING + (old + 1, old - 1, old * 2, old + len(d)))
    return d[:off] + (v % (1 << 8 * width)).to_bytes(width, "little") + d[off + width:]


def _container_sections(rng, d, others):
    secs = [(sid, d[o + 12:o + 12 + size]) for o, sid, size in _sections(d)]
    if not secs:
        return d
    op = rng.randrange(4)
    if op == 0:
        secs.pop(rng.randrange(len(secs)))
    elif op == 1:
        secs.insert(rng.randrange(len(secs) + 1), rng.choice(secs))
    elif op == 2:
        rng.shuffle(secs)
    else:  # a section from another seed of the same kind (another circuit)
        o = [(sid, x[oo + 12:oo + 12 + size]) for x in others for oo, sid, size in _sections(x)]
        if o:
            new = rng.choice(o)
            secs = [new if sid == new[0] else (sid, body) for sid, body in secs]
    return d[:8] + struct.pack("<I", len(secs)) + b"".join(struct.pack("<IQ", s, len(b)) + b for s, b in secs)


# ---------------------------------------------------------------------------- bellperson layout
_FIXED = (96, 96, 192, 192, 96, 192)
_QUERY_SIZES = (96, 96, 96, 96, 192)  # ic, h, l, a, b_g1 are G1; b_g2 is G2 (ic listed first)


def _bellperson_fields(d):
    """(count offsets, point (offset, size) list) as far as the layout parses."""
    counts, points, off = [], [], 0
    for size in _FIXED:
        points.append((off, size))
        off += size
    for size in (96, 96, 96, 96, 96, 192):  # ic, h, l, a, b_g1, b_g2
        if off + 4 > len(d):
            break
        counts.append(off)
        n = struct.unpack_from(">I", d, off)[0]
        off += 4
        for _ in range(min(n, 256)):
            points.append((off, size))
            off += size
        off += max(0, n - 256) * size
    return counts, [p for p in points if p[0] + p[1] <= len(d)]


def _bp_count(rng, d, others):
    counts, _ = _bellperson_fields(d)
    if not counts:
        return d
    off = rng.choice(counts)
    old = struct.unpack_from(">I", d, off)[0]
    v = rng.choice(INTERESTING + (old + 1, old - 1, old * 2, 1 << 20))
    return d[:off] + struct.pack(">I", v % (1 << 32)) + d[off + 4:]


def _bp_point(rng, d, others):
    _, pts = _bellperson_fields(d)
    if not pts:
        return d
    off, size = rng.choice(pts)
    b = bytearray(d)
    op = rng.randrange(4)
    if op == 0:  # flag bits
        b[off] ^= rng.choice((0x80, 0x40, 0x20, 0xE0))
    elif op == 1:  # infinity, canonical or not
        b[off:off + size] = bytes([0x40]) + bytes(size - 1) if rng.random() < 0.5 else bytes([0x40]) + rng.randbytes(size - 1)
    elif op == 2:  # a coordinate >= p
        b[off:off + 48] = (_Q + rng.randrange(4)).to_bytes(49, "big")[-48:]
    else:  # another point of the same size from the file (valid, but in the wrong place)
        same = [p for p in pts if p[1] == size]
        o2 = rng.choice(same)[0]
        b[off:off + size] = d[o2:o2 + size]
    return bytes(b)


def _point_raw(rng, d, others):
    """For bare point encodings: flag bits or a coordinate >= p in one 48-byte-aligned slot."""
    if len(d) < 48:
        return d
    b = bytearray(d)
    off = rng.randrange(len(d) // 48) * 48
    if rng.random() < 0.6:
        b[off] ^= rng.choice((0x80, 0x40, 0x20, 0xE0, 0xC0))
    else:
        b[off:off + 48] = (_Q + rng.randrange(-2, 3)).to_bytes(49, "big")[-48:]
    return bytes(b)


# ---------------------------------------------------------------------------- JSON
_WALK_DEPTH = 900  # what the recursive walk reached under Python's default recursion limit


def _nodes(obj):
    """Every (path, node) in pre-order, without recursion: a parsed input may be nested as deep
    as the recursion limit allows, and py_ecc raises that limit to 100,000 in any process that
    imported it (the pytest process does), where recursing that deep overflows the C stack.
    Edits can make a value contain itself (a cycle), so the walk stops at :data:`_WALK_DEPTH`
    with the RecursionError the recursive walk raised (``mutate`` skips that edit)."""
    stack = [((), obj)]
    while stack:
        path, node = stack.pop()
        if len(path) > _WALK_DEPTH:
            raise RecursionError("JSON value nested too deep (or containing itself)")
        yield path, node
        if isinstance(node, dict):
            stack.extend((path + (k,), v) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((path + (i,), v) for i, v in reversed(list(enumerate(node))))


def _loads_shallow(d):
    """The parsed value, or None when ``d`` is not JSON or nests deeper than the readers accept
    (checked without recursion first, for the reason in :func:`_nodes`; json.loads and
    json.dumps recurse in C)."""
    try:
        check_depth(d, "fuzz input", ValueError)
        return json.loads(d)
    except (ValueError, RecursionError):
        return None


def _set(obj, path, value):
    if not path:
        return value
    node = obj
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return obj


def edit_json(rng, obj):
    """One structural edit of a parsed JSON value (returns the new value)."""
    nodes = list(_nodes(obj))
    path, node = rng.choice(nodes)
    op = rng.randrange(6)
    if op == 0 or not path:
        return _set(obj, path, rng.choice(_HOSTILE_JSON))
    parent = obj
    for p in path[:-1]:
        parent = parent[p]
    if op == 1:  # delete
        del parent[path[-1]]
    elif op == 2 and isinstance(node, str) and node.lstrip("-").isdigit():  # a number one off
        _set(obj, path, str(int(node) + rng.choice((1, -1, _R, -_R))))
    elif op == 3 and isinstance(parent, list):  # duplicate an element
        parent.insert(path[-1], node)
    elif op == 4:  # another node's value (a copy: a node inside itself would be a cycle)
        _set(obj, path, json.loads(json.dumps(rng.choice(nodes)[1])))
    else:
        _set(obj, path, rng.choice(_HOSTILE_JSON))
    return obj


def _dumps(rng, obj) -> bytes:
    return json.dumps(obj, indent=rng.choice((None, 1, 2)), ensure_ascii=rng.random() < 0.8).encode("utf-8", "surrogatepass")


def _json_struct(rng, d, others):
    if len(d) > (256 << 10):  # grown inputs: byte edits only
        return d
    obj = _loads_shallow(d)
    if obj is None:
        return d
    for _ in range(rng.randint(1, 3)):
        obj = edit_json(rng, obj)
    return _dumps(rng, obj)


def _json_deep(rng, d, others):
    depth = rng.choice((63, 64, 65, 1000, 100000))
    i = rng.randrange(len(d) + 1)
    return d[:i] + b"[" * depth + b"]" * rng.choice((0, depth)) + d[i:]


# ---------------------------------------------------------------------------- timeline (JSON lines)
def _jsonl_line(rng, d, others):
    if len(d) > (256 << 10):
        return d
    lines = d.split(b"\n")
    i = rng.randrange(len(lines))
    obj = _loads_shallow(lines[i])
    if obj is None:
        return d
    if isinstance(obj, dict) and isinstance(obj.get("detail"), dict) and rng.random() < 0.5:
        key = rng.choice(("thread_cpu_ns", "process_cpu_ns", "device_ms", "name", "error", "reason", "value", "stage"))
        obj["detail"][key] = rng.choice(_HOSTILE_JSON + (2**64, -2**64, 10**400 // 10**300))
    else:
        obj = edit_json(rng, obj)
    lines[i] = json.dumps(obj).encode("utf-8", "surrogatepass")
    return b"\n".join(lines)


def _jsonl_lines(rng, d, others):
    lines = d.split(b"\n")
    op, i = rng.randrange(3), rng.randrange(len(lines))
    if op == 0:
        lines.insert(i, lines[rng.randrange(len(lines))])
    elif op == 1 and len(lines) > 1:
        del lines[i]
    else:
        rng.shuffle(lines)
    return b"\n".join(lines)


# ---------------------------------------------------------------------------- PCE
_PRE = struct.Struct("<8sIIQ")


def pce_parts(d):
    """(prefix fields, header dict, array bytes) of a PCE file, or None if it does not parse."""
    if len(d) < _PRE.size + 32 or len(d) > (256 << 10):
        return None
    magic, version, zero, hlen = _PRE.unpack_from(d)
    hdr = _loads_shallow(d[_PRE.size:_PRE.size + hlen])
    if hdr is None:
        return None
    return (magic, version, zero), hdr, d[_PRE.size + hlen:-32]


def pce_build(prefix, hdr, arrays: bytes, *, header: bytes | None = None) -> bytes:
    """A PCE file with a correct sha256 (what a crafted file looks like)."""
    hb = header if header is not None else json.dumps(hdr).encode()
    body = _PRE.pack(*prefix, len(hb)) + hb + arrays
    return body + hashlib.sha256(body).digest()


def _pce_header(rng, d, others):
    parts = pce_parts(d)
    if parts is None:
        return d
    prefix, hdr, arrays = parts
    if rng.random() < 0.5 and isinstance(hdr, dict):
        key = rng.choice(("n_public", "n_private", "n_constraints", "n_slots"))
        old = hdr.get(key, 0)
        hdr[key] = rng.choice(INTERESTING + (-1, 2**64, 10**80, (old + 1) if isinstance(old, int) else 1))
    else:
        hdr = edit_json(rng, hdr)
    return pce_build(prefix, hdr, arrays)


def _pce_arrays(rng, d, others):
    parts = pce_parts(d)
    if parts is None:
        return d
    prefix, hdr, arrays = parts
    arrays = rng.choice((_bitflip, _byteset, _int_overwrite))(rng, arrays, others)
    return pce_build(prefix, hdr, arrays)


def _pce_resum(rng, d, others):
    # any generic edit, then the checksum recomputed, so the edit reaches the parser
    parts = pce_parts(d)
    edited = rng.choice((_bitflip, _byteset, _int_overwrite, _truncate, _dup))(rng, d[:-32], others)
    return edited + hashlib.sha256(edited).digest() if parts is not None else d


#: format -> ((operation, weight), ...) added to the generic ones
FORMAT_OPS = {
    "raw": ((_point_raw, 4),),
    "container": ((_container_field, 8), (_container_sections, 3)),
    "bellperson": ((_bp_count, 6), (_bp_point, 6)),
    "json": ((_json_struct, 12), (_json_deep, 1)),
    "jsonl": ((_jsonl_line, 12), (_jsonl_lines, 2), (_json_deep, 1)),
    "pce": ((_pce_header, 10), (_pce_arrays, 6), (_pce_resum, 6)),
}


def mutate(rng: random.Random, data: bytes, others: list[bytes], fmt: str) -> bytes:
    """One to three stacked edits of ``data`` (generic and ``fmt``-aware), capped at :data:`MAX_INPUT`."""
    ops = GENERIC + FORMAT_OPS.get(fmt, ())
    fns, weights = zip(*ops)
    for fn in rng.choices(fns, weights, k=rng.choice((1, 1, 2, 3))):
        try:
            data = fn(rng, data, others)[:MAX_INPUT]
        except (RecursionError, ValueError, TypeError, KeyError, IndexError, struct.error):
            pass  # an edit that does not apply to this input (e.g. a JSON path a previous edit removed)
    return data
