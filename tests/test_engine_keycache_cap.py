"""The key cache's size cap (cuzk/engine/keycache_cap.py): least recently used entries make room
for a new one, never an entry a live Engine of this process uses, never a partial file; writers
in parallel never take the cache past the cap together."""

from __future__ import annotations

import gc
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from cuzk.circuits import Cube
from cuzk.engine.keyarrays import same_key
from cuzk.engine.keycache import KeyCache
from cuzk.engine.keycache_cap import ENV, default_cap, parse_size, resolve_cap
from cuzk.engine.keyfile import read_keyfile
from cuzk.errors import InputError
from cuzk.groth16 import ProvingKey, setup, verify
from cuzk.synth import Synthesizer


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """Five Cube keys (different setups) as .params files, and the synthesizer."""
    synth = Synthesizer(Cube())
    d = tmp_path_factory.mktemp("keys")
    paths = []
    for seed in range(5):
        pk, _ = setup(synth.r1cs, rng=np.random.default_rng(seed))
        pk.write(d / f"k{seed}.params")
        paths.append(d / f"k{seed}.params")
    return synth, paths


def _touch(path, t: int) -> None:
    os.utime(path, ns=(t, os.stat(path).st_mtime_ns))  # last use, as a load sets it


def test_a_fill_over_the_cap_removes_least_recently_used_entries(sources, tmp_path):
    _, paths = sources
    size = KeyCache(tmp_path / "probe", max_bytes="unlimited").load(paths[0])[1].bytes
    cache = KeyCache(tmp_path / "c", max_bytes=2 * size + size // 2)  # room for two entries
    _, i0 = cache.load(paths[0])
    _, i1 = cache.load(paths[1])
    _touch(i0.path, 2 * 10**18)  # k0 used after k1
    _, i2 = cache.load(paths[2])
    assert i2.path is not None and not i2.hit
    assert sorted(e.path for e in cache.entries()) == sorted([i0.path, i2.path])  # k1 went
    assert cache.usage() <= cache.max_bytes
    key, again = cache.load(paths[1])  # refilled from the source, checked again
    assert not again.hit and same_key(key, ProvingKey.read(paths[1]))
    with pytest.raises(InputError):
        KeyCache(tmp_path, max_bytes=-1)


def test_entries_in_use_by_a_live_engine_stay_and_a_key_that_cannot_fit_is_not_cached(sources, tmp_path):
    import cuzk

    synth, paths = sources
    size = KeyCache(tmp_path / "probe", max_bytes="unlimited").load(paths[0])[1].bytes
    with cuzk.Engine(device="cpu", memory_budget=None, key_cache=tmp_path / "c",
                     key_cache_max_bytes=size + size // 2) as engine:
        engine.register("k0", synth, str(paths[0]))
        engine.preload("k0")  # its host-tier key is mapped from the entry: pinned
        pinned = engine._route("k0").cache_path
        _touch(pinned, 1)  # the least recently used entry, and still it stays
        key, info = engine.key_cache.load(paths[1])
        assert info.path is None and "cap" in info.note and same_key(key, ProvingKey.read(paths[1]))
        assert [e.path for e in engine.key_cache.entries()] == [pinned]
        assert engine.key_cache.prune(0) == [] and os.path.exists(pinned)  # prune spares it too
        f = engine.submit("k0", {"x": 3, "out": 35})
        assert f.result(timeout=60) is not None
        engine.evict("k0")  # unpinned now
        _, info = engine.key_cache.load(paths[1])
        assert info.path is not None and not os.path.exists(pinned)
    # a closed engine's pins are gone as well
    e2 = cuzk.Engine(device="cpu", memory_budget=None, key_cache=tmp_path / "c", key_cache_max_bytes=size + size // 2)
    e2.register("k2", synth, str(paths[2]))
    e2.preload("k2")
    route = e2._route("k2")
    assert route.cache_path is not None
    e2.close()
    assert KeyCache(tmp_path / "c", max_bytes=size + size // 2).load(paths[3])[1].path is not None
    assert not os.path.exists(route.cache_path)


def test_writers_in_parallel_stay_under_the_cap_and_leave_only_whole_entries(sources, tmp_path):
    _, paths = sources
    size = KeyCache(tmp_path / "probe", max_bytes="unlimited").load(paths[0])[1].bytes
    cap = 2 * size + size // 2
    seen, stop = [], threading.Event()
    partial = tmp_path / "c" / "params-x-v1.cuzkkey.tmp"  # another writer's file in progress
    partial.parent.mkdir()
    partial.write_bytes(b"\0" * size)

    def watch():  # the whole entries never take more than the cap, at any moment
        while not stop.is_set():
            seen.append(sum(e.bytes for e in KeyCache(tmp_path / "c", max_bytes=cap).entries()))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        # each thread its own KeyCache, as separate processes would have (the flock is per open file)
        with ThreadPoolExecutor(5) as pool:
            results = list(pool.map(lambda p: KeyCache(tmp_path / "c", max_bytes=cap).load(p), paths * 2))
    finally:
        stop.set()
        watcher.join(30)
    assert max(seen) <= cap
    cache = KeyCache(tmp_path / "c", max_bytes=cap)
    entries = cache.entries()
    assert len(entries) == 2 and cache.usage() <= cap and all(e.error is None for e in entries)
    for e in entries:  # each remaining entry is whole: every chunk checksum holds
        read_keyfile(e.path)
    assert partial.exists()  # a partial file is never taken for an entry
    for (key, _), p in zip(results, paths * 2):
        assert same_key(key, ProvingKey.read(p))
    gc.collect()


def test_cap_from_the_environment_and_cuzk_keys_shows_it(sources, tmp_path, monkeypatch, capsys):
    from cuzk import cli_keys

    _, paths = sources
    monkeypatch.setenv(ENV, "1M")
    assert KeyCache(tmp_path).max_bytes == 1 << 20
    assert cli_keys.main(["--dir", str(tmp_path), "load", str(paths[0])]) == 0
    assert cli_keys.main(["--dir", str(tmp_path), "list"]) == 0
    out = capsys.readouterr().out
    assert f"cap: 1.0 MiB (${ENV}); in use: " in out and "% of the cap" in out
    monkeypatch.setenv(ENV, "unlimited")
    assert KeyCache(tmp_path).max_bytes is None
    monkeypatch.setenv(ENV, "lots")
    with pytest.raises(InputError, match=ENV):
        KeyCache(tmp_path)
    assert cli_keys.main(["--dir", str(tmp_path), "list"]) == 1
    monkeypatch.delenv(ENV)
    assert KeyCache(tmp_path).max_bytes == default_cap(tmp_path) > 0
    assert resolve_cap("2G", tmp_path) == 2 << 30 and parse_size("7") == 7
    with pytest.raises(InputError):
        __import__("cuzk").Engine(device="cpu", key_cache_max_bytes=-5)
