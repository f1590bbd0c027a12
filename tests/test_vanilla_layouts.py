"""The serde JSON and bincode codecs of cuzk.circuits.filecoin.vanilla: round trips over random
type descriptions, bincode vectors worked out by hand from bincode 1.x's rules, serde's rules for
JSON (what it accepts and refuses), and the Merkle proof layout written out by hand."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from cuzk.circuits.filecoin.vanilla import (
    MERKLE_PROOF, U8, U32, U64, ByteVec, Bytes, Enum, Field, Int, MerkleProof, Opt, PathElement, Seq, Str,
    Struct, Unit, Variant, from_bincode, from_json, to_bincode, to_json, to_value,
)
from cuzk.circuits.filecoin.vanilla.schema import bincode_min_size
from cuzk.errors import CuzkError, InputError, VanillaFormatError

# ---- random type descriptions and values ----

_names = st.text("abcdefgh_", min_size=1, max_size=6)
_leaves = st.one_of(st.sampled_from([U8, U32, U64, Int(16)]), st.sampled_from([0, 1, 2, 32]).map(Bytes),
                    st.just(ByteVec()), st.just(Unit()), st.just(Str()))


def _struct(children):
    return st.lists(st.tuples(_names, children), min_size=0, max_size=4, unique_by=lambda f: f[0]).map(
        lambda fs: Struct("S", tuple(Field(n, t) for n, t in fs)))


def _enum(children):
    return st.lists(st.tuples(_names, st.one_of(st.none(), children)), min_size=1, max_size=4,
                    unique_by=lambda v: v[0]).map(lambda vs: Enum("E", vs))


types = st.recursive(_leaves, lambda c: st.one_of(c.map(Seq), c.map(Opt), _struct(c), _enum(c)), max_leaves=8)


def values(t):
    if isinstance(t, Int):
        return st.integers(0, (1 << t.bits) - 1)
    if isinstance(t, Bytes):
        return st.binary(min_size=t.size, max_size=t.size)
    if isinstance(t, ByteVec):
        return st.binary(max_size=8)
    if isinstance(t, Unit):
        return st.none()
    if isinstance(t, Str):
        return st.text(max_size=6)
    if isinstance(t, Seq):
        return st.lists(values(t.item), max_size=3)
    if isinstance(t, Opt):
        return st.one_of(st.none(), values(t.item))
    if isinstance(t, Struct):
        return st.fixed_dictionaries({f.name: values(f.type) for f in t.fields})
    if isinstance(t, Enum):
        return st.one_of(*[st.just(Variant(n)) if v is None else values(v).map(lambda x, n=n: Variant(n, x))
                           for n, v in t.variants])
    raise AssertionError(t)


_FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_FAST
@given(st.data())
def test_json_round_trip_of_any_description(data):
    t = data.draw(types)
    v = data.draw(values(t))
    text = to_json(t, v)
    assert text == json.dumps(to_value(t, v), separators=(",", ":"), ensure_ascii=False)
    assert from_json(t, text) == v
    assert to_json(t, from_json(t, text)) == text


@_FAST
@given(st.data())
def test_bincode_round_trip_prefixes_and_trailing_bytes(data):
    t = data.draw(types)
    v = data.draw(values(t))
    raw = to_bincode(t, v)
    assert from_bincode(t, raw) == v
    assert len(raw) >= bincode_min_size(t)
    for n in range(len(raw)):  # every truncation is refused as a format error
        with pytest.raises(VanillaFormatError):
            from_bincode(t, raw[:n])
    with pytest.raises(VanillaFormatError, match="bytes after"):
        from_bincode(t, raw + b"\x00")
    assert from_bincode(t, raw + b"\x00", allow_trailing=True) == v


# ---- bincode vectors from its rules: fixint little-endian, u64 lengths, u32 variant, u8 option tag ----

def test_bincode_vectors():
    s = Struct("S", (Field("n", U32), Field("xs", Seq(U64)), Field("o", Opt(U32)), Field("b", Bytes(3)),
                     Field("s", Str()), Field("v", ByteVec())))
    raw = to_bincode(s, {"n": 0x01020304, "xs": [5, 1 << 63], "o": None, "b": b"xyz", "s": "ab", "v": b"\xff"})
    assert raw.hex() == ("04030201" + "0200000000000000" + "0500000000000000" + "0000000000000080" + "00"
                         + "78797a" + "0200000000000000" + "6162" + "0100000000000000" + "ff")
    e = Enum("E", (("A", None), ("B", U8), ("C", Unit())))
    assert to_bincode(e, Variant("A")).hex() == "00000000"
    assert to_bincode(e, Variant("B", 7)).hex() == "0100000007"
    assert to_bincode(e, Variant("C")).hex() == "02000000"
    assert to_bincode(Struct("P", (Field("_h", Unit(), None), Field("x", U8))), {"x": 1}) == b"\x01"


def test_bincode_refusals_name_the_offset():
    seq = Struct("S", (Field("a", U8), Field("xs", Seq(U64))))
    with pytest.raises(VanillaFormatError, match=r"\$\.xs: at byte 1: a length of 18446744073709551615, more than the 0"):
        from_bincode(seq, b"\x01" + b"\xff" * 8)
    with pytest.raises(VanillaFormatError, match="Option tag of 2"):
        from_bincode(Opt(U8), b"\x02\x00")
    with pytest.raises(VanillaFormatError, match="variant index 3, E has 1"):
        from_bincode(Enum("E", (("A", None),)), b"\x03\x00\x00\x00")
    with pytest.raises(VanillaFormatError, match="not UTF-8"):
        from_bincode(Str(), b"\x01" + bytes(7) + b"\xff")
    with pytest.raises(VanillaFormatError, match="more than the 2 this field can hold"):
        from_bincode(Seq(U8, 2), b"\x03" + bytes(7) + b"abc")


# ---- JSON: serde's rules ----

POINT = Struct("Point", (Field("x", U32), Field("tag", Opt(Bytes(2))), Field("_h", Unit(), None)))


@pytest.mark.parametrize("doc, path, message", [
    ('{"x": true, "_h": null}', "$.x", "expected u32, got true"),
    ('{"x": 1.0, "_h": null}', "$.x", "expected u32, got 1.0"),
    ('{"x": -1, "_h": null}', "$.x", "expected u32, got -1"),
    ('{"x": 4294967296, "_h": null}', "$.x", "expected u32"),
    ('{"x": "1", "_h": null}', "$.x", 'expected u32, got "1"'),
    ('{"_h": null}', "$", "Point is missing field 'x'"),
    ('{"x": 1}', "$", "Point is missing field '_h'"),
    ('{"x": 1, "_h": 0}', "$._h", "expected null, got a number"),
    ('{"x": 1, "_h": null, "y": 2}', "$", "Point has no field 'y'"),
    ('{"x": 1, "tag": [1], "_h": null}', "$.tag", "expected an array of 2 bytes, got an array of 1"),
    ('{"x": 1, "tag": [1, 256], "_h": null}', "$.tag[1]", "expected u8, got 256"),
    ('{"x": 1, "tag": [1, false], "_h": null}', "$.tag[1]", "expected u8, got false"),
    ('{"x": 1, "tag": [1, 2.5], "_h": null}', "$.tag[1]", "expected u8, got 2.5"),
    ('{"x": 1, "tag": [null, 2], "_h": null}', "$.tag[0]", "expected u8, got null"),
    ('{"x": 1, "tag": ["a", 2], "_h": null}', "$.tag[0]", 'expected u8, got "a"'),
    ('[1]', "$", "expected an object (Point), got an array"),
])
def test_json_refusals_name_the_path(doc, path, message):
    with pytest.raises(VanillaFormatError) as e:
        from_json(POINT, doc)
    assert e.value.path == path and message in str(e.value)
    assert isinstance(e.value, InputError)


def test_json_option_may_be_missing_and_unit_variants_take_both_forms():
    assert from_json(POINT, '{"x": 4294967295, "_h": null}') == {"x": 4294967295, "tag": None}
    e = Enum("E", (("A", None), ("B", Seq(U8))))
    assert from_json(e, '"A"') == from_json(e, '{"A": null}') == Variant("A")
    for doc, message in (('{"A": 1}', "unit variant A takes null"), ('"B"', "carries a value"),
                         ('{"A": null, "B": []}', "an object of 2 keys"), ('"Z"', "no variant 'Z'"), ("3", "got a number")):
        with pytest.raises(VanillaFormatError, match=message):
            from_json(e, doc)


def test_json_bounds():
    with pytest.raises(VanillaFormatError, match="nested deeper"):
        from_json(Seq(U8), "[" * 10000)
    with pytest.raises(VanillaFormatError, match="more than the 10"):
        from_json(Seq(U8), "[1, 2, 3, 4, 5]", max_bytes=10)
    with pytest.raises(VanillaFormatError, match="not valid JSON"):
        from_json(Seq(U8), "[1, 2")
    with pytest.raises(VanillaFormatError, match="more than the 2 this field"):
        from_json(Seq(U8, 2), "[1, 2, 3]")


def test_writer_refuses_values_that_do_not_fit():
    for value, message in (({"x": True, "tag": None}, r"\$\.x: expected u32, got true"),
                           ({"x": 1, "tag": b"abc"}, r"\$\.tag: expected 2 bytes, got 3 bytes"),
                           ({"x": 1 << 32, "tag": None}, r"expected u32")):
        for write in (to_json, to_bincode):
            with pytest.raises(VanillaFormatError, match=message):
                write(POINT, value)


# ---- the Merkle proof, written out by hand as serde lays it out ----

def _d(b: int) -> list:
    return [b] + [0] * 31


def test_merkle_sub_proof_json_by_hand():
    doc = {"data": {"Sub": {
        "base_proof": {"path": [{"hashes": [_d(1), _d(2), _d(3)], "index": 2}]},
        "sub_proof": {"path": [{"hashes": [_d(4)], "index": 1}]},
        "root": _d(9), "leaf": _d(8)}}}
    text = json.dumps(doc, separators=(",", ":"))
    p = from_json(MERKLE_PROOF, text)
    assert p.kind == "Sub" and p.root == bytes([9]) + bytes(31) and p.leaf[0] == 8
    assert p.arities == (4, 2) and p.path_index() == 2 + 4 * 1
    assert [e.index for e in p.levels] == [2, 1] and p.siblings() == [[1, 2, 3], [4]]
    assert to_json(MERKLE_PROOF, p) == text


def test_merkle_proof_bincode_by_hand():
    p = MerkleProof(root=bytes([9]) + bytes(31), leaf=bytes([8]) + bytes(31), base=[PathElement([bytes(32)], 1)])
    raw = to_bincode(MERKLE_PROOF, p)
    assert raw.hex() == ("00000000" + p.root.hex() + p.leaf.hex() + "0100000000000000"
                         + "0100000000000000" + "00" * 32 + "0100000000000000")
    assert from_bincode(MERKLE_PROOF, raw) == p
    top = MerkleProof(root=p.root, leaf=p.leaf, base=p.base, sub=[PathElement([p.root], 0)], top=[PathElement([p.leaf], 1)])
    assert to_bincode(MERKLE_PROOF, top)[:4] == b"\x02\x00\x00\x00" and from_bincode(MERKLE_PROOF, to_bincode(MERKLE_PROOF, top)) == top


@pytest.mark.parametrize("doc, path, message", [
    ('{"data": {"Single": {"root": [0], "leaf": [0], "path": {"path": []}}}}', "$.data.Single.root", "32 bytes"),
    ('{"data": {"Middle": {}}}', "$.data", "no variant 'Middle'"),
    ('{"data": {"Single": {"root": %s, "leaf": %s, "path": {"path": [{"hashes": [], "index": 1}]}}}}'
     % (_d(0), _d(0)), "$.data.Single.path.path[0]", "positions 0..0, got index 1"),
])
def test_merkle_proof_refusals(doc, path, message):
    with pytest.raises(VanillaFormatError) as e:
        from_json(MERKLE_PROOF, doc)
    assert e.value.path == path and message in str(e.value)


def test_merkle_proof_class_checks():
    with pytest.raises(InputError, match="Top proof has sub levels"):
        MerkleProof(root=bytes(32), leaf=bytes(32), base=(), top=())
    with pytest.raises(CuzkError):
        MerkleProof(root=bytes(31), leaf=bytes(32), base=())


def test_bytes_refuse_booleans_however_the_document_arrives():
    t = Struct("T", (Field("d", Bytes(2)),))
    for doc in ('{"d": [true, 1]}', b'{"d": [true, 1]}', '{"d": [true, 1]}'.encode("utf-16")):
        with pytest.raises(VanillaFormatError, match=r"\$\.d\[0\]: expected u8, got true"):
            from_json(t, doc)
    from cuzk.circuits.filecoin.vanilla import from_value
    with pytest.raises(VanillaFormatError, match="got false"):
        from_value(t, {"d": [1, False]})
