"""Seed files for the fuzzer, made by cuzk itself (nothing binary is committed).

Two small circuits (``Cube``, one public input; ``Pair``, two) are set up in both conventions
(bellperson ``.params``/``.vk``, snarkjs ``.zkey``), proven, and written with cuzk's own writers.
Everything is deterministic (fixed rngs and blinding), so a run's seeds, and with them every
mutated input, depend only on the fuzzer's ``--seed``. :func:`make_seeds` writes them into a
folder once per run; workers read the same folder.

Layout: ``<dir>/<kind>/<circuit>.bin`` for each seed kind in :data:`KINDS` (one file per circuit,
whatever the format; readers never look at the extension) plus ``<dir>/statement/<circuit>.json``:
the statement (public inputs, the circuit inputs) the oracles check against. The Filecoin kinds
(:data:`FILECOIN_KINDS`: what ``cuzk serve`` and ``cuzk porep`` read from storage providers) have
two seeds each in the same two slots: a 2 KiB sector's C1 JSON sealed with the v1.1 and with the
v1.0 parent order, two SnapDeals partition proofs, two WindowPoSt sector proofs (bincode), with
``<dir>/statement/snap_<circuit>.json`` for the SnapDeals check.

    >>> d = make_seeds(tempfile.mkdtemp())          # doctest: +SKIP
    >>> sorted(os.listdir(d))[:3]                   # doctest: +SKIP
    ['bp_params', 'bp_proof', 'bp_proof_json']
"""

from __future__ import annotations

import json
import os
import tempfile  # noqa: F401  (the docstring example)

import numpy as np

__all__ = ["make_seeds", "KINDS", "FILECOIN_KINDS", "CIRCUITS", "seed_files", "statement", "snap_statement"]

#: every seed kind written per circuit
KINDS = ("bp_params", "bp_vk", "bp_vk_json", "bp_proof", "bp_proof_json", "zkey", "wtns", "r1cs",
         "sj_proof", "sj_public", "sj_vk", "pce", "timeline", "g1c", "g1u", "g2c", "g2u", "kc_record", "kc_table")
#: Filecoin's documents, two seeds each in the circuits' two slots
FILECOIN_KINDS = ("porep_c1", "snap_vanilla", "post_vanilla")
#: the circuits seeds are made from
CIRCUITS = ("cube", "pair")


def _circuits():
    from cuzk.circuit import Circuit
    from cuzk.circuits.cube import Cube

    class Pair(Circuit):
        """Two public inputs: a² = b and a + b = c (a private)."""

        def define(self, cs, a, b, c):
            a, b, c = cs.private(a), cs.public(b), cs.public(c)
            cs.assert_equal(a * a, b)
            cs.assert_equal(a + b, c)

    return {"cube": (Cube(), {"x": 3, "out": 35}), "pair": (Pair(), {"a": 5, "b": 25, "c": 30})}


def _timeline_events():
    from cuzk.timeline.events import Event
    from cuzk.timeline.events import EventKind as K

    cpu = lambda t, p: {"thread_cpu_ns": t, "process_cpu_ns": p}  # noqa: E731
    ms = 10**6
    return [
        Event(0, K.CONCURRENCY, None, detail={"value": 2, "reason": "auto: start"}),
        Event(1 * ms, K.JOB_SUBMIT, 1), Event(2 * ms, K.SYNTH_START, 1, None, "cuzk-synth-0", cpu(0, 0)),
        Event(5 * ms, K.SYNTH_END, 1, None, "cuzk-synth-0", cpu(3 * ms, 4 * ms)),
        Event(6 * ms, K.CHAN_SEND, 1), Event(7 * ms, K.GPU_PICKUP, 1, None, "cuzk-gpu-0"),
        Event(8 * ms, K.GPU_START, 1, None, "cuzk-gpu-0", cpu(0, 5 * ms)),
        Event(9 * ms, K.SPAN_START, 1, None, "cuzk-gpu-0", {"name": "MSM_A"}),
        Event(11 * ms, K.SPAN_END, 1, None, "cuzk-gpu-0", {"name": "MSM_A", "device_ms": 1.5}),
        Event(12 * ms, K.GPU_END, 1, None, "cuzk-gpu-0", cpu(4 * ms, 9 * ms)),
        Event(13 * ms, K.JOB_DONE, 1),
        Event(14 * ms, K.JOB_SUBMIT, "job-2", 0), Event(15 * ms, K.SYNTH_START, "job-2", 0, "cuzk-synth-1", cpu(0, 9 * ms)),
        Event(16 * ms, K.SYNTH_END, "job-2", 0, "cuzk-synth-1", {**cpu(ms, 10 * ms), "error": "InputError"}),
        Event(17 * ms, K.JOB_FAILED, "job-2", 0, None, {"stage": "synth", "error": "InputError"}),
    ]


