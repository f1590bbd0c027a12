"""Reader defects an outside probe found (docs/reliability.md), one regression test (or a few) each.

3. JSON readers: bounded memory (streaming depth check, per-kind size limit checked before reading).
4. ``Proof.from_json`` of deeply nested text: a CuzkError, not RecursionError.
6. PCE files with a valid checksum but a crafted header: ``PceFormatError``, not Overflow/struct errors.
7. ``Timeline.load`` type-checks the detail values analysis computes with.
8a. ``.zkey``/``.wtns``/``.r1cs``/``.params`` readers check the header before reading the rest.

Memory is measured with ``tracemalloc`` in process (numpy reports its buffers to it) and with
``/proc/self/status`` in a subprocess for the CLI, so no test depends on timing.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cuzk
import cuzk.cli
from cuzk.bounded_json import MAX_JSON_DEPTH, check_depth, loads_bounded
from cuzk.circuits.cube import Cube
from cuzk.errors import (CuzkError, ParamsFormatError, PceFormatError, R1csFormatError, SnarkjsFormatError,
                         TimelineFormatError)
from cuzk.formats import bellperson, snarkjs, snarkjs_json
from cuzk.groth16 import Proof
from cuzk.synth import Synthesizer
from cuzk.synth.pce import _PRE
from cuzk.timeline import Timeline, storage
from cuzk.timeline.events import Event, EventKind

MiB = 1 << 20
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def traced_peak(fn, *args) -> tuple[int, BaseException | None]:
    """Peak bytes allocated (above what was allocated before) while ``fn(*args)`` runs, and what it raised."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        err = None
        try:
            fn(*args)
        except BaseException as e:  # the test asserts on it
            err = e
        return tracemalloc.get_traced_memory()[1] - base, err
    finally:
        tracemalloc.stop()


# ------------------------------------------------------------------ 3: JSON memory
def test_depth_check_streams_without_full_size_copies():
    data = b"[" * (16 * MiB)  # the old check built ~22 bytes of numpy arrays per input byte
    peak, err = traced_peak(loads_bounded, data, "deep.json")
    assert isinstance(err, CuzkError) and "nested deeper" in str(err)
    assert peak < 0.5 * len(data), f"{peak / MiB:.1f} MiB traced for a {len(data) / MiB:.0f} MiB input"


def test_depth_check_temporaries_stay_below_twice_a_small_input():
    # found by the fuzzer: np.isin masks + int8 + int32 per 256 KiB chunk were ~7x a 64 KiB input
    data = b"[]" * (32 << 10)
    peak, err = traced_peak(check_depth, data, "x")
    assert err is None and peak < 2 * len(data), f"{peak} bytes traced for {len(data)}"


@pytest.mark.parametrize("kind", ["str", "bytes", "memoryview"])
def test_depth_check_counts_across_chunk_edges(kind):
    # depth 65 reached only after the first 2^18-byte chunk: the running depth must carry over
    text = " " * ((1 << 18) - 10) + "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    data = {"str": text, "bytes": text.encode(), "memoryview": memoryview(text.encode())}[kind]
    with pytest.raises(CuzkError, match="nested deeper than 64"):
        check_depth(data, "x")
    ok = text.replace("[", " ", 1).replace("]", " ", 1)  # exactly 64 deep is fine
    assert check_depth(ok if kind == "str" else ok.encode(), "x") is None


def test_oversized_json_is_refused_before_it_is_read(tmp_path):
    limit = snarkjs_json.MAX_JSON_BYTES["vk"][0]
    big = tmp_path / "vk.json"
    with open(big, "wb") as f:  # sparse: no disk, and reading it whole would take gigabytes
        f.truncate(3 << 30)
    peak, err = traced_peak(snarkjs_json.read_vk_json, big)
    assert isinstance(err, SnarkjsFormatError), err
    assert "refusing to read it" in str(err) and str(snarkjs_json.MAX_PUBLIC_INPUTS) in str(err)
    assert peak < MiB and limit < 64 * MiB
    for kind, reader in (("proof", snarkjs_json.read_proof_json), ("public", snarkjs_json.read_public_json)):
        with open(tmp_path / f"{kind}.json", "wb") as f:
            f.truncate(snarkjs_json.MAX_JSON_BYTES[kind][0] + 1)
        with pytest.raises(SnarkjsFormatError, match="refusing"):
            reader(tmp_path / f"{kind}.json")


