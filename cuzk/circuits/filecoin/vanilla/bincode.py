"""bincode 1.x (default options, as ``bincode::serialize`` writes) of a type description.

Fixed-width little-endian integers (``usize`` as 8 bytes), a u64 length before every ``Vec`` and
``String``, nothing before a fixed array, a u8 0/1 before an ``Option``'s value, a u32 variant
index before an enum's value, struct fields back to back. Lengths are checked against the bytes
left before anything is allocated (``n`` items need ``n`` times the item's smallest encoding,
:func:`~cuzk.circuits.filecoin.vanilla.schema.bincode_min_size`), so a hostile length costs
nothing. bincode itself accepts trailing bytes; :func:`from_bincode` refuses them unless told
otherwise, since a whole file is one value.

    >>> from cuzk.circuits.filecoin.vanilla.schema import Field, Opt, Seq, Struct, U32, U64
    >>> s = Struct("S", (Field("n", U32), Field("xs", Seq(U64)), Field("o", Opt(U32))))
    >>> raw = to_bincode(s, {"n": 1, "xs": [2], "o": 3}); raw.hex()
    '01000000010000000000000002000000000000000103000000'
    >>> from_bincode(s, raw)
    {'n': 1, 'xs': [2], 'o': 3}
    >>> from_bincode(s, raw[:-1])
    Traceback (most recent call last):
    ...
    cuzk.errors.VanillaFormatError: bincode: $.o: at byte 21: needs 4 bytes, 3 left
"""

from __future__ import annotations

from cuzk.circuits.filecoin.vanilla.paths import build as _build, fail, show as _show
from cuzk.circuits.filecoin.vanilla.schema import (
    ByteVec, Bytes, Enum, Int, Mapped, Opt, Seq, Str, Struct, Unit, Variant, bincode_min_size, describe,
)
from cuzk.errors import InputError

__all__ = ["from_bincode", "to_bincode", "MAX_ZERO_SIZED_ITEMS"]

#: Most items of a zero-size type (``Vec<()>``) a length may announce: they take no bytes, so
#: the bytes left cannot bound them. No rust-fil-proofs type has such a Vec.
MAX_ZERO_SIZED_ITEMS = 1 << 16


class _Reader:
    """A position in the bytes; every read checks what is left."""

    __slots__ = ("buf", "pos", "where", "_min")

    def __init__(self, buf, where):
        self.buf, self.pos, self.where, self._min = buf, 0, where, {}

    def take(self, n, path):
        if n > len(self.buf) - self.pos:
            fail(self.where, path, f"at byte {self.pos}: needs {n} bytes, {len(self.buf) - self.pos} left")
        start = self.pos
        self.pos += n
        return self.buf[start:self.pos]

    def uint(self, nbytes, path):
        return int.from_bytes(self.take(nbytes, path), "little")

    def length(self, t_item, max_len, path):
        """A u64 length, refused when its items cannot fit in the bytes left."""
        at = self.pos
        n = self.uint(8, path)
        key = id(t_item)
        if key not in self._min:  # the entry keeps t_item alive, so its id names it all along
            self._min[key] = (t_item, bincode_min_size(t_item))
        size = self._min[key][1]
        room = (len(self.buf) - self.pos) // size if size else MAX_ZERO_SIZED_ITEMS
        if max_len is not None and n > max_len:
            fail(self.where, path, f"at byte {at}: a length of {n}, more than the {max_len} this field can hold")
        if n > room:
            limit = f"the {room} that fit in the {len(self.buf) - self.pos} bytes left" if size else \
                f"the {room} zero-size items a length may announce"
            fail(self.where, path, f"at byte {at}: a length of {n}, more than {limit}")
        return n