def make_seeds(folder) -> str:
    """Write every seed kind for every circuit into ``folder`` (created); returns its path.

    Takes ~2 s with a warm Numba cache (setup, two proofs per circuit, a pairing per vk JSON).
    """
    import cuzk
    from cuzk.curve import G1, G2
    from cuzk.curve.encoding import points_to_bytes
    from cuzk.formats import bellperson, snarkjs, snarkjs_json
    from cuzk.formats.snarkjs_setup import setup_snarkjs
    from cuzk.formats.snarkjs_write import write_zkey
    from cuzk.synth import Synthesizer
    from cuzk.timeline import storage

    folder = os.fspath(folder)
    for kind in KINDS + FILECOIN_KINDS + ("statement",):
        os.makedirs(os.path.join(folder, kind), exist_ok=True)
    path = lambda kind, name: os.path.join(folder, kind, f"{name}.bin")  # noqa: E731
    for i, (name, (circuit, inputs)) in enumerate(_circuits().items()):
        synth = Synthesizer(circuit)
        w = synth.synthesize(**inputs)
        pk, vk = cuzk.groth16.setup(synth.r1cs, np.random.default_rng(10 + i), threads=1)
        proof = cuzk.groth16.prove(pk, w, 5 + i, 7 + i, threads=1)
        pk.write(path("bp_params", name))
        with open(path("bp_vk", name), "wb") as f:
            f.write(vk.to_bytes())
        with open(path("bp_vk_json", name), "w") as f:
            f.write(bellperson.vk_to_json(vk))
        with open(path("bp_proof", name), "wb") as f:
            f.write(proof.to_bytes())
        with open(path("bp_proof_json", name), "w") as f:
            f.write(proof.to_json())
        spk = setup_snarkjs(synth.r1cs, np.random.default_rng(20 + i), threads=1)
        write_zkey(spk, path("zkey", name))
        snarkjs.write_wtns(path("wtns", name), w.z)
        synth.r1cs.write(path("r1cs", name))
        sproof = cuzk.groth16.prove(spk, spk.witness(w.z), 11 + i, 13 + i, threads=1)
        snarkjs_json.write_proof_json(path("sj_proof", name), sproof)
        snarkjs_json.write_public_json(path("sj_public", name), w.public_inputs)
        snarkjs_json.write_vk_json(path("sj_vk", name), spk.vk)
        synth.save(path("pce", name))
        storage.save(_timeline_events()[i:], path("timeline", name))
        rng = np.random.default_rng(30 + i)
        for group, tag in ((G1, "g1"), (G2, "g2")):
            pts = np.concatenate([group.random(3, rng), group.identity(1)])
            for comp, suffix in ((True, "c"), (False, "u")):
                with open(path(f"{tag}{suffix}", name), "wb") as f:
                    f.write(points_to_bytes(group, pts, compressed=comp))
        _keycache_seeds(path("bp_params", name), path("zkey", name), path("kc_record", name), path("kc_table", name))
        with open(os.path.join(folder, "statement", f"{name}.json"), "w") as f:
            json.dump({"public": [str(x) for x in w.public_inputs], "inputs": {k: str(v) for k, v in inputs.items()}}, f)
    _filecoin_seeds(folder)
    return folder


