"""The key cache's disk tier (cuzk/engine/keycache.py and its file format, cuzk/engine/keyfile.py).

A load from the cache must give the key the checked read gives (every array, density, digest),
proofs made with it must be byte-identical for fixed r, s, and a damaged cache file or a changed
source must lead to a rebuild from the source, never to the use of the damaged bytes.
"""

from __future__ import annotations

import doctest
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuzk.circuits import Cube
from cuzk.engine import keyarrays, keycache, keyfile, keysource
from cuzk.engine.keyarrays import key_from_arrays, key_to_arrays, same_key
from cuzk.engine.keycache import KeyCache, default_cache_dir
from cuzk.engine.keyfile import read_keyfile, write_keyfile
from cuzk.errors import InputError, KeyCacheError, KeyCacheFormatError, KeyMismatchError, ParamsFormatError
from cuzk.formats.snarkjs import read_zkey
from cuzk.formats.snarkjs_setup import setup_snarkjs
from cuzk.formats.snarkjs_write import write_zkey
from cuzk.groth16 import ProvingKey, ToxicWaste, setup_with_waste, verify
from cuzk.prover import GpuProver
from cuzk.synth import Synthesizer

from test_groth16_support import WASTE, SquareTag, CubeTag

R_S = (0x1234567, 0x7654321)


@pytest.fixture(scope="module")
def circuit(tmp_path_factory):
    """A Cube-shaped circuit with a public input no constraint reads (sparse B density), its
    bellperson .params and snarkjs .zkey files, and a valid witness."""
    d = tmp_path_factory.mktemp("keys")
    synth = Synthesizer(CubeTag())
    pk = setup_with_waste(synth.r1cs, ToxicWaste(**WASTE))
    pk.write(d / "c.params")
    write_zkey(setup_snarkjs(synth.r1cs, waste=ToxicWaste(**WASTE)), d / "c.zkey")
    return synth, d / "c.params", d / "c.zkey", synth.synthesize(x=3, out=35, tag=9)


def _prove(pk, w):
    return GpuProver(pk, device="cpu").prove(w, *R_S)


def test_module_doctests():
    for mod in (keyfile, keyarrays, keysource, keycache):
        assert doctest.testmod(mod).failed == 0, mod.__name__


# ---------------------------------------------------------------------------- round trips
def test_params_load_equals_checked_read_and_proves_identically(circuit, tmp_path):
    synth, params, _, w = circuit
    cache = KeyCache(tmp_path / "cache")
    events = []
    first, info1 = cache.load(params, r1cs=synth.r1cs, progress=lambda *e: events.append(e))
    second, info2 = KeyCache(tmp_path / "cache").load(params, r1cs=synth.r1cs)
    for _ in range(2):  # a hit sets the entry's atime (last use) and must keep its identity for the memo
        _, again = cache.load(params, r1cs=synth.r1cs)
        assert again.hit and again.data_check == "earlier"
    ref = ProvingKey.read(params, r1cs=synth.r1cs)
    assert (info1.hit, info1.data_check, info1.source_check) == (False, "read", "full hash")
    # another KeyCache (as another process) finds the stamp of the full check the fill made: a sample
    assert (info2.hit, info2.data_check, info2.source_check) == (True, "sampled", "record+samples")
    assert info1.path == info2.path and Path(info2.path).stat().st_size == info2.bytes
    for key in (first, second):
        assert same_key(ref, key)
        assert isinstance(key.h, np.memmap) and not key.h.flags.writeable  # mapped, not copied
    proof = _prove(second, w)
    assert proof.to_bytes() == _prove(ref, w).to_bytes()
    assert verify(ref.vk, w.public_inputs, proof)
    assert not verify(ref.vk, [w.public_inputs[0] + 1, w.public_inputs[1]], proof)
    # progress: the read stage reaches the whole source, monotonically
    reads = [d for s, d, t in events if s == "read"]
    assert reads == sorted(reads) and reads[-1] == params.stat().st_size
    assert {s for s, _, _ in events} == {"hash", "read", "write"}


