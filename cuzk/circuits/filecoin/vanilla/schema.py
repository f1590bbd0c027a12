"""Type descriptions of Rust types as serde sees them, read and written by two codecs.

One description serves both of rust-fil-proofs' byte forms: serde JSON
(:mod:`~cuzk.circuits.filecoin.vanilla.serde_json`) and bincode 1.x with its default options
(:mod:`~cuzk.circuits.filecoin.vanilla.bincode`). The nodes and what each form makes of them:

=================  ====================================  ======================================  ==============
node               Rust                                  serde JSON                              bincode
=================  ====================================  ======================================  ==============
``Int(bits)``      ``u8 u32 u64``, ``usize`` (64-bit)    a number                                ``bits/8`` bytes, little-endian
``Bytes(n)``       ``[u8; n]`` (a domain, a commitment)  an array of ``n`` numbers 0..255        ``n`` raw bytes
``ByteVec()``      ``Vec<u8>``                           an array of numbers 0..255              u64 length, the bytes
``Unit()``         ``()``, ``PhantomData<T>``            ``null``                                nothing
``Str()``          ``String``                            a string                                u64 length, UTF-8
``Seq(t)``         ``Vec<T>``                            an array                                u64 length, the items
``Opt(t)``         ``Option<T>``                         ``null`` or the value                   u8 0 / u8 1 and the value
``Struct``         a struct with named fields            an object, fields in declared order     the fields in order
``Enum``           an externally tagged enum             ``"Unit"`` or ``{"Variant": value}``    u32 variant index, the value
``Mapped``         (any of the above)                    as its inner node                       as its inner node
=================  ====================================  ======================================  ==============

A serde newtype struct (``struct PoseidonDomain([u8; 32])``) is its inner type in both forms, so
it needs no node of its own. Python values: ints, ``bytes``, ``None``, ``str``, lists, a dict per
:class:`Struct` (or an instance of its ``cls``), a :class:`Variant` per :class:`Enum`;
:class:`Mapped` converts to and from richer classes.

    >>> point = Struct("Point", (Field("x", Int(32)), Field("tag", Opt(Bytes(2)))))
    >>> from cuzk.circuits.filecoin.vanilla import to_json, from_json, to_bincode
    >>> to_json(point, {"x": 7, "tag": b"ab"})
    '{"x":7,"tag":[97,98]}'
    >>> from_json(point, '{"x":7,"tag":null}')
    {'x': 7, 'tag': None}
    >>> to_bincode(point, {"x": 7, "tag": None}).hex()
    '0700000000'
"""

from __future__ import annotations

from typing import Any, Callable

import attrs

__all__ = [
    "Int", "U8", "U32", "U64", "Bytes", "ByteVec", "Unit", "Str", "Seq", "Opt",
    "Field", "Struct", "Enum", "Variant", "Mapped", "Node", "bincode_min_size", "describe",
]


@attrs.frozen
class Int:
    """An unsigned integer of ``bits`` bits (Rust ``usize`` is ``Int(64)``: Filecoin runs on 64-bit hosts)."""

    bits: int = attrs.field(validator=attrs.validators.in_((8, 16, 32, 64)))


U8, U32, U64 = Int(8), Int(32), Int(64)


@attrs.frozen
class Bytes:
    """A fixed ``[u8; size]`` array, as Python ``bytes`` of that length."""

    size: int


@attrs.frozen
class ByteVec:
    """A ``Vec<u8>``, as Python ``bytes``; ``max_len`` bounds it where the type has a bound."""

    max_len: int | None = None


@attrs.frozen
class Unit:
    """``()`` or ``PhantomData<T>``; Python ``None``."""


@attrs.frozen
class Str:
    """A ``String``."""

    max_len: int | None = None


@attrs.frozen
class Seq:
    """A ``Vec<T>``, as a Python list; ``max_len`` bounds it where the type has a bound."""

    item: Any
    max_len: int | None = None


@attrs.frozen
class Opt:
    """An ``Option<T>``; Python ``None`` or the value. A missing JSON field reads as ``None`` (serde's rule)."""

    item: Any