def test_size_limits_leave_room_for_real_files(tmp_path):
    # a vk with MAX_PUBLIC_INPUTS inputs, written as snarkjs_json writes it, fits its limit
    vk_obj = {"protocol": "groth16", "curve": "bls12381", "nPublic": snarkjs_json.MAX_PUBLIC_INPUTS,
              "IC": [[str(cuzk.field.FQ.modulus - 1)] * 2 + ["1"]] * (snarkjs_json.MAX_PUBLIC_INPUTS + 1)}
    pub = [str(cuzk.field.FR.modulus - 1)] * snarkjs_json.MAX_PUBLIC_INPUTS
    assert len(json.dumps(vk_obj, indent=1)) < snarkjs_json.MAX_JSON_BYTES["vk"][0]
    assert len(json.dumps(pub, indent=1)) < snarkjs_json.MAX_JSON_BYTES["public"][0]


_CLI_CHILD = textwrap.dedent("""
    import json, sys
    import cuzk.cli

    def status(key):
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) * 1024 for l in f if l.startswith(key + ":"))

    base = status("VmRSS")  # right after import
    try:
        rc = cuzk.cli.main(["groth16", "verify", *sys.argv[1:]])
    except SystemExit as e:
        rc = e.code
    print(json.dumps({"rc": rc, "base": base, "peak": status("VmHWM")}))
""")


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux /proc")
@pytest.mark.parametrize("content, size", [("junk", 64 * MiB), ("nested", 64 * MiB), ("nested", 24 * MiB),
                                           ("numbers", 24 * MiB)])
def test_cli_verify_of_a_big_vk_json_stays_within_3x(tmp_path, content, size):
    # 64 MiB: over the vk limit, refused unread; 24 MiB: under it, refused by the streaming
    # depth check or the value count (parsed, "[1,1,...]" would take ~5x its size in objects)
    vk = tmp_path / "vk.json"
    rng = np.random.default_rng(12)
    body = {"junk": lambda: rng.integers(0, 256, size, dtype=np.uint8).tobytes(),
            "nested": lambda: b"[" * size,  # the old depth check's worst case: 1.48 GB
            "numbers": lambda: b"[" + b"1," * (size // 2 - 1) + b"1]"}[content]()
    vk.write_bytes(body)
    (tmp_path / "public.json").write_text("[]")
    (tmp_path / "proof.json").write_text("{}")
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", _CLI_CHILD, str(vk), str(tmp_path / "public.json"),
                          str(tmp_path / "proof.json")], capture_output=True, text=True, env=env, timeout=300)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["rc"] != 0 and "error" in out.stderr and "Traceback" not in out.stderr
    growth = res["peak"] - res["base"]
    assert growth <= 3 * size, f"peak RSS grew {growth / MiB:.0f} MiB for a {size / MiB:.0f} MiB file"


# ------------------------------------------------------------------ 4: Proof.from_json
@pytest.mark.parametrize("text", ["[" * 100000, "{\"a\":" * 100000, "[" * 65 + "]" * 65])
def test_proof_from_json_of_deep_nesting_is_a_cuzk_error(text):
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(100000)  # as py_ecc does at import: then json's C parser overflows the stack
    try:
        # 100000 characters are also over the 64 KiB a proof JSON may take
        with pytest.raises(ParamsFormatError, match="nested deeper|more than the 65536"):
            Proof.from_json(text)
    finally:
        sys.setrecursionlimit(limit)


@pytest.mark.parametrize("text", ["", "null", "[]", "\"x\"", '{"a": 1, "b": 2, "c": 3}', b"\xff\xfe\x00",
                                  '{"a": "zz", "b": "", "c": ""}', 5, None])
def test_proof_from_json_rejects_malformed_text_as_cuzk_error(text):
    with pytest.raises(CuzkError):
        Proof.from_json(text)


# ------------------------------------------------------------------ 6: PCE header ranges
@pytest.fixture(scope="module")
def pce_parts(tmp_path_factory):
    path = tmp_path_factory.mktemp("pce") / "cube.pce"
    Synthesizer(Cube()).save(path)
    buf = path.read_bytes()
    magic, version, zero, hlen = _PRE.unpack_from(buf)
    return json.loads(buf[_PRE.size:_PRE.size + hlen]), buf[_PRE.size + hlen:-32], (magic, version, zero)


def write_pce(path, header: dict, arrays: bytes, prefix) -> None:
    """A PCE file with this header and a correct checksum (what a crafted file looks like)."""
    hb = json.dumps(header).encode()
    body = _PRE.pack(*prefix, len(hb)) + hb + arrays
    path.write_bytes(body + hashlib.sha256(body).digest())


