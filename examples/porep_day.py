"""storage_provider_app.py's ``--porep`` mode: seal, C1, C2, WindowPoSt and a SnapDeals update
of real 2 KiB sectors.

    python examples/storage_provider_app.py --porep 2 --keys /tmp/cuzk-keys
"""

import json
import os
import random
import time
import urllib.request

import cuzk
from cuzk.circuits.filecoin import FallbackPoSt, PostSector, commit_phase1, seal, window_post
# the names, not the package: cuzk.circuits.filecoin.update is also the function update()
from cuzk.circuits.filecoin.update import circuit_for as snap_circuit
from cuzk.circuits.filecoin.update import circuit_inputs as snap_inputs
from cuzk.circuits.filecoin.update import partition_proofs as snap_partition_proofs
from cuzk.circuits.filecoin.update import update as snap_update
from cuzk.circuits.filecoin.update import verify_update as snap_verify
from cuzk.circuits.filecoin.porep import c2, fr32_pad
from cuzk.engine.keycache import KeyCache
from cuzk.groth16 import Proof, setup, verify

PROVER_ID = bytes(range(32))
WPOST_CHALLENGES = 10  # Filecoin's WindowPoSt challenges per sector


def _key(synth, keys_dir, name):
    """The development key of ``synth``'s circuit: loaded through a key cache in ``keys_dir`` when
    a file of this circuit (its R1CS digest in the name) is there, else set up (and written there).

    The cache (``cuzk.engine.keycache.KeyCache``) reads a file with every check once, which for the 2.7M-
    constraint PoRep key takes longer than setting it up, and memory-maps it on every later run."""
    path = os.path.join(keys_dir, f"{name}-{synth.r1cs.digest[:16]}.params") if keys_dir else None
    t0 = time.perf_counter()
    if path and os.path.exists(path):
        pk, info = KeyCache(os.path.join(keys_dir, "cache")).load(path, kind="params", r1cs=synth.r1cs)
        how = "mapped from the key cache" if info.hit else "read with every check (cached for the next run)"
    else:
        pk, _ = setup(synth.r1cs)
        how = "set up"
        if path:
            os.makedirs(keys_dir, exist_ok=True)
            pk.write(path)
    print(f"{name}: {synth.r1cs.n_constraints:,} constraints, key {how} in {time.perf_counter() - t0:.1f} s")
    return pk


def run_porep(n_sectors: int, keys_dir=None) -> int:
    rng = random.Random(2048)
    t0 = time.perf_counter()
    sealed = [seal(fr32_pad(rng.randbytes(2032)), registered_proof=5, prover_id=PROVER_ID, sector_id=100 + i,
                   ticket=rng.randbytes(32)) for i in range(n_sectors)]
    c1s = [commit_phase1(s, rng.randbytes(32)) for s in sealed]
    print(f"sealed {n_sectors} 2 KiB sectors (StackedDrg2KiBV1_1) and built their C1 in {time.perf_counter() - t0:.1f} s")
    for s in sealed:
        print(f"  sector {s.sector_id}: comm_d {s.comm_d.hex()[:16]}..  comm_r {s.comm_r.hex()[:16]}..")

    porep_synth = cuzk.Synthesizer(c2.circuit_for(sealed[0].proof))
    porep_pk = _key(porep_synth, keys_dir, "porep-2k")
    post = FallbackPoSt(2048, challenge_count=WPOST_CHALLENGES, sector_count=window_post(2048).sector_count)
    post_synth = cuzk.Synthesizer(post)
    post_pk = _key(post_synth, keys_dir, "window-post-2k")
    # SnapDeals: new deal data into the first sealed sector, proved beside the rest
    updated = snap_update(sealed[0], fr32_pad(rng.randbytes(2032)))
    snap_synth = cuzk.Synthesizer(snap_circuit(updated.params, updated.h))
    snap_pk = _key(snap_synth, keys_dir, "snap-2k")
    sectors = [PostSector(s.sector_id, int.from_bytes(s.comm_c, "little"), s.tree_r) for s in sealed]
    randomness = rng.randrange(1 << 254)
    partitions = post.partitions(len(sectors))

    with cuzk.Engine(device="auto") as engine:
        engine.register("porep-c2", porep_synth, porep_pk, priority="normal")
        engine.register("window-post", post_synth, post_pk, priority="critical")
        engine.register("snap-update", snap_synth, snap_pk, priority="normal")
        host, port = engine.serve_status(port=0)
        seals = {c1.replica_id: engine.submit_partitioned("porep-c2", c2.partition_inputs(c1),
                                                          request_id=f"c2-{s.sector_id}")
                 for s, c1 in zip(sealed, c1s)}
        with urllib.request.urlopen(f"http://{host}:{port}/status", timeout=5) as r:
            st = json.loads(r.read())
        print("status after the C2 submits: " + ", ".join(f"{k}: {v['queued']} queued, {v['synthesizing']} synthesizing"
                                                          for k, v in st["circuits"].items()))
        snap_job = engine.submit_partitioned("snap-update", [snap_inputs(updated.params, pp, k=k,
                                                                                  comm_r_old=updated.comm_r_old,
                                                                                  comm_d_new=updated.comm_d_new,
                                                                                  comm_r_new=updated.comm_r_new, h=updated.h)
                                                             for k, pp in enumerate(snap_partition_proofs(updated))],
                                             request_id=f"snap-{sealed[0].sector_id}")
        deadline = time.time() + 600
        wpost = engine.submit_partitioned(
            "window-post", [post.inputs(randomness, sectors, partition=p) for p in range(partitions)],
            request_id="window-post-0", deadline=deadline)
        post_proofs = wpost.result(timeout=900)
        post_done = time.time()
        c2_proofs = {rid: Proof.concat(f.result(timeout=1800)) for rid, f in seals.items()}
        snap_proof = Proof.concat(snap_job.result(timeout=1800))
        status = engine.status()
        timeline = engine.timeline

    ok_post = all(verify(post_pk.vk, post.public_inputs(randomness, [(s.sector_id, s.comm_r) for s in sectors], p), pr)
                  for p, pr in enumerate(post_proofs))
    ok_c2 = all(c2.verify_commit_phase2(c1, porep_pk.vk, c2_proofs[c1.replica_id]) for c1 in c1s)
    print(f"WindowPoSt: {partitions} partition(s) of {len(sectors)} sectors, verified: {ok_post}, "
          f"{deadline - post_done:.0f} s before its deadline")
    print(f"C2: {len(c1s)} sectors, {sum(len(p) for p in c2_proofs.values())} proof bytes, verified: {ok_c2}")
    ok_snap = snap_verify(updated.params, snap_pk.vk, snap_proof, comm_r_old=updated.comm_r_old,
                                 comm_d_new=updated.comm_d_new, comm_r_new=updated.comm_r_new, h=updated.h)
    print(f"SnapDeals update of sector {sealed[0].sector_id}: comm_r {updated.comm_r_old.hex()[:16]}.. -> "
          f"{updated.comm_r_new.hex()[:16]}.., verified: {ok_snap}")
    print("engine: " + ", ".join(f"{k}: {v['done']} done" for k, v in status["circuits"].items()))
    print(timeline.summary())
    print(timeline.waterfall(max_rows=12))
    return 0 if ok_post and ok_c2 and ok_snap else 1
