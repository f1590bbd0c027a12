"""Engine.register(..., precompute=...): a key's fixed-base tables are counted in the memory
budget with the key and evicted with it, stored beside the key's cache entry (same file format,
checksummed, memory-mapped) so a later engine maps them instead of building, rebuilt when
damaged, and built for a cache entry written without them (cuzk/engine/keytables.py)."""

from pathlib import Path

import numpy as np
import pytest

import cuzk
from cuzk.engine.circuit import _key_nbytes
from cuzk.engine.keycache import KeyCache
from cuzk.errors import InputError
from cuzk.groth16 import ToxicWaste, fixed_base, setup_with_waste, verify
from cuzk.groth16.fixed_base import QUERY_GROUPS, KeyTables
from cuzk.prover import GpuProver
from cuzk.synth import Synthesizer
from cuzk.timeline import EventKind as K

from pipeline_support import no_leaked_threads  # noqa: F401  (autouse)
from fixed_base_support import WASTE, Chain, chain_out

R = cuzk.curves.resolve("bls12_381").fr.modulus
INPUTS = {"x": 3, "k": 5, "out": chain_out(3, 5, R)}
TIMEOUT = 120


@pytest.fixture(autouse=True)
def small_queries(monkeypatch):
    monkeypatch.setattr(fixed_base, "MIN_POINTS", 1)  # the test key's queries are a few hundred points


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    synth = Synthesizer(Chain())
    pk = setup_with_waste(synth.r1cs, ToxicWaste(**WASTE))
    path = tmp_path_factory.mktemp("keys") / "chain.params"
    pk.write(path)
    qbytes = sum(getattr(pk, q).nbytes for q in QUERY_GROUPS)
    return synth, pk, path, qbytes


def engine(**kw):
    kw.setdefault("device", "cpu")
    kw.setdefault("memory_budget", None)
    return cuzk.Engine(**kw)


def _same_proofs(prover, pk, w):
    plain = GpuProver(pk, device="cpu")
    return all(prover.prove(w, r, s).to_bytes() == plain.prove(w, r, s).to_bytes() for r, s in ((5, 7), (R - 1, 2)))


def test_tables_are_stored_with_the_key_and_a_later_engine_maps_them(chain, tmp_path):
    synth, pk, path, qbytes = chain
    cache = tmp_path / "cache"
    w = synth.synthesize(**INPUTS)
    with engine(key_cache=cache) as e:
        e.register("chain", synth, path, precompute=2 * qbytes)
        assert verify(pk.vk, w.public_inputs, e.submit("chain", INPUTS).result(timeout=TIMEOUT))
        st = e.status()["keys"]["chain"]["tables"]
        assert st["hit"] is False and st["build_s"] > 0 and Path(st["path"]).is_file()
        built = e._route("chain").tables
        assert 0 < built.nbytes <= 2 * qbytes and st["bytes"] == built.nbytes
        end = [ev for ev in e.timeline.events() if ev.kind is K.KEY_LOAD_END][0]
        assert end.detail["tables_bytes"] == built.nbytes and end.detail["tables_hit"] is False
        kinds = sorted(x.kind for x in e.key_cache.entries())
        assert kinds == ["params", "tables"]
    with engine(key_cache=cache) as e2:
        e2.register("chain", synth, path, precompute=2 * qbytes)
        e2.preload("chain")
        route = e2._route("chain")
        assert route.tables_info.hit and route.tables_info.build_seconds == 0 and route.tables_info.path == st["path"]
        for q, t in route.tables.tables.items():
            assert not t.points.flags.writeable and np.array_equal(t.points, built.tables[q].points)  # mapped
        assert _same_proofs(route._provers[None], pk, w)
        assert verify(pk.vk, w.public_inputs, e2.submit("chain", INPUTS).result(timeout=TIMEOUT))


def test_a_cache_entry_without_tables_still_loads_and_gains_them(chain, tmp_path, monkeypatch):
    synth, pk, path, qbytes = chain
    monkeypatch.setattr(fixed_base, "auto_factor", lambda: fixed_base.AUTO_FACTOR)  # "auto" as without IFMA
    cache = tmp_path / "cache"
    with engine(key_cache=cache) as e:  # an entry as written before tables existed
        e.register("chain", synth, path)
        e.preload("chain")
        assert e._route("chain").tables is None
    assert [x.kind for x in KeyCache(cache).entries()] == ["params"]
    with engine(key_cache=cache) as e:
        e.register("chain", synth, path, precompute="auto")
        e.preload("chain")
        route = e._route("chain")
        assert route.tables is not None and not route.tables_info.hit and route.tables_info.path is not None
        assert route.tables.nbytes <= fixed_base.AUTO_FACTOR * qbytes
        assert _same_proofs(route._provers[None], pk, synth.synthesize(**INPUTS))
    assert sorted(x.kind for x in KeyCache(cache).entries()) == ["params", "tables"]


