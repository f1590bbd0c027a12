"""A WindowPoSt deadline beside sealing work, on one ``cuzk.Engine``.

A storage provider proves WindowPoSt for its sectors within a deadline while sealing keeps the
prover busy. Here: a few 2 KiB sectors (random Fr-safe replica data, their trees built with
neptune's Poseidon), the Filecoin WindowPoSt circuit (rust-fil-proofs' constraint counts and
public-input layout; docs/filecoin.md) registered at CRITICAL, and a sealing-like ``porep_like``
circuit at NORMAL. A burst of sealing jobs is queued first; then the WindowPoSt partitions
arrive with a deadline. The scheduler takes the CRITICAL partitions before the queued sealing
jobs, every proof is verified, and the timeline shows the order.

Keys come from cuzk's development setup: Filecoin's official parameters are not reachable here.

    python examples/filecoin_window_post.py                    # 4 sectors, 10 challenges each
    python examples/filecoin_window_post.py --challenges 1 --seal-jobs 3
"""

import argparse
import random
import time

import cuzk
from cuzk.circuits import porep_like
from cuzk.circuits.filecoin import FallbackPoSt, PostSector, build_tree, window_post
from cuzk.field import FR


def fr_safe_replica(rng, nbytes: int) -> bytes:
    """Random sector bytes whose 32-byte little-endian nodes are all < r (Fr32-padded data)."""
    return b"".join(rng.randrange(1 << 254).to_bytes(32, "little") for _ in range(nbytes // 32))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sectors", type=int, default=4, help="2 KiB sectors to prove (2 per partition)")
    ap.add_argument("--challenges", type=int, default=10, help="challenges per sector (Filecoin: 10)")
    ap.add_argument("--seal-jobs", type=int, default=6)
    ap.add_argument("--deadline", type=float, default=600.0, help="seconds the WindowPoSt may take")
    args = ap.parse_args(argv)
    rng = random.Random(2048)

    post = FallbackPoSt(2048, challenge_count=args.challenges, sector_count=window_post(2048).sector_count)
    sectors = [PostSector(sector_id=100 + i, comm_c=rng.randrange(FR.modulus), tree=build_tree(fr_safe_replica(rng, 2048)))
               for i in range(args.sectors)]
    randomness = rng.randrange(FR.modulus)
    partitions = post.partitions(len(sectors))

    t0 = time.perf_counter()
    post_synth = cuzk.Synthesizer(post)
    post_pk, post_vk = cuzk.groth16.setup(post_synth.r1cs)
    seal = porep_like(leaves=64, challenges=2)
    seal_synth = cuzk.Synthesizer(seal)
    seal_pk, seal_vk = cuzk.groth16.setup(seal_synth.r1cs)
    print(f"{post!r}: {post_synth.r1cs.n_constraints:,} constraints, {post_synth.r1cs.n_public + 1} inputs, "
          f"{partitions} partitions | {seal!r}: {seal_synth.r1cs.n_constraints:,} | setup {time.perf_counter() - t0:.1f} s")

    with cuzk.Engine(device="auto") as engine:
        engine.register("seal", seal_synth, seal_pk, priority="normal")
        engine.register("window-post", post_synth, post_pk, priority="critical")
        seals = [(k, engine.submit("seal", seal.sample_inputs(seed=k), request_id=f"seal-{k}")) for k in range(args.seal_jobs)]
        deadline = time.time() + args.deadline
        wpost = engine.submit_partitioned(
            "window-post", [post.inputs(randomness, sectors, partition=p) for p in range(partitions)],
            request_id="window-post-0", deadline=deadline)
        proofs = wpost.result(timeout=args.deadline + 60)
        done_at = time.time()
        for p, proof in enumerate(proofs):
            public = post.public_inputs(randomness, [(s.sector_id, s.comm_r) for s in sectors], partition=p)
            assert cuzk.groth16.verify(post_vk, public, proof), f"partition {p} does not verify"
        for k, f in seals:
            assert cuzk.groth16.verify(seal_vk, seal.public_inputs(seal.sample_inputs(seed=k)), f.result(timeout=600))
        print(f"WindowPoSt: {partitions} partition proofs verified, {deadline - done_at:.1f} s before the deadline")
        print(f"sealing: {len(seals)} proofs verified")
        events = engine.timeline.events()
    starts = [e.job_id for e in events if e.kind.name == "GPU_START"]
    first_post = next(i for i, j in enumerate(starts) if str(j).startswith("window-post"))
    print(f"prove order: {', '.join(str(j) for j in starts)}")
    print(f"sealing proofs started before the first WindowPoSt partition: {first_post}")
    print(engine.timeline.waterfall())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