@attrs.frozen
class Field:
    """One named field of a :class:`Struct`. ``attr`` is the Python attribute (or dict key) holding
    it, the field's name unless given; ``attr=None`` marks a field the Python side does not keep
    (a ``PhantomData`` that serde still writes): it must be a :class:`Unit`."""

    name: str
    type: Any
    attr: str | None = attrs.field(default=attrs.Factory(lambda self: self.name, takes_self=True))

    def __attrs_post_init__(self):
        if self.attr is None and not isinstance(self.type, Unit):
            raise TypeError(f"field {self.name!r}: only a Unit field may be left out of the Python value")


@attrs.frozen
class Struct:
    """A struct with named fields, in declaration order (the order serde writes and bincode needs).

    ``cls``: build ``cls(**fields)`` when reading and ``getattr`` when writing; a dict without it.
    """

    name: str
    fields: tuple = attrs.field(converter=tuple)
    cls: Any = None

    def __attrs_post_init__(self):
        names = [f.name for f in self.fields]
        if len(set(names)) != len(names):
            raise TypeError(f"struct {self.name}: a field name appears twice")


@attrs.frozen
class Variant:
    """The Python value of an :class:`Enum`: the variant's name and its value (``None`` for a unit variant)."""

    name: str
    value: Any = None


@attrs.frozen
class Enum:
    """An externally tagged enum (serde's default): ``variants`` is a tuple of ``(name, type)``,
    ``type`` None for a unit variant, in declaration order (bincode writes the index)."""

    name: str
    variants: tuple = attrs.field(converter=lambda v: tuple((n, t) for n, t in v))
    _index: dict = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self):
        names = [n for n, _ in self.variants]
        if len(set(names)) != len(names):
            raise TypeError(f"enum {self.name}: a variant name appears twice")
        object.__setattr__(self, "_index", {n: i for i, n in enumerate(names)})

    def index(self, name: str) -> int | None:
        """The variant's declaration index, None if the enum has no such variant."""
        return self._index.get(name)


@attrs.frozen
class Mapped:
    """``inner``'s layout with a Python class of its own: ``load`` turns the inner value into it
    (raising :class:`~cuzk.errors.InputError` for a value it cannot hold), ``dump`` back."""

    inner: Any
    load: Callable
    dump: Callable
    name: str = ""


Node = (Int, Bytes, ByteVec, Unit, Str, Seq, Opt, Struct, Enum, Mapped)


def bincode_min_size(t) -> int:
    """The fewest bytes a value of ``t`` takes in bincode; a length prefix is checked against it
    (``n`` items need at least ``n * bincode_min_size(item)`` bytes), which bounds every reader.

    >>> bincode_min_size(Struct("S", (Field("a", U64), Field("b", Seq(U8)), Field("c", Opt(U32)))))
    17
    """
    if isinstance(t, Int):
        return t.bits // 8
    if isinstance(t, Bytes):
        return t.size
    if isinstance(t, (ByteVec, Str, Seq)):
        return 8
    if isinstance(t, Unit):
        return 0
    if isinstance(t, Opt):
        return 1
    if isinstance(t, Struct):
        return sum(bincode_min_size(f.type) for f in t.fields)
    if isinstance(t, Enum):
        return 4 + min((bincode_min_size(v) if v is not None else 0) for _, v in t.variants)
    if isinstance(t, Mapped):
        return bincode_min_size(t.inner)
    raise TypeError(f"not a type description: {t!r}")


def describe(t) -> str:
    """A short Rust-like name of ``t`` for messages.

    >>> describe(Seq(Opt(Bytes(32))))
    'Vec<Option<[u8; 32]>>'
    """
    if isinstance(t, Int):
        return f"u{t.bits}"
    if isinstance(t, Bytes):
        return f"[u8; {t.size}]"
    if isinstance(t, ByteVec):
        return "Vec<u8>"
    if isinstance(t, Unit):
        return "()"
    if isinstance(t, Str):
        return "String"
    if isinstance(t, Seq):
        return f"Vec<{describe(t.item)}>"
    if isinstance(t, Opt):
        return f"Option<{describe(t.item)}>"
    if isinstance(t, (Struct, Enum)):
        return t.name
    if isinstance(t, Mapped):
        return t.name or describe(t.inner)
    raise TypeError(f"not a type description: {t!r}")