@pytest.mark.parametrize("edit", [
    lambda h: h["arrays"][0].__setitem__(2, [10**80]),  # shape: OverflowError from np.prod
    lambda h: h.__setitem__("n_private", 2**64),  # struct.error in the digest
    lambda h: h.__setitem__("n_public", -1),
    lambda h: h.__setitem__("n_constraints", 1.5),
    lambda h: h.__setitem__("n_slots", "7"),
    lambda h: h["arrays"][0].__setitem__(3, -8),  # negative offset
    lambda h: h["arrays"][0].__setitem__(1, "<u8"),  # unsigned row pointers slip past < 0 checks
    lambda h: h["inputs"][0].__setitem__(1, [2**62, 2**62]),
    lambda h: h.__setitem__("names", None),
    lambda h: h.__setitem__("arrays", {"x": 1}),
    lambda h: h.__setitem__("inputs", [["x"]]),
])
def test_crafted_pce_header_is_a_pce_format_error(tmp_path, pce_parts, edit):
    hdr, arrays, prefix = pce_parts
    hdr = json.loads(json.dumps(hdr))
    edit(hdr)
    write_pce(tmp_path / "x.pce", hdr, arrays, prefix)
    with pytest.raises(PceFormatError):
        Synthesizer.load(tmp_path / "x.pce")


_HOSTILE = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                     st.text(max_size=5), st.lists(st.integers(-2**66, 2**66), max_size=3),
                     st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
_FIELDS = ["n_public", "n_private", "n_constraints", "n_slots", "digest", "inputs", "names", "arrays",
           "arrays.0.2", "arrays.0.3", "arrays.0.4", "arrays.5", "inputs.0", "inputs.0.1", "names.0"]


@given(field=st.sampled_from(_FIELDS), value=_HOSTILE)
def test_any_hostile_header_value_is_a_pce_format_error(tmp_path_factory, pce_parts, field, value):
    hdr, arrays, prefix = pce_parts
    hdr = json.loads(json.dumps(hdr))
    *parents, last = field.split(".")
    node = hdr
    for p in parents:
        node = node[int(p)] if isinstance(node, list) else node[p]
    if isinstance(node, list):
        if int(last) >= len(node):
            return
        node[int(last)] = value
    else:
        node[last] = value
    path = tmp_path_factory.mktemp("h") / "x.pce"
    write_pce(path, hdr, arrays, prefix)
    try:
        Synthesizer.load(path)
    except PceFormatError:
        pass  # every other exception fails the test; a load that succeeds must be the same circuit
    else:
        assert Synthesizer.load(path).r1cs.digest == hdr["digest"]


# ------------------------------------------------------------------ 7: Timeline.load types
def saved_timeline(tmp_path, **detail):
    ev = [Event(0, EventKind.SYNTH_START, 1, detail={"thread_cpu_ns": 0, "process_cpu_ns": 0}),
          Event(10**6, EventKind.SYNTH_END, 1, detail={"thread_cpu_ns": 10**5, "process_cpu_ns": 10**5}),
          Event(2 * 10**6, EventKind.GPU_START, 1, detail={"thread_cpu_ns": 0, "process_cpu_ns": 10**5}),
          Event(3 * 10**6, EventKind.GPU_END, 1, detail={"thread_cpu_ns": 1, "process_cpu_ns": 10**6, **detail}),
          Event(4 * 10**6, EventKind.JOB_DONE, 1)]
    path = tmp_path / "t.jsonl"
    storage.save(ev, path)
    return path


@pytest.mark.parametrize("key, value", [
    ("thread_cpu_ns", "x"), ("process_cpu_ns", "x"), ("process_cpu_ns", None), ("thread_cpu_ns", 1.5),
    ("thread_cpu_ns", True), ("thread_cpu_ns", 10**30), ("device_ms", "fast"), ("device_ms", [1]),
    ("name", 5), ("error", {"a": 1}), ("reason", 3), ("value", [1, 2]),
])
def test_timeline_load_rejects_wrongly_typed_details(tmp_path, key, value):
    path = saved_timeline(tmp_path)
    lines = path.read_text().splitlines()
    ev = json.loads(lines[4])
    ev["detail"][key] = value
    lines[4] = json.dumps(ev)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TimelineFormatError, match="line 5"):
        Timeline.load(path)


@pytest.mark.parametrize("field, value", [("job", [1]), ("job", {"a": 1}), ("t_ns", 10**40),
                                          ("partition", 2**64), ("t_ns", 1.0)])
def test_timeline_load_rejects_values_analysis_cannot_use(tmp_path, field, value):
    path = saved_timeline(tmp_path)
    lines = path.read_text().splitlines()
    ev = json.loads(lines[2])
    ev[field] = value
    lines[2] = json.dumps(ev)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TimelineFormatError, match="line 3"):
        Timeline.load(path)


def test_timeline_with_valid_details_still_loads_and_summarizes(tmp_path):
    path = saved_timeline(tmp_path, device_ms=1.5, name="MSM_A", error=None)
    tl = Timeline.load(path)
    assert tl.summary().gpu_seconds.count == 1 and "G" in tl.waterfall()