def test_zkey_load_equals_checked_read_and_proves_identically(circuit, tmp_path):
    synth, _, zkey, w = circuit
    cache = KeyCache(tmp_path / "cache")
    for r1cs in (None, synth.r1cs):
        ref = read_zkey(zkey, r1cs=r1cs)
        key, info = cache.load(zkey, r1cs=r1cs)
        assert info.kind == "zkey" and same_key(ref, key)
    assert info.hit and info.data_check == "earlier"
    assert list((tmp_path / "cache" / "matched").iterdir())  # the pair is recorded: a new cache skips the compare
    again, _ = KeyCache(tmp_path / "cache").load(zkey, r1cs=synth.r1cs)
    assert same_key(ref, again) and again.digest == synth.r1cs.digest
    z = np.asarray(w.z)
    proof = _prove(key, key.witness(z))
    assert proof.to_bytes() == _prove(ref, ref.witness(z)).to_bytes()
    assert verify(ref.vk, w.public_inputs, proof)


def test_r1cs_of_another_circuit_is_refused_as_by_the_checked_read(circuit, tmp_path):
    synth, params, zkey, _ = circuit
    other = Synthesizer(SquareTag()).r1cs  # same shape, other matrices
    cache = KeyCache(tmp_path)
    with pytest.raises(KeyMismatchError):
        read_zkey(zkey, r1cs=other)
    with pytest.raises(KeyMismatchError):
        cache.load(zkey, r1cs=other)
    with pytest.raises(KeyMismatchError):
        cache.load(params, r1cs=Synthesizer(Cube()).r1cs)  # other variable count


# ---------------------------------------------------------------------------- damage and change
def _writable(path) -> None:
    """Cache files are written 0444: a test that damages one in place first makes it writable
    (as a non-root owner must; root writes regardless)."""
    os.chmod(path, 0o644)


def _corrupt(path: Path, at: int) -> None:
    _writable(path)
    data = bytearray(path.read_bytes())
    data[at] ^= 0x10
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["truncate", "data", "table", "preamble"])
def test_damaged_cache_file_is_rebuilt_never_used(circuit, tmp_path, damage):
    synth, params, _, _ = circuit
    _, info = KeyCache(tmp_path).load(params)
    entry = Path(info.path)
    size = entry.stat().st_size
    if damage == "truncate":
        _writable(entry)
        os.truncate(entry, size - 100)
    else:
        _corrupt(entry, {"data": 64 + 200, "table": size - 10, "preamble": 40}[damage])
    with pytest.raises(KeyCacheFormatError):
        read_keyfile(entry)
    key, info2 = KeyCache(tmp_path).load(params)
    assert not info2.hit and info2.note.startswith("rebuilt") and info2.path == str(entry)
    assert same_key(key, ProvingKey.read(params))
    read_keyfile(entry)  # the rebuilt file is whole again


