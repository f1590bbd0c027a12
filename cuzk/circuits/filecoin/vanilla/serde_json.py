"""serde JSON of a type description: the reader and the writer.

The writer produces what ``serde_json::to_string`` produces for the Rust type: no whitespace,
struct fields in declaration order, ``[u8; 32]`` as 32 numbers, a unit variant as its name, any
other variant as a one-key object. So a document written by rust-fil-proofs reads and writes back
byte for byte.

The reader parses with :func:`cuzk.bounded_json.loads_bounded` (bounded size, nesting and value
count), then walks the value against the description. It is as strict as serde's derived
``Deserialize`` and in one way stricter: an object field the type does not declare is refused
(serde skips it), so a misspelt key is an error rather than a silently default value. A missing
``Option`` field reads as ``None``, as in serde. Every problem is a
:class:`~cuzk.errors.VanillaFormatError` naming the JSON path of the field.

    >>> from cuzk.circuits.filecoin.vanilla.schema import Enum, Seq, U64
    >>> kind = Enum("Kind", (("Empty", None), ("Many", Seq(U64))))
    >>> to_json(kind, Variant("Many", [1, 2]))
    '{"Many":[1,2]}'
    >>> from_json(kind, '"Empty"')
    Variant(name='Empty', value=None)
    >>> from_json(kind, '{"Many": [1, -2]}')
    Traceback (most recent call last):
    ...
    cuzk.errors.VanillaFormatError: serde JSON: $.Many[1]: expected u64, got -2
"""

from __future__ import annotations

import json

from cuzk.bounded_json import loads_bounded
from cuzk.circuits.filecoin.vanilla.paths import build as _build, fail, show as _show
from cuzk.circuits.filecoin.vanilla.schema import (
    ByteVec, Bytes, Enum, Int, Mapped, Opt, Seq, Str, Struct, Unit, Variant, describe,
)
from cuzk.errors import InputError, VanillaFormatError

__all__ = ["from_json", "from_value", "to_json", "to_value"]


def _json_kind(v) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array",
            dict: "an object", type(None): "null"}.get(type(v), type(v).__name__)


# ---- reading ----

class _Reader:
    """Where the document came from, and whether its text holds any true/false at all."""

    __slots__ = ("where", "bools")

    def __init__(self, where: str, bools: bool):
        self.where, self.bools = where, bools


def _r_int(t, v, path, r):
    if type(v) is not int or not 0 <= v < (1 << t.bits):  # type(): a JSON true is no integer to serde
        fail(r.where, path, f"expected {describe(t)}, got {_show(v)}")
    return v


def _byte_list(v, path, r, what, size=None):
    if type(v) is not list or (size is not None and len(v) != size):
        got = f"an array of {len(v)}" if type(v) is list else _json_kind(v)
        fail(r.where, path, f"expected {what}, got {got}")
    # bytes() refuses every non-integer and every number outside 0..255 at C speed, but takes a
    # JSON true or false as 1 or 0: the items' types are looked at only where the text has them
    if r.bools and not all(type(x) is int for x in v):
        bad = next(i for i, x in enumerate(v) if type(x) is not int)
        fail(r.where, (path, bad), f"expected u8, got {_show(v[bad])}")
    try:
        return bytes(v)
    except (TypeError, ValueError):  # not an integer, or outside 0..255
        bad = next(i for i, x in enumerate(v) if type(x) is not int or not 0 <= x < 256)
        fail(r.where, (path, bad), f"expected u8, got {_show(v[bad])}")


def _r_bytes(t, v, path, r):
    return _byte_list(v, path, r, f"an array of {t.size} bytes", t.size)


def _r_bytevec(t, v, path, r):
    out = _byte_list(v, path, r, "an array of bytes")
    if t.max_len is not None and len(out) > t.max_len:
        fail(r.where, path, f"{len(out)} bytes, more than the {t.max_len} this field can hold")
    return out


def _r_unit(t, v, path, r):
    if v is not None:
        fail(r.where, path, f"expected null, got {_json_kind(v)}")
    return None