def _r_int(t, r, path):
    return r.uint(t.bits // 8, path)


def _r_bytes(t, r, path):
    return bytes(r.take(t.size, path))


_BYTE = Int(8)


def _r_bytevec(t, r, path):
    return bytes(r.take(r.length(_BYTE, t.max_len, path), path))


def _r_unit(t, r, path):
    return None


def _r_str(t, r, path):
    at = r.pos
    raw = bytes(r.take(r.length(_BYTE, t.max_len, path), path))
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        fail(r.where, path, f"at byte {at}: a string that is not UTF-8 ({e.reason})")


def _r_seq(t, r, path):
    n = r.length(t.item, t.max_len, path)
    read, item = _READ[type(t.item)], t.item
    return [read(item, r, (path, i)) for i in range(n)]


def _r_opt(t, r, path):
    at = r.pos
    tag = r.uint(1, path)
    if tag > 1:
        fail(r.where, path, f"at byte {at}: an Option tag of {tag} (0 or 1 expected)")
    return _READ[type(t.item)](t.item, r, path) if tag else None


def _r_struct(t, r, path):
    out = {}
    for f in t.fields:
        value = _READ[type(f.type)](f.type, r, (path, f.name))
        if f.attr is not None:
            out[f.attr] = value
    return out if t.cls is None else _build(t.cls, out, path, r.where, t.name)


def _r_enum(t, r, path):
    at = r.pos
    i = r.uint(4, path)
    if i >= len(t.variants):
        fail(r.where, path, f"at byte {at}: variant index {i}, {t.name} has {len(t.variants)}")
    name, vtype = t.variants[i]
    return Variant(name, None if vtype is None else _READ[type(vtype)](vtype, r, (path, name)))


def _r_mapped(t, r, path):
    return _build(t.load, _READ[type(t.inner)](t.inner, r, path), path, r.where, describe(t), spread=False)


_READ = {Int: _r_int, Bytes: _r_bytes, ByteVec: _r_bytevec, Unit: _r_unit, Str: _r_str, Seq: _r_seq,
         Opt: _r_opt, Struct: _r_struct, Enum: _r_enum, Mapped: _r_mapped}


def from_bincode(t, data, where: str = "bincode", *, allow_trailing: bool = False):
    """Read one value of ``t`` from bincode ``data`` (bytes-like).

    Args:
        allow_trailing: accept bytes after the value (bincode's own default); refused otherwise.

    Raises:
        VanillaFormatError: truncated data, a length larger than the bytes left, a bad Option
            tag or variant index, a class's own check, trailing bytes; the path and offset are named.
    """
    r = _Reader(memoryview(data).cast("B"), where)
    value = _READ[type(t)](t, r, None)
    if not allow_trailing and r.pos != len(r.buf):
        fail(where, None, f"{len(r.buf) - r.pos} bytes after the {describe(t)} value (at byte {r.pos})")
    return value


# ---- writing ----

def _w_uint(v, bits, path, where, t):
    if type(v) is bool or not isinstance(v, int) or not 0 <= v < (1 << bits):
        fail(where, path, f"expected {describe(t)}, got {_show(v)}")
    return int(v).to_bytes(bits // 8, "little")


def _w_int(t, v, out, path, where):
    out.append(_w_uint(v, t.bits, path, where, t))


def _w_bytes(t, v, out, path, where):
    if not isinstance(v, (bytes, bytearray)) or len(v) != t.size:
        got = f"{len(v)} bytes" if isinstance(v, (bytes, bytearray)) else type(v).__name__
        fail(where, path, f"expected {t.size} bytes, got {got}")
    out.append(bytes(v))


def _w_bytevec(t, v, out, path, where):
    if not isinstance(v, (bytes, bytearray)) or (t.max_len is not None and len(v) > t.max_len):
        fail(where, path, f"expected bytes ({describe(t)}), got {_show(v)}")
    out += (len(v).to_bytes(8, "little"), bytes(v))


def _w_unit(t, v, out, path, where):
    if v is not None:
        fail(where, path, f"expected None, got {_show(v)}")


def _w_str(t, v, out, path, where):
    if not isinstance(v, str) or (t.max_len is not None and len(v) > t.max_len):
        fail(where, path, f"expected a string, got {_show(v)}")
    raw = v.encode("utf-8")
    out += (len(raw).to_bytes(8, "little"), raw)


def _w_seq(t, v, out, path, where):
    if not isinstance(v, (list, tuple)) or (t.max_len is not None and len(v) > t.max_len):
        fail(where, path, f"expected a list ({describe(t)}), got {_show(v)}")
    out.append(len(v).to_bytes(8, "little"))
    write, item = _WRITE[type(t.item)], t.item
    for i, x in enumerate(v):
        write(item, x, out, (path, i), where)


def _w_opt(t, v, out, path, where):
    if v is None:
        out.append(b"\x00")
    else:
        out.append(b"\x01")
        _WRITE[type(t.item)](t.item, v, out, path, where)


def _w_struct(t, v, out, path, where):
    if t.cls is not None and not isinstance(v, t.cls):
        fail(where, path, f"expected {t.cls.__name__}, got {type(v).__name__}")
    if t.cls is None and not isinstance(v, dict):
        fail(where, path, f"expected a dict ({t.name}), got {type(v).__name__}")
    for f in t.fields:
        if f.attr is None:
            continue  # a Unit: no bytes
        try:
            value = v[f.attr] if t.cls is None else getattr(v, f.attr)
        except (KeyError, AttributeError):
            fail(where, path, f"{t.name} value has no {f.attr!r}")
        _WRITE[type(f.type)](f.type, value, out, (path, f.name), where)


def _w_enum(t, v, out, path, where):
    if not isinstance(v, Variant) or t.index(v.name) is None:
        fail(where, path, f"expected a Variant of {t.name}, got {_show(v)}")
    i = t.index(v.name)
    out.append(i.to_bytes(4, "little"))
    vtype = t.variants[i][1]
    if vtype is None:
        _w_unit(None, v.value, out, (path, v.name), where)
    else:
        _WRITE[type(vtype)](vtype, v.value, out, (path, v.name), where)


def _w_mapped(t, v, out, path, where):
    try:
        inner = t.dump(v)
    except (InputError, ValueError, TypeError, AttributeError) as e:
        fail(where, path, f"cannot write {_show(v)} as {describe(t)}: {e}")
    _WRITE[type(t.inner)](t.inner, inner, out, path, where)


_WRITE = {Int: _w_int, Bytes: _w_bytes, ByteVec: _w_bytevec, Unit: _w_unit, Str: _w_str, Seq: _w_seq,
          Opt: _w_opt, Struct: _w_struct, Enum: _w_enum, Mapped: _w_mapped}


def to_bincode(t, value, where: str = "bincode writer") -> bytes:
    """``value`` as bincode bytes, as ``bincode::serialize`` writes the Rust type.

    Raises:
        VanillaFormatError: ``value`` does not fit ``t`` (the path is named).
    """
    out: list = []
    _WRITE[type(t)](t, value, out, None, where)
    return b"".join(out)