def test_verify_always_catches_damage_the_same_instance_mapped_before(circuit, tmp_path):
    _, params, _, _ = circuit
    cache = KeyCache(tmp_path, verify="always")
    _, info = cache.load(params)
    data = bytearray(Path(info.path).read_bytes())
    data[64 + 96] ^= 1
    st = os.stat(info.path)
    _writable(info.path)
    Path(info.path).write_bytes(bytes(data))
    os.utime(info.path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same identity as the verified file
    key, info2 = cache.load(params)
    assert not info2.hit and same_key(key, ProvingKey.read(params))
    with pytest.raises(InputError):
        KeyCache(tmp_path, verify="never")


def test_changed_source_gives_the_new_key(circuit, tmp_path):
    synth, params, _, _ = circuit
    src = tmp_path / "k.params"
    src.write_bytes(params.read_bytes())
    cache = KeyCache(tmp_path / "c")
    old, _ = cache.load(src)
    os.utime(src, ns=(1, 1))  # touched, same bytes: full hash, same entry
    again, info = cache.load(src)
    assert info.hit and info.source_check == "full hash" and same_key(old, again)
    other = setup_with_waste(synth.r1cs, ToxicWaste(**{**WASTE, "delta": 7}))
    other.write(src)  # rename onto the path: new inode
    new, info = cache.load(src)
    assert not info.hit and same_key(new, ProvingKey.read(src)) and not same_key(new, old)
    # an in-place edit with the stat restored is still caught by the sampled digest (small file: all of it)
    st = os.stat(src)
    data = bytearray(src.read_bytes())
    data[-1] ^= 1  # the last b_g2 coordinate: the checked read must now reject it
    with open(src, "r+b") as f:
        f.write(bytes(data))
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(src).st_ino == st.st_ino
    with pytest.raises(ParamsFormatError):
        cache.load(src)


def test_source_changing_during_the_read_is_an_error(circuit, tmp_path, monkeypatch):
    _, params, _, _ = circuit
    src = tmp_path / "k.params"
    src.write_bytes(params.read_bytes())
    real = keycache.full_digest
    monkeypatch.setattr(keycache, "full_digest", lambda f, progress=None: "0" * 64)  # "hashed another file"
    with pytest.raises(KeyCacheError, match="changed while it was being read"):
        KeyCache(tmp_path / "c").load(src)
    assert real(src) != "0" * 64 and not list((tmp_path / "c").glob("*.tmp"))


def test_unwritable_cache_still_returns_the_checked_key(circuit, tmp_path, monkeypatch):
    _, params, _, _ = circuit

    def full(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(keycache, "write_keyfile", full)
    key, info = KeyCache(tmp_path).load(params)
    assert info.path is None and info.note.startswith("not cached") and same_key(key, ProvingKey.read(params))


# ---------------------------------------------------------------------------- listing, clearing, defaults
def test_entries_clear_path_for_and_default_dir(circuit, tmp_path, monkeypatch):
    _, params, zkey, _ = circuit
    cache = KeyCache(tmp_path)
    assert cache.entries() == [] and cache.clear() == (0, 0)
    _, ip = cache.load(params)
    _, iz = cache.load(zkey)
    assert cache.path_for(params) == Path(ip.path) and cache.path_for(zkey, kind="zkey") == Path(iz.path)
    entries = cache.entries()
    assert {(e.kind, e.source, e.bytes) for e in entries} == {
        ("params", str(params), ip.bytes), ("zkey", str(zkey), iz.bytes)}
    _writable(ip.path)
    os.truncate(ip.path, 10)
    bad = [e for e in cache.entries() if e.error]
    assert len(bad) == 1 and bad[0].path == ip.path
    files, nbytes = cache.clear()
    assert files >= 4 and nbytes > iz.bytes and cache.entries() == []
    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path / "root"))
    assert default_cache_dir() == tmp_path / "root" / "keys"
    monkeypatch.delenv("CUZK_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "cuzk" / "keys"
    with pytest.raises(InputError):
        cache.load(params, kind="pem")


# ---------------------------------------------------------------------------- the file format
_arrays = st.dictionaries(
    st.text("abcdefgh.", min_size=1, max_size=6),
    st.tuples(st.sampled_from([np.uint64, np.int64, np.int32, np.uint8]), st.integers(0, 40), st.integers(0, 2**31)),
    max_size=4)


@settings(max_examples=25)
@given(spec=_arrays, flip=st.integers(0, 1 << 20))
def test_keyfile_round_trip_and_any_flipped_byte_is_caught(tmp_path_factory, spec, flip):
    d = tmp_path_factory.mktemp("kf")
    arrays = {name: np.random.default_rng(seed).integers(0, 100, size=(n, 2), dtype=dt)
              for name, (dt, n, seed) in spec.items()}
    path = d / "x.cuzkkey"
    size = write_keyfile(path, arrays, {"m": [1, "two"]})
    kf = read_keyfile(path)
    assert kf.nbytes == size == path.stat().st_size and kf.meta == {"m": [1, "two"]}
    assert list(kf.arrays) == list(arrays)
    for name, a in arrays.items():
        assert kf.arrays[name].dtype == a.dtype and np.array_equal(kf.arrays[name], a)
        if a.size:
            assert kf.arrays[name].ctypes.data % 64 == 0
    _corrupt(path, flip % size)
    with pytest.raises(KeyCacheFormatError):
        read_keyfile(path)


def test_keyfile_write_failure_leaves_no_temp_file(tmp_path):
    with pytest.raises(KeyCacheFormatError):
        write_keyfile(tmp_path / "x.cuzkkey", {"a": np.zeros(3, np.uint64)}, {"bad": {1, 2}})
    with pytest.raises(KeyCacheFormatError):
        write_keyfile(tmp_path / "x.cuzkkey", {"a": np.zeros(3, np.float64)}, {})
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "y").write_bytes(b"CUZKKEY\0" + bytes(100))
    with pytest.raises(KeyCacheFormatError, match="version"):
        read_keyfile(tmp_path / "y")