def _r_str(t, v, path, r):
    if type(v) is not str:
        fail(r.where, path, f"expected a string, got {_json_kind(v)}")
    if t.max_len is not None and len(v) > t.max_len:
        fail(r.where, path, f"a string of {len(v)} characters, more than {t.max_len}")
    return v


def _r_seq(t, v, path, r):
    if type(v) is not list:
        fail(r.where, path, f"expected an array ({describe(t)}), got {_json_kind(v)}")
    if t.max_len is not None and len(v) > t.max_len:
        fail(r.where, path, f"{len(v)} items, more than the {t.max_len} this field can hold")
    read, item = _READ[type(t.item)], t.item
    return [read(item, x, (path, i), r) for i, x in enumerate(v)]


def _r_opt(t, v, path, r):
    return None if v is None else _READ[type(t.item)](t.item, v, path, r)


def _r_struct(t, v, path, r):
    if type(v) is not dict:
        fail(r.where, path, f"expected an object ({t.name}), got {_json_kind(v)}")
    out, present = {}, 0
    for f in t.fields:
        if f.name in v:
            value = _READ[type(f.type)](f.type, v[f.name], (path, f.name), r)
            present += 1
        elif isinstance(f.type, Opt):
            value = None
        else:
            fail(r.where, path, f"{t.name} is missing field {f.name!r}")
        if f.attr is not None:
            out[f.attr] = value
    if len(v) > present:
        known = {f.name for f in t.fields}
        extra = next(k for k in v if k not in known)
        fail(r.where, path, f"{t.name} has no field {extra[:40]!r}")
    return out if t.cls is None else _build(t.cls, out, path, r.where, t.name)


def _r_enum(t, v, path, r):
    if type(v) is str:
        name, payload, has_payload = v, None, False
    elif type(v) is dict and len(v) == 1:
        (name, payload), has_payload = next(iter(v.items())), True
    else:
        got = f"an object of {len(v)} keys" if type(v) is dict else _json_kind(v)
        fail(r.where, path, f"expected {t.name} (a variant name or a one-key object), got {got}")
    i = t.index(name)
    if i is None:
        fail(r.where, path, f"{t.name} has no variant {name[:60]!r}")
    vtype = t.variants[i][1]
    if vtype is None:  # a unit variant: "Name", or {"Name": null} which serde_json also takes
        if has_payload and payload is not None:
            fail(r.where, (path, name), f"unit variant {name} takes null, got {_json_kind(payload)}")
        return Variant(name)
    if not has_payload:
        fail(r.where, path, f"variant {name} of {t.name} carries a value: expected {{{name!r}: ...}}")
    return Variant(name, _READ[type(vtype)](vtype, payload, (path, name), r))


def _r_mapped(t, v, path, r):
    inner = _READ[type(t.inner)](t.inner, v, path, r)
    return _build(t.load, inner, path, r.where, describe(t), spread=False)


_READ = {Int: _r_int, Bytes: _r_bytes, ByteVec: _r_bytevec, Unit: _r_unit, Str: _r_str, Seq: _r_seq,
         Opt: _r_opt, Struct: _r_struct, Enum: _r_enum, Mapped: _r_mapped}


def from_value(t, value, where: str = "serde JSON"):
    """The Python value of ``t`` held in an already parsed JSON ``value``.

    Raises:
        VanillaFormatError: the value does not have ``t``'s layout; the message names the path.
    """
    return _READ[type(t)](t, value, None, _Reader(where, True))


def from_json(t, text, where: str = "serde JSON", *, max_bytes: int | None = None, max_items: int | None = None):
    """Parse serde JSON ``text`` (str or bytes) as a value of ``t``.

    Args:
        t: the type description.
        text: the document.
        where: names the document in messages (a file name).
        max_bytes: refuse longer documents before parsing them.
        max_items: refuse documents holding more JSON values (see :func:`cuzk.bounded_json.check_items`).

    Raises:
        VanillaFormatError: not JSON, over a bound, or not of ``t``'s layout (the path is named).
    """
    value = loads_bounded(text, where, VanillaFormatError, max_bytes=max_bytes, max_items=max_items)
    if isinstance(text, str):
        bools = "true" in text or "false" in text
    else:  # UTF-8 bytes (the usual form); other encodings are checked item by item
        raw = bytes(text)
        bools = not raw.isascii() or b"true" in raw or b"false" in raw
    return _READ[type(t)](t, value, None, _Reader(where, bools))