def test_cli_waterfall_of_a_wrongly_typed_file_is_one_error_line(tmp_path, capsys):
    path = saved_timeline(tmp_path)
    path.write_text(path.read_text().replace('"thread_cpu_ns": 1,', '"thread_cpu_ns": "x",'))
    assert cuzk.cli.main(["waterfall", str(path)]) == 1
    err = capsys.readouterr().err
    assert "line 5" in err and "Traceback" not in err


def test_timeline_line_without_newline_is_refused_without_reading_it_whole(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"format": "cuzk-timeline", "version": 1}) + "\n" + "x" * (4 * MiB))
    with pytest.raises(TimelineFormatError, match="line 2: longer than"):
        Timeline.load(path)


# ------------------------------------------------------------------ 8a: header before body
def big_file(path, head: bytes, size: int = 64 * MiB):
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)  # sparse zeros after the head
    return path


@pytest.mark.parametrize("reader, head, error", [
    (snarkjs.read_zkey, b"JUNK", SnarkjsFormatError),
    (snarkjs.read_wtns, b"zkey", SnarkjsFormatError),
    (snarkjs.read_r1cs, b"wtns", R1csFormatError),
    (snarkjs.read_zkey, b"zkey" + struct.pack("<II", 7, 1), SnarkjsFormatError),  # bad version
    # right magic, a section claiming more bytes than the file holds
    (snarkjs.read_wtns, b"wtns" + struct.pack("<IIIQ", 2, 1, 1, 1 << 40), SnarkjsFormatError),
    (bellperson.read_params, b"\xff" * 96, ParamsFormatError),  # the first point is bad
])
def test_binary_readers_check_the_header_before_reading_the_rest(tmp_path, reader, head, error):
    path = big_file(tmp_path / "big.bin", head)
    peak, err = traced_peak(reader, path)
    assert isinstance(err, error), repr(err)
    assert peak < MiB, f"{peak / MiB:.1f} MiB allocated to reject a bad header"


def test_container_reader_skips_sections_it_does_not_need(tmp_path):
    # a .r1cs with a huge wire-label section (3): only the header and constraints are read
    r1cs = Synthesizer(Cube()).r1cs
    r1cs.write(tmp_path / "c.r1cs")
    data = bytearray((tmp_path / "c.r1cs").read_bytes())
    struct.pack_into("<I", data, 8, struct.unpack_from("<I", data, 8)[0] + 1)  # one more section
    with open(tmp_path / "c.r1cs", "wb") as f:
        f.write(data + struct.pack("<IQ", 4, 32 * MiB))
        f.truncate(len(data) + 12 + 32 * MiB)
    peak, err = traced_peak(snarkjs.read_r1cs, tmp_path / "c.r1cs")
    assert err is None and peak < 4 * MiB
    assert snarkjs.read_r1cs(tmp_path / "c.r1cs").digest == r1cs.digest


# ------------------------------------------------------------------ found by the fuzzer
def test_r1cs_wire_count_must_match_the_wire_label_section(tmp_path):
    # a 500-byte .r1cs claimed 2^30 wires and was accepted; Density.from_r1cs then allocated 1 GiB
    Synthesizer(Cube()).r1cs.write(tmp_path / "c.r1cs")
    data = bytearray((tmp_path / "c.r1cs").read_bytes())
    # header section (1) is first: magic, version, n_sec, (id, size), then n8=32, prime, nVars
    n_vars_at = 12 + 12 + 4 + 32
    struct.pack_into("<I", data, n_vars_at, (1 << 30) + 5)
    (tmp_path / "big.r1cs").write_bytes(data)
    with pytest.raises(R1csFormatError, match="wire-label section"):
        snarkjs.read_r1cs(tmp_path / "big.r1cs")


def test_a_small_json_file_is_read_without_reserving_its_bound(tmp_path):
    """read_json_file asks for the file's own size: read(bound) reserved the whole bound first
    (1.4 GB of address space for a C1 output of megabytes), so a small file failed under a limit."""
    path = tmp_path / "small.json"
    path.write_text("[1, 2, 3]")
    child = textwrap.dedent(f"""
        import resource
        from cuzk.bounded_json import read_json_file
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (used + (256 << 20), used + (256 << 20)))
        print(read_json_file({str(path)!r}, max_bytes=4 << 30))
        """)
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "[1, 2, 3]", done.stderr[-1000:]


def test_json_from_a_pipe_is_cut_at_its_bound(tmp_path):
    from cuzk.bounded_json import read_json_file

    for body, ok in ((b"[4, 5]", True), (b"[" + b"1," * 100 + b"1]", False)):
        r, w = os.pipe()
        os.write(w, body)
        os.close(w)
        try:
            if ok:
                assert read_json_file(f"/dev/fd/{r}", max_bytes=100) == [4, 5]
            else:
                with pytest.raises(CuzkError, match="grew past 100 bytes"):
                    read_json_file(f"/dev/fd/{r}", max_bytes=100)
        finally:
            os.close(r)