def test_key_arrays_refuse_what_they_cannot_store(circuit):
    _, params, _, _ = circuit
    pk = ProvingKey.read(params)
    arrays, meta = key_to_arrays(pk)
    del arrays["l"]
    with pytest.raises(KeyCacheFormatError, match="'l'"):
        key_from_arrays(arrays, meta)
    arrays, meta = key_to_arrays(pk)
    with pytest.raises(KeyCacheFormatError):  # the key's own checks: b_g1 and b_g2 must agree
        key_from_arrays({**arrays, "b_g1": arrays["b_g1"][:-1]}, meta)
    with pytest.raises(KeyCacheFormatError, match="cannot store"):
        key_to_arrays(attrs.evolve(pk, digest=object()))


# ---------------------------------------------------------------------------- two processes
_FILL = textwrap.dedent("""
    import contextlib, json, os, sys, time
    from cuzk.engine import keycache
    if sys.argv[3] == "nolock":
        keycache.KeyCache._fill_lock = lambda self, entry: contextlib.nullcontext()
    go = sys.argv[4]
    while not os.path.exists(go):
        time.sleep(0.01)
    key, info = keycache.KeyCache(sys.argv[1]).load(sys.argv[2])
    print(json.dumps({"hit": info.hit, "path": info.path, "h0": int(key.h[0, 0, 0])}))
""")


