"""The key cache under what a long-running daemon meets (cuzk/engine/keycache.py, keysource.py,
keyfile.py, cuzk/cli_keys.py): damaged small records, a ``cuzk keys clear`` racing first loads,
cache files changed or truncated by hand, sources that are not keys, a ``--dir`` that is a file.

Each case must end in the key, a rebuild or a ``cuzk.errors`` exception, never in another
exception or a dead process.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from cuzk.engine import keycache
from cuzk.engine.keyarrays import same_key
from cuzk.engine.keycache import KeyCache
from cuzk.engine.keysource import SourceRecord
from cuzk.errors import CuzkError, KeyCacheFormatError, ParamsFormatError, SnarkjsFormatError
from cuzk.formats.snarkjs import read_zkey, write_wtns
from cuzk.formats.snarkjs_setup import setup_snarkjs
from cuzk.formats.snarkjs_write import write_zkey
from cuzk.groth16 import ProvingKey, ToxicWaste, setup_with_waste
from cuzk.synth import Synthesizer

from test_groth16_support import WASTE, CubeTag

DEEP = "[" * 50_000  # inside the 64 KiB a record reader reads; json.loads alone raises RecursionError


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """A small circuit's .params, .zkey and .wtns."""
    d = tmp_path_factory.mktemp("keys")
    synth = Synthesizer(CubeTag())
    setup_with_waste(synth.r1cs, ToxicWaste(**WASTE)).write(d / "c.params")
    write_zkey(setup_snarkjs(synth.r1cs, waste=ToxicWaste(**WASTE)), d / "c.zkey")
    write_wtns(d / "c.wtns", synth.synthesize(x=3, out=35, tag=9).z)
    return d / "c.params", d / "c.zkey", d / "c.wtns"


def _damage_records(cache_dir: Path) -> int:
    """Replace every source record and stamp by deeply nested JSON; how many there were."""
    files = [*(cache_dir / "sources").glob("*.json"), *(cache_dir / "verified").glob("*.json")]
    for p in files:
        p.write_text(DEEP)
    return len(files)


# ---------------------------------------------------------------------------- damaged records
def test_a_deeply_nested_source_record_means_hash_the_source_again(keys, tmp_path):
    params, _, _ = keys
    KeyCache(tmp_path).load(params)
    assert _damage_records(tmp_path) == 2  # one source record, one stamp
    key, info = KeyCache(tmp_path).load(params)
    assert info.hit and info.source_check == "full hash" and info.data_check == "full"
    assert same_key(key, ProvingKey.read(params))
    rec = SourceRecord.load(tmp_path / "sources", str(params))  # rewritten whole
    assert rec is not None and rec.digest == info.digest


@pytest.mark.parametrize("text", [DEEP, "[]", "{}", '{"source": 1}', "nul", "\xff", '{"a": ' * 30 + "1" + "}" * 30])
def test_every_damaged_record_reads_as_none(tmp_path, text):
    src = str(tmp_path / "k.params")
    Path(SourceRecord.path_in(tmp_path, src)).write_text(text, errors="surrogateescape")
    assert SourceRecord.load(tmp_path, src) is None
    with pytest.raises(KeyCacheFormatError):
        SourceRecord.parse(text.encode(errors="surrogateescape"), "record")


def test_a_record_with_fields_of_the_wrong_type_reads_as_none(tmp_path):
    src = str(tmp_path / "k.params")
    good = {"source": src, "size": 1, "mtime_ns": 2, "inode": 3, "device": 4, "digest": "a" * 64,
            "sampled": "b" * 64, "kind": "params"}
    SourceRecord(**good).save(tmp_path)
    assert SourceRecord.load(tmp_path, src) == SourceRecord(**good)
    for field, value in (("size", "1"), ("digest", ["a"]), ("digest", "../" * 20), ("kind", "pem"), ("inode", True),
                         ("mtime_ns", 1.5), ("sampled", None)):
        with pytest.raises(KeyCacheFormatError, match=field):
            SourceRecord.parse(__import__("json").dumps({**good, field: value}).encode(), "record")