def test_a_damaged_tables_file_is_rebuilt_never_used(chain, tmp_path):
    synth, pk, path, qbytes = chain
    cache = tmp_path / "cache"
    with engine(key_cache=cache) as e:
        e.register("chain", synth, path, precompute=qbytes)
        e.preload("chain")
        tables_file = Path(e._route("chain").tables_info.path)
    data = bytearray(tables_file.read_bytes())
    data[64 + 100] ^= 0x10  # a point's limb in the data region
    tables_file.write_bytes(bytes(data))
    with engine(key_cache=cache) as e:
        e.register("chain", synth, path, precompute=qbytes)
        e.preload("chain")
        info = e._route("chain").tables_info
        assert not info.hit and "checksum" in info.note and info.path == str(tables_file)
        assert _same_proofs(e._route("chain")._provers[None], pk, synth.synthesize(**INPUTS))


def test_the_budget_counts_tables_with_the_key_and_eviction_frees_them(chain, tmp_path):
    synth, pk, path, qbytes = chain
    size = path.stat().st_size
    with engine(key_cache=tmp_path / "cache", memory_budget=1 << 30) as e:
        e.register("file", synth, path, precompute=qbytes)
        e.register("object", synth, pk, precompute=qbytes)
        assert e.status()["keys"]["file"]["bytes"] == size + qbytes  # before the load: the most it may take
        obj = e._route("object")
        planned = fixed_base.tables_bytes(pk, obj.table_plans())
        assert obj.key_bytes_reserved == _key_nbytes(pk) + planned  # from register on
        for name in ("file", "object"):
            e.preload(name)
        file_route = e._route("file")
        assert file_route.key_bytes_reserved == _key_nbytes(file_route._pk) + file_route.tables.nbytes
        assert obj.tables.nbytes == planned and obj.tables_info.path is None  # no cache entry: in memory
        mem = e.status()["memory"]
        assert mem["keys"] == file_route.key_bytes_reserved + obj.key_bytes_reserved
        assert mem["reserved"] == mem["keys"] + mem["pce"]
        freed = e.evict("object")
        assert freed == planned and obj.tables is None and obj.key_bytes_reserved == _key_nbytes(pk)
        e.preload("object")  # the tables come back, and their bytes with them
        assert obj.tables is not None and obj.key_bytes_reserved == _key_nbytes(pk) + planned
        held = file_route.key_bytes_reserved
        assert e.evict("file") == held and file_route.tables is None
        assert e.status()["memory"]["reserved"] == mem["pce"] + obj.key_bytes_reserved


def test_auto_is_sized_from_the_memory_budget(chain, monkeypatch):
    synth, pk, _, qbytes = chain
    monkeypatch.setattr(fixed_base, "auto_factor", lambda: fixed_base.AUTO_FACTOR)  # "auto" as without IFMA
    budget = 4 * _key_nbytes(pk)
    with engine(memory_budget=budget) as e:
        e.register("chain", synth, pk, precompute="auto")
        route = e._route("chain")
        room = budget - route.unit_bytes - route.pce_bytes - _key_nbytes(pk)
        assert route._table_cap(qbytes) == min(fixed_base.AUTO_FACTOR * qbytes, budget // 4, max(0, room))
        assert fixed_base.tables_bytes(pk, route.table_plans()) <= route._table_cap(qbytes)


@pytest.mark.parametrize("bad", [-1, 1.5, "big", True, KeyTables({})])
def test_bad_precompute_values_are_refused_at_register(chain, bad):
    synth, pk, _, _ = chain
    with engine() as e:
        with pytest.raises(InputError, match="precompute"):
            e.register("chain", synth, pk, precompute=bad)
        assert e.circuits() == ()


def test_precompute_with_a_custom_prover_is_refused(chain):
    synth = chain[0]

    class Echo:
        def prove(self, w):
            return w

    with engine() as e:
        with pytest.raises(InputError, match="custom prover"):
            e.register("chain", synth, Echo(), precompute="auto")