def _filecoin_seeds(folder: str) -> None:
    """The Filecoin kinds' seeds, from cuzk's own sealer, updater and PoSt prover (~1 s)."""
    import random

    from cuzk.circuits.filecoin import PostSector, build_tree
    from cuzk.circuits.filecoin.porep import commit_phase1, fr32_pad, seal
    from cuzk.circuits.filecoin.update import partition_proof, update
    from cuzk.circuits.filecoin.vanilla import FALLBACK_POST_SECTOR_PROOF, sector_proof, to_bincode
    from cuzk.field import FR

    path = lambda kind, name: os.path.join(folder, kind, f"{name}.bin")  # noqa: E731
    for i, (name, registered) in enumerate(zip(CIRCUITS, (5, 0))):  # v1.1, then v1.0 parents
        rng = random.Random(40 + i)
        sealed = seal(fr32_pad(rng.randbytes(2032)), registered_proof=registered, prover_id=rng.randbytes(32),
                      sector_id=7 + i, ticket=rng.randbytes(32))
        with open(path("porep_c1", name), "w") as f:
            f.write(commit_phase1(sealed, rng.randbytes(32)).to_json())
        data = np.frombuffer(fr32_pad(rng.randbytes(2032)), np.uint8).reshape(-1, 32)
        updated = update(sealed, data)
        with open(path("snap_vanilla", name), "wb") as f:
            f.write(partition_proof(updated, 0).to_bincode())
        with open(os.path.join(folder, "statement", f"snap_{name}.json"), "w") as f:
            json.dump({k: getattr(updated, k).hex() for k in ("comm_r_old", "comm_d_new", "comm_r_new")}, f)
        replica = b"".join(rng.randrange(FR.modulus).to_bytes(32, "little") for _ in range(64))
        sector = PostSector(sector_id=100 + i, comm_c=rng.randrange(FR.modulus), tree=build_tree(replica))
        with open(path("post_vanilla", name), "wb") as f:
            f.write(to_bincode(FALLBACK_POST_SECTOR_PROOF, sector_proof(sector, [3 * i + 1, 17, 40 + i])))


def _keycache_seeds(params: str, zkey: str, record_out: str, table_out: str) -> None:
    """The key cache's small files, as cuzk writes them: the source record of ``params`` and
    the table (JSON) of the cache entry of ``zkey``."""
    import attrs

    from cuzk.engine.keyarrays import key_to_arrays
    from cuzk.engine.keyfile import write_keyfile
    from cuzk.engine.keysource import SourceRecord, full_digest, sampled_digest
    from cuzk.formats import snarkjs

    st = os.stat(params)
    rec = SourceRecord.of(os.path.realpath(params), st, full_digest(params), sampled_digest(params), "params")
    with open(record_out, "w") as f:
        json.dump(attrs.asdict(rec), f)
    arrays, meta = key_to_arrays(snarkjs.read_zkey(zkey, threads=1))
    entry = table_out + ".cuzkkey"
    write_keyfile(entry, arrays, {"kind": "zkey", "source_digest": "0" * 64, "key": meta})
    with open(entry, "rb") as f:
        raw = f.read()
    os.unlink(entry)
    t_off, t_len = (int.from_bytes(raw[16:24], "little"), int.from_bytes(raw[24:32], "little"))
    with open(table_out, "wb") as f:
        f.write(raw[t_off:t_off + t_len])


def seed_files(folder, kind: str) -> list[str]:
    """The seed paths of one kind, in circuit order."""
    return [os.path.join(os.fspath(folder), kind, f"{c}.bin") for c in CIRCUITS]


def snap_statement(folder, circuit: str) -> dict:
    """``{"comm_r_old", "comm_d_new", "comm_r_new"}`` (32 bytes each) of a SnapDeals seed."""
    with open(os.path.join(os.fspath(folder), "statement", f"snap_{circuit}.json")) as f:
        return {k: bytes.fromhex(v) for k, v in json.load(f).items()}


def statement(folder, circuit: str) -> dict:
    """``{"public": [int...], "inputs": {name: int}}`` of one circuit's seeds."""
    with open(os.path.join(os.fspath(folder), "statement", f"{circuit}.json")) as f:
        d = json.load(f)
    return {"public": [int(x) for x in d["public"]], "inputs": {k: int(v) for k, v in d["inputs"].items()}}