# ---- writing ----

def _w_int(t, v, path, where):
    if type(v) is bool or not isinstance(v, int) or not 0 <= v < (1 << t.bits):
        fail(where, path, f"expected {describe(t)}, got {_show(v)}")
    return int(v)


def _w_bytes(t, v, path, where):
    if not isinstance(v, (bytes, bytearray)) or len(v) != t.size:
        got = f"{len(v)} bytes" if isinstance(v, (bytes, bytearray)) else type(v).__name__
        fail(where, path, f"expected {t.size} bytes, got {got}")
    return list(v)


def _w_bytevec(t, v, path, where):
    if not isinstance(v, (bytes, bytearray)) or (t.max_len is not None and len(v) > t.max_len):
        fail(where, path, f"expected bytes ({describe(t)}), got {_show(v)}")
    return list(v)


def _w_unit(t, v, path, where):
    if v is not None:
        fail(where, path, f"expected None, got {_show(v)}")
    return None


def _w_str(t, v, path, where):
    if not isinstance(v, str) or (t.max_len is not None and len(v) > t.max_len):
        fail(where, path, f"expected a string, got {_show(v)}")
    return v


def _w_seq(t, v, path, where):
    if not isinstance(v, (list, tuple)) or (t.max_len is not None and len(v) > t.max_len):
        fail(where, path, f"expected a list ({describe(t)}), got {_show(v)}")
    write, item = _WRITE[type(t.item)], t.item
    return [write(item, x, (path, i), where) for i, x in enumerate(v)]


def _w_opt(t, v, path, where):
    return None if v is None else _WRITE[type(t.item)](t.item, v, path, where)


def _w_struct(t, v, path, where):
    get = v.get if t.cls is None and isinstance(v, dict) else (lambda a: getattr(v, a, _MISSING))
    if t.cls is not None and not isinstance(v, t.cls):
        fail(where, path, f"expected {t.cls.__name__}, got {type(v).__name__}")
    out = {}
    for f in t.fields:
        value = None if f.attr is None else get(f.attr)
        if value is _MISSING:
            fail(where, path, f"{t.name} value has no {f.attr!r}")
        out[f.name] = _WRITE[type(f.type)](f.type, value, (path, f.name), where)
    return out


_MISSING = object()


def _w_enum(t, v, path, where):
    if not isinstance(v, Variant) or t.index(v.name) is None:
        fail(where, path, f"expected a Variant of {t.name}, got {_show(v)}")
    vtype = t.variants[t.index(v.name)][1]
    if vtype is None:  # a unit variant is its name
        _w_unit(None, v.value, (path, v.name), where)
        return v.name
    return {v.name: _WRITE[type(vtype)](vtype, v.value, (path, v.name), where)}


def _w_mapped(t, v, path, where):
    try:
        inner = t.dump(v)
    except (InputError, ValueError, TypeError, AttributeError) as e:
        fail(where, path, f"cannot write {_show(v)} as {describe(t)}: {e}")
    return _WRITE[type(t.inner)](t.inner, inner, path, where)


_WRITE = {Int: _w_int, Bytes: _w_bytes, ByteVec: _w_bytevec, Unit: _w_unit, Str: _w_str, Seq: _w_seq,
          Opt: _w_opt, Struct: _w_struct, Enum: _w_enum, Mapped: _w_mapped}


def to_value(t, value, where: str = "serde JSON writer"):
    """``value`` as the plain JSON value (dicts, lists, ints, strings, None) serde would write.

    Raises:
        VanillaFormatError: ``value`` does not fit ``t`` (the path is named).
    """
    return _WRITE[type(t)](t, value, None, where)


def to_json(t, value, where: str = "serde JSON writer") -> str:
    """``value`` as compact serde JSON text, as ``serde_json::to_string`` writes it."""
    return json.dumps(to_value(t, value, where), separators=(",", ":"), ensure_ascii=False)