@pytest.mark.parametrize("mode", ["lock", "nolock"])
def test_two_processes_filling_one_entry(circuit, tmp_path, mode):
    _, params, _, _ = circuit
    cache_dir, go = tmp_path / "cache", tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen([sys.executable, "-c", _FILL, str(cache_dir), str(params), mode, str(go)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    try:
        go.touch()
        outs = [p.communicate(timeout=120) for p in procs]
    finally:
        for p in procs:
            p.kill()
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    res = [json.loads(o.strip().splitlines()[-1]) for o, _ in outs]
    assert res[0]["path"] == res[1]["path"] and res[0]["h0"] == res[1]["h0"]
    fills = [r["hit"] for r in res].count(False)
    assert fills == 1 if mode == "lock" else fills in (1, 2)
    assert sorted(p.suffix for p in cache_dir.iterdir() if p.is_file() and p.name != "cap.lock") == (
        [".cuzkkey", ".lock"] if mode == "lock" else [".cuzkkey"])
    assert same_key(KeyCache(cache_dir).load(params)[0], ProvingKey.read(params))


# ---------------------------------------------------------------------------- cuzk keys
def test_cli_keys_load_list_clear(circuit, tmp_path, capsys):
    from cuzk import cli_keys

    _, params, _, _ = circuit
    assert doctest.testmod(cli_keys, optionflags=doctest.ELLIPSIS).failed == 0
    d = str(tmp_path / "cache")
    assert cli_keys.main(["--dir", d, "load", str(params)]) == 0
    assert cli_keys.main(["--dir", d, "load", str(params)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("filled") and out[1].startswith("hit")
    assert cli_keys.main(["--dir", d, "list"]) == 0
    out = capsys.readouterr().out
    assert str(params) in out and "1 entries" in out
    assert cli_keys.main(["--dir", d, "prune", "1G"]) == 0
    assert "removed 0 entries" in capsys.readouterr().out
    assert cli_keys._bytes("1.5K") == 1536 and cli_keys._bytes("2GiB") == 2 << 30 and cli_keys._bytes("7") == 7
    with pytest.raises(SystemExit):
        cli_keys.main(["--dir", d, "prune", "lots"])
    capsys.readouterr()
    assert cli_keys.main(["--dir", d, "clear"]) == 0
    assert "removed" in capsys.readouterr().out and KeyCache(d).entries() == []
    assert cli_keys.main(["--dir", d, "load", str(tmp_path / "missing.params")]) == 1
    assert "cuzk keys load: error:" in capsys.readouterr().err


def test_a_source_that_is_not_a_regular_file_is_refused_unread(tmp_path):
    from memory_limit_support import run_limited

    # /dev/zero's size reads as 0, so its "small file" digest read it whole: until memory ran out
    os.mkfifo(tmp_path / "fifo")  # opening it waited for a writer
    d = ["--dir", tmp_path / "cache"]
    cases = [(["keys", *d, "load", "/dev/zero"], "/dev/zero: not a regular file (a character device)"),
             (["keys", *d, "load", "/dev/zero", "--kind", "zkey"], "/dev/zero: not a regular file"),
             (["keys", *d, "load", tmp_path / "fifo"], f"{tmp_path / 'fifo'}: not a regular file (a pipe)"),
             (["keys", *d, "load", tmp_path / "fifo", "--kind", "zkey"], f"{tmp_path / 'fifo'}: not a regular file"),
             (["keys", *d, "load", tmp_path], f"{tmp_path}: not a regular file (a directory)"),
             (["groth16", "prove", "/dev/zero", "w.wtns", tmp_path / "p.json", tmp_path / "q.json", "--key-cache",
               tmp_path / "cache"], "/dev/zero: not a regular file (a character device); a key must be one")]
    for (argv, message), (status, err) in zip(cases, run_limited([argv for argv, _ in cases], timeout=60)):
        assert status == 1 and message in err and err.count("\n") == 1, (argv, err)


def test_prune_removes_damaged_then_least_recently_used(circuit, tmp_path):
    _, params, zkey, _ = circuit
    cache = KeyCache(tmp_path)
    _, ip = cache.load(params)
    _, iz = cache.load(zkey)
    os.utime(ip.path, ns=(10**18, os.stat(ip.path).st_mtime_ns))  # params used later than zkey
    assert cache.prune(ip.bytes + iz.bytes) == []
    gone = cache.prune(ip.bytes)
    assert [e.path for e in gone] == [iz.path] and [e.path for e in cache.entries()] == [ip.path]
    _writable(ip.path)
    os.truncate(ip.path, 10)
    assert [e.path for e in cache.prune(10**12)] == [ip.path] and cache.entries() == []
    with pytest.raises(InputError):
        cache.prune(-1)


def test_threads_loading_one_source_fill_it_once(circuit, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    _, params, _, _ = circuit
    cache = KeyCache(tmp_path)
    with ThreadPoolExecutor(3) as pool:
        results = [f.result(timeout=120) for f in [pool.submit(cache.load, params) for _ in range(3)]]
    assert [info.hit for _, info in results].count(False) == 1  # flock excludes other fds of this process too
    assert all(same_key(results[0][0], key) for key, _ in results)


def test_a_file_another_process_checked_gets_a_random_sample_of_chunks_checked(circuit, tmp_path, monkeypatch):
    import random

    _, params, _, _ = circuit
    monkeypatch.setattr(keyfile, "CHUNK", 512)  # a small key in many chunks
    path = tmp_path / "k.cuzkkey"
    arrays = {"x": np.arange(1024, dtype=np.uint64)}  # 8 KiB: 16 chunks
    write_keyfile(path, arrays, {})
    ident = keyfile.file_identity(path)
    assert read_keyfile(path).verified and read_keyfile(path, stamped={ident}).sampled == 2
    data = bytearray(path.read_bytes())
    data[64 + 7 * 512 + 3] ^= 1  # damage chunk 7, keeping size and mtime (the stamp still matches)
    st = os.stat(path)
    _writable(path)
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert keyfile.file_identity(path) == ident
    picks = iter([[3, 12], [7, 1]])
    monkeypatch.setattr(random, "sample", lambda population, k: next(picks))
    assert read_keyfile(path, stamped={ident}).sampled == 2  # chunks 3 and 12 are fine
    with pytest.raises(KeyCacheFormatError, match="data checksum mismatch"):
        read_keyfile(path, stamped={ident})  # this sample holds chunk 7
    with pytest.raises(KeyCacheFormatError):
        read_keyfile(path)  # unstamped: every chunk


def test_the_stamp_of_a_full_check_is_what_spares_later_loads_the_whole_file(circuit, tmp_path):
    _, params, _, _ = circuit
    _, filled = KeyCache(tmp_path).load(params)
    stamp = tmp_path / "verified" / (Path(filled.path).name + ".json")
    assert stamp.exists()
    assert KeyCache(tmp_path).load(params)[1].data_check == "sampled"
    stamp.unlink()
    assert KeyCache(tmp_path).load(params)[1].data_check == "full" and stamp.exists()  # stamped again
    os.utime(filled.path, ns=(10**18, 10**18))  # another mtime: the stamp no longer names this file
    assert KeyCache(tmp_path).load(params)[1].data_check == "full"
    assert KeyCache(tmp_path, verify="always").load(params)[1].data_check == "full"
    assert KeyCache(tmp_path).prune(0) and not stamp.exists()  # removed with its entry
