"""A key-cache file whose table passes its checksum but is inconsistent (cuzk/engine/keyfile.py).

The table digest shows the table is the one written, not that a writer (an old cuzk, a tool, a
person with an editor who also fixed the digest) wrote sense. Every way a digest-valid table
can be wrong must come out as ``KeyCacheFormatError`` naming the field, never ``OverflowError``,
``TypeError`` or ``KeyError``, and a table that reads must give arrays that lie in the file.
"""

from __future__ import annotations

import hashlib
import json
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuzk.engine.keyfile import FORMAT_VERSION, MAGIC, file_identity, read_keyfile, write_keyfile
from cuzk.errors import KeyCacheFormatError

_PRE = struct.Struct("<8sIIQQ32s")


def _valid(tmp_path):
    path = tmp_path / "x.cuzkkey"
    write_keyfile(path, {"a": np.arange(6, dtype=np.uint64).reshape(2, 3), "b": np.arange(5, dtype=np.int32)},
                  {"kind": "demo"})
    raw = path.read_bytes()
    t_off, t_len = _PRE.unpack(raw[:64])[3:5]
    return raw[:t_off], json.loads(raw[t_off:t_off + t_len])


def _write(path, data: bytes, table) -> None:
    """``data`` (preamble and data region) followed by ``table``, with a correct preamble and digest."""
    body = json.dumps(table).encode()
    pre = _PRE.pack(MAGIC, FORMAT_VERSION, 0, len(data), len(body), hashlib.sha256(body).digest())
    path.write_bytes(pre + data[64:] + body)


@pytest.mark.parametrize("edit, field", [
    (lambda t: t["arrays"][0].update(shape=[2**64]), "arrays[0].shape"),
    (lambda t: t["arrays"][0].update(shape=[2**62, 4]), "arrays[0].shape"),
    (lambda t: t["arrays"][1].update(name=["b"]), "arrays[1].name"),
    (lambda t: t["arrays"][1].pop("name"), "arrays[1].name"),
    (lambda t: t["arrays"][0].pop("offset"), "arrays[0].offset"),
    (lambda t: t["arrays"][0].update(offset=64.0), "arrays[0].offset"),
    (lambda t: t["arrays"][0].update(dtype=["<u8"]), "arrays[0].dtype"),
    (lambda t: t["arrays"][0].update(dtype="<f8"), "arrays[0].dtype"),
    (lambda t: t["arrays"][1].update(name="a"), "arrays[1].name"),
    (lambda t: t["arrays"].__setitem__(0, "a"), "arrays[0]"),
    (lambda t: t.update(arrays={"a": 1}), "arrays"),
    (lambda t: t.pop("chunks"), "chunks"),
    (lambda t: t.update(chunks=[1]), "chunks"),
    (lambda t: t.update(chunk=2.5), "chunk"),
    (lambda t: t.update(chunk=True), "chunk"),
    (lambda t: t.pop("meta"), "meta"),
    (lambda t: t.update(meta=[]), "meta"),
    (lambda t: t.update(data_end="x"), "data_end"),
])
def test_digest_valid_but_inconsistent_tables_name_the_field(tmp_path, edit, field):
    data, table = _valid(tmp_path)
    edit(table)
    path = tmp_path / "bad.cuzkkey"
    _write(path, data, table)
    with pytest.raises(KeyCacheFormatError) as info:
        read_keyfile(path)
    assert field in str(info.value)


def test_a_table_that_is_not_an_object_is_refused(tmp_path):
    data, _ = _valid(tmp_path)
    for table in ([], "x", 3, None):
        path = tmp_path / "bad.cuzkkey"
        _write(path, data, table)
        with pytest.raises(KeyCacheFormatError, match="table"):
            read_keyfile(path)


def test_a_deeply_nested_digest_valid_table_is_refused(tmp_path):
    data, table = _valid(tmp_path)
    body = json.dumps(table).encode()[:-1] + b', "deep": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    pre = _PRE.pack(MAGIC, FORMAT_VERSION, 0, len(data), len(body), hashlib.sha256(body).digest())
    path = tmp_path / "deep.cuzkkey"
    path.write_bytes(pre + data[64:] + body)
    with pytest.raises(KeyCacheFormatError, match="nested"):
        read_keyfile(path)


_json = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False)
                     | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                     max_leaves=6)
_FIELDS = ["data_end", "chunk", "chunks", "meta", "arrays", "arrays.0", "arrays.1", "arrays.0.name", "arrays.0.dtype",
           "arrays.0.shape", "arrays.0.offset", "arrays.0.nbytes", "arrays.1.shape", "arrays.1.shape.0",
           "arrays.0.shape.1", "chunks.0"]


@settings(max_examples=300, deadline=None)
@given(field=st.sampled_from(_FIELDS), value=_json, drop=st.booleans())
def test_any_field_replaced_or_dropped_is_a_format_error_or_a_sound_file(tmp_path_factory, field, value, drop):
    d = tmp_path_factory.mktemp("t")
    data, table = _valid(d)
    *parents, last = field.split(".")
    node = table
    for p in parents:
        node = node[int(p)] if isinstance(node, list) else node[p]
    key = int(last) if isinstance(node, list) else last
    if drop:
        del node[key]
    else:
        node[key] = value
    path = d / "bad.cuzkkey"
    _write(path, data, table)
    try:
        kf = read_keyfile(path, verified={file_identity(path)})  # the data check cannot hide the table's
    except KeyCacheFormatError:
        return
    for name, a in kf.arrays.items():  # accepted: every array lies in the data region
        assert isinstance(name, str) and a.nbytes <= kf.nbytes and not a.flags.writeable
        a.sum()  # touching every byte of it stays inside the mapping