def test_cli_keys_load_and_groth16_prove_survive_nested_records(keys, tmp_path, capsys):
    from cuzk import cli_groth16, cli_keys

    params, zkey, wtns = keys
    d = str(tmp_path / "cache")
    assert cli_keys.main(["--dir", d, "load", str(params)]) == 0
    _damage_records(Path(d))
    assert cli_keys.main(["--dir", d, "load", str(params)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("hit")
    args = [str(zkey), str(wtns), str(tmp_path / "proof.json"), str(tmp_path / "public.json"), "--device", "cpu",
            "--key-cache", d]
    assert cli_groth16.main(["prove", *args]) == 0
    _damage_records(Path(d))
    assert cli_groth16.main(["prove", *args]) == 0, capsys.readouterr().err


# ---------------------------------------------------------------------------- clear racing loads
def test_a_load_whose_fresh_entry_vanished_returns_the_key_it_checked(keys, tmp_path, monkeypatch):
    params, _, _ = keys
    real = keycache.write_keyfile

    def write_then_removed(path, *a, **k):  # an operator's rm (or a clear) right after the rename
        n = real(path, *a, **k)
        os.unlink(path)
        return n

    monkeypatch.setattr(keycache, "write_keyfile", write_then_removed)
    key, info = KeyCache(tmp_path).load(params)
    assert not info.hit and info.path is None and "removed" in info.note
    assert same_key(key, ProvingKey.read(params))


def test_clear_leaves_held_locks_and_writes_in_progress_alone(keys, tmp_path):
    from cuzk.engine.keycache_cap import cap_lock, file_lock

    params, _, _ = keys
    cache = KeyCache(tmp_path)
    _, info = cache.load(params)
    held = Path(info.path + ".lock")
    old_tmp = tmp_path / "sources" / ".x.json.abc.tmp"
    young_tmp = tmp_path / "sources" / ".y.json.abc.tmp"
    for p in (old_tmp, young_tmp):
        p.write_text("{}")
    os.utime(old_tmp, (time.time() - 3600,) * 2)  # left by a process that died an hour ago
    with file_lock(held):  # a fill in progress holds its entry's lock
        cache.clear()
        assert held.exists()
    assert young_tmp.exists() and not old_tmp.exists() and not Path(info.path).exists()
    cache.clear()
    assert not held.exists()  # no longer held: removed
    # a writer between writing its temporary file and renaming it holds the cap's lock: clear waits
    done = threading.Event()
    with cap_lock(tmp_path):
        tmp = tmp_path / ".entry.cuzkkey.abc.tmp"
        tmp.write_bytes(b"x")
        clearer = threading.Thread(target=lambda: (cache.clear(), done.set()))
        clearer.start()
        done.wait(0.5)
        assert tmp.exists() and not done.is_set()
        tmp.rename(tmp_path / "entry.cuzkkey")
    clearer.join(30)
    assert done.is_set() and not (tmp_path / "entry.cuzkkey").exists()


def test_a_lock_removed_while_waited_on_is_taken_again_at_its_path(tmp_path):
    from cuzk.engine.keycache_cap import file_lock, remove_unheld_lock

    path = tmp_path / "e.lock"
    order = []
    first = file_lock(path)
    first.__enter__()
    waiter = threading.Thread(target=lambda: _hold(path, order, "waiter"))
    waiter.start()
    time.sleep(0.2)  # the waiter has opened the file and waits on it (if not yet, it opens the new one)
    assert not remove_unheld_lock(path)  # held: stays
    # removed while the waiter waits, by its holder as remove_unheld_lock does; unlinking after the
    # release raced the waiter's wake-up (it could lock the old file before the unlink)
    os.unlink(path)
    first.__exit__(None, None, None)
    with file_lock(path):  # the file now at the path: the waiter must not hold its old inode meanwhile
        order.append("second")
        time.sleep(0.2)
        order.append("second done")
    waiter.join(30)
    assert order.index("second done") < order.index("waiter") or order.index("waiter done") < order.index("second")
    assert remove_unheld_lock(path) and not path.exists()


def _hold(path, order, name):
    from cuzk.engine.keycache_cap import file_lock

    with file_lock(path):
        order.append(name)
        time.sleep(0.1)
        order.append(name + " done")


def test_loads_racing_clears_always_return_the_checked_key(keys, tmp_path):
    params, _, _ = keys
    ref = ProvingKey.read(params)
    stop, errors, loads = threading.Event(), [], [0]

    def loader():
        cache = KeyCache(tmp_path)
        try:
            for _ in range(40):
                key, _ = cache.load(params)
                assert np.array_equal(key.h, ref.h) and np.array_equal(key.b_g2, ref.b_g2)
                loads[0] += 1
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    def clearer():
        cache = KeyCache(tmp_path)
        while not stop.is_set():
            cache.clear()

    threads = [threading.Thread(target=loader) for _ in range(2)]
    c = threading.Thread(target=clearer)
    c.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    stop.set()
    c.join(30)
    assert not errors, errors[:3]
    assert loads[0] == 80 and not any(t.is_alive() for t in (*threads, c))


# ---------------------------------------------------------------------------- sources that are not keys
def _no_hashing(monkeypatch):
    def hashed(*a, **k):
        raise AssertionError("the whole source was hashed before its header was checked")

    monkeypatch.setattr(keycache, "full_digest", hashed)


@pytest.mark.parametrize("head, kind, error", [(b"", None, ParamsFormatError), (b"\xff" * 4096, None, ParamsFormatError),
                                               (b"zkey" + bytes(8), None, SnarkjsFormatError),
                                               (b"zkey\x01\x00\x00\x00\x0a\x00\x00\x00", None, SnarkjsFormatError),
                                               (b"", "zkey", SnarkjsFormatError)])
def test_a_large_non_key_is_refused_by_its_header_before_hashing(tmp_path, monkeypatch, head, kind, error):
    big = tmp_path / "big.bin"
    with open(big, "wb") as f:
        f.write(head)
        f.truncate(1 << 30)  # sparse: 1 GiB that takes no disk
    _no_hashing(monkeypatch)
    with pytest.raises(error):
        KeyCache(tmp_path / "cache").load(big, kind=kind)
    assert not list((tmp_path / "cache").glob("*.cuzkkey"))


def test_real_keys_pass_the_header_check_and_a_truncated_one_fails_it(keys, tmp_path, monkeypatch):
    params, zkey, _ = keys
    for src in (params, zkey):
        KeyCache(tmp_path / "ok").load(src)  # a real key is not refused
        cut = tmp_path / ("cut" + src.suffix)
        cut.write_bytes(src.read_bytes()[:-1])
        with monkeypatch.context() as m:
            _no_hashing(m)
            with pytest.raises((ParamsFormatError, SnarkjsFormatError)):
                KeyCache(tmp_path / "c").load(cut)
        assert read_zkey(zkey) is not None


def test_cli_refuses_a_large_non_key_and_a_dir_that_is_a_file(tmp_path, monkeypatch, capsys):
    from cuzk import cli_keys

    big = tmp_path / "big.bin"
    with open(big, "wb") as f:
        f.truncate(1 << 30)
    _no_hashing(monkeypatch)
    assert cli_keys.main(["--dir", str(tmp_path / "c"), "load", str(big)]) == 1
    assert "cuzk keys load: error:" in capsys.readouterr().err
    for cmd in (["list"], ["clear"], ["prune", "1G"], ["load", str(big)]):
        for d in (big, big / "keys"):
            assert cli_keys.main(["--dir", str(d), *cmd]) == 1
            err = capsys.readouterr().err
            assert "not a directory" in err and str(big) in err
    assert big.stat().st_size == 1 << 30  # untouched


# ---------------------------------------------------------------------------- cache files changed by hand
def test_cache_files_are_read_only_and_cuzk_never_writes_one_in_place(keys, tmp_path, monkeypatch):
    import builtins

    params, zkey, _ = keys
    writes = []
    real_open, real_os_open = builtins.open, os.open

    def is_entry(p) -> bool:
        return isinstance(p, (str, os.PathLike)) and os.fspath(p).endswith(".cuzkkey") and os.path.exists(p)

    def spy_open(file, mode="r", *a, **k):
        if is_entry(file) and any(c in mode for c in "wa+x"):
            writes.append((file, mode))
        return real_open(file, mode, *a, **k)

    def spy_os_open(path, flags, *a, **k):
        if is_entry(path) and flags & (os.O_WRONLY | os.O_RDWR | os.O_TRUNC):
            writes.append((path, flags))
        return real_os_open(path, flags, *a, **k)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(os, "open", spy_os_open)
    monkeypatch.setattr(os, "truncate", lambda *a: writes.append(("truncate", a)))
    monkeypatch.setattr(os, "ftruncate", lambda *a: writes.append(("ftruncate", a)))
    cache = KeyCache(tmp_path)
    _, ip = cache.load(params)   # fill
    _, iz = cache.load(zkey)
    KeyCache(tmp_path).load(params)  # hit
    damaged = tmp_path / "damaged"
    damaged.write_bytes(Path(ip.path).read_bytes()[:-7])
    os.replace(damaged, ip.path)  # an operator's copy (replaced, not edited in place)
    key, again = KeyCache(tmp_path).load(params)  # rebuild
    assert not again.hit and "truncated" in again.note
    cache.prune(0)
    cache.load(zkey)
    cache.clear()
    assert writes == []
    for p in (ip.path, iz.path):
        cache.load(params), cache.load(zkey)
        assert stat.S_IMODE(os.stat(p).st_mode) == 0o444


def test_a_mapped_key_outlives_the_replacement_of_its_file(keys, tmp_path):
    from cuzk.prover import GpuProver

    _, zkey, wtns = keys
    key, info = KeyCache(tmp_path).load(zkey)
    ref = read_zkey(zkey)
    cut = tmp_path / "cut"
    cut.write_bytes(Path(info.path).read_bytes()[: info.bytes // 2])
    os.replace(cut, info.path)  # `cp --remove-destination`, rsync without --inplace: a new inode
    proof = GpuProver(key, device="cpu").prove(key.witness(wtns))  # the old inode is still mapped, whole
    assert same_key(key, ref) and proof is not None
    again, info2 = KeyCache(tmp_path).load(zkey)
    assert not info2.hit and "truncated" in info2.note and same_key(again, ref)


_EDITS = """
import json, os, random, sys
import numpy as np
from cuzk.engine.keycache import KeyCache
from cuzk.engine.keyfile import read_table
from cuzk.errors import CuzkError
from cuzk.prover import GpuProver

cache_dir, zkey, wtns = sys.argv[1:4]
key, info = KeyCache(cache_dir).load(zkey)
arrays = {e["name"]: e for e in read_table(info.path)[0]["arrays"]}
prover = GpuProver(key, device="cpu")
rng = random.Random(5)
os.chmod(info.path, 0o644)  # a stray writer (or root): the 0444 mode does not stop it
fd = os.open(info.path, os.O_RDWR)
edits = [("matrix_a.indices", 0, (2**31 - 1).to_bytes(4, "little")),
         ("matrix_b.indices", 4, (2**31).to_bytes(4, "little")),  # -2^31 as int32
         ("matrix_a.indptr", -8, (2**62).to_bytes(8, "little")),
         ("matrix_b.indptr", 8, (2**64 - 5).to_bytes(8, "little"))]
for _ in range(60):
    name = rng.choice(["matrix_a.indices", "matrix_b.indices", "matrix_a.indptr", "matrix_b.indptr"])
    edits.append((name, rng.randrange(arrays[name]["nbytes"]), bytes([rng.randrange(256)])))
outcomes = {}
for name, at, data in edits:
    e = arrays[name]
    os.pwrite(fd, data, e["offset"] + at % e["nbytes"])  # in place: the live mapping sees it
    try:
        prover.prove(key.witness(wtns))
        outcome = "proof"
    except CuzkError as exc:
        outcome = type(exc).__name__
    outcomes[outcome] = outcomes.get(outcome, 0) + 1
print(json.dumps(outcomes))
"""


def test_in_place_edits_of_a_mapped_zkey_entrys_indices_give_errors_not_crashes(keys, tmp_path):
    import json
    import subprocess
    import sys

    _, zkey, wtns = keys
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    p = subprocess.run([sys.executable, "-c", _EDITS, str(tmp_path), str(zkey), str(wtns)], capture_output=True,
                       text=True, env=env, timeout=300)
    assert p.returncode == 0, (p.returncode, p.stderr[-3000:])  # -11: SIGSEGV in csr_matvec
    outcomes = json.loads(p.stdout.strip().splitlines()[-1])
    assert sum(outcomes.values()) == 64 and outcomes.get("ProofVerificationError", 0) >= 4, outcomes


def _matvec_reference(Fr, indptr, indices, data, z):  # noqa: N803 (the field's name)
    """M·z in Python ints, each row over k in [indptr[r], indptr[r+1]] clamped to the arrays,
    terms with a column outside z dropped: what the kernels promise for wild indices."""
    nnz, zs, ds, out = min(len(indices), len(data)), Fr.to_ints(z), Fr.to_ints(data), []
    for r in range(len(indptr) - 1):
        k0 = min(max(int(indptr[r]), 0), nnz)
        k1 = min(max(int(indptr[r + 1]), k0), nnz)
        out.append(sum(ds[k] * zs[int(indices[k])] for k in range(k0, k1) if 0 <= indices[k] < len(zs)) % Fr.modulus)
    return out


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as hst  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(indptr=hst.lists(hst.one_of(hst.integers(-2**63, 2**63 - 1), hst.integers(-3, 8)), min_size=1, max_size=6),
       indices=hst.lists(hst.one_of(hst.integers(-2**31, 2**31 - 1), hst.integers(-2, 6)), max_size=8),
       n_data=hst.integers(0, 8), n_z=hst.integers(0, 6))
def test_csr_kernels_never_index_outside_their_arrays(indptr, indices, n_data, n_z):
    from cuzk import curves
    from cuzk.synth.kernels import for_curve

    for curve in ("bls12_381", "bn254"):
        Fr, k = curves.get(curve).Fr, for_curve(curve)  # noqa: N806
        ip, ix = np.array(indptr, np.int64), np.array(indices, np.int32)
        data, z = Fr.from_ints(list(range(2, 2 + n_data))), Fr.from_ints(list(range(5, 5 + n_z)))
        want = _matvec_reference(Fr, ip, ix, data, z)
        assert Fr.to_ints(k.csr_matvec(ip, ix, data, z)) == want
        assert Fr.to_ints(k.csr_matvec_parallel(ip, ix, data, z)) == want
        out = np.zeros((n_z, Fr.limbs), np.uint64)
        k.columns_at(ip, ix, data, Fr.from_ints([1] * (len(ip) - 1)), out)  # writes stay inside out


def test_a_load_whose_fresh_entry_was_edited_before_mapping_returns_the_key_it_checked(keys, tmp_path, monkeypatch):
    params, _, _ = keys
    real = keycache.write_keyfile

    def write_then_edited(path, *a, **k):  # a stray in-place write right after the rename
        n = real(path, *a, **k)
        os.chmod(path, 0o644)
        with open(path, "r+b") as f:
            f.seek(100)
            f.write(b"\xff")
        return n

    monkeypatch.setattr(keycache, "write_keyfile", write_then_edited)
    key, info = KeyCache(tmp_path).load(params)
    assert not info.hit and info.path is None and "fails its checks" in info.note
    assert same_key(key, ProvingKey.read(params))
