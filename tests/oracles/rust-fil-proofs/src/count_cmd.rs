//! `count-blank`: bellperson's own count of a registered seal proof's blank StackedCircuit
//! partition (the circuit its parameters are generated for), at any sector size: `BenchCS` runs
//! the synthesis without evaluating a value or building a matrix, so even 32 GiB fits in memory.

use std::time::Instant;

use anyhow::{bail, Result};
use bellperson::util_cs::bench_cs::BenchCS;
use bellperson::Circuit;
use blstrs::Scalar as Fr;
use filecoin_proofs::constants::{DefaultPieceHasher, SectorShape32GiB, SectorShape64GiB, SectorShapeBase};
use filecoin_proofs::parameters::setup_params;
use filecoin_proofs_api::RegisteredSealProof;
use serde_json::json;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_porep::stacked::{StackedCompound, StackedDrg};

use crate::args::Args;
use crate::proof_kind::{parse_seal_proof, seal_proof_id};

/// (inputs with ONE, constraints, challenges in the partition) of `proof`'s blank partition.
fn count<Tree: 'static + MerkleTreeTrait>(proof: RegisteredSealProof) -> Result<(usize, usize, usize)> {
    let config = proof.as_v1_config();
    let setup = compound_proof::SetupParams {
        vanilla_params: setup_params(&config)?,
        partitions: Some(usize::from(config.partitions)),
        priority: false,
    };
    let pp = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::setup(
        &setup,
    )?;
    let challenges = pp.vanilla_params.challenges.num_challenges_per_partition();
    let circuit = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<_, _>>::blank_circuit(&pp.vanilla_params);
    let mut cs = BenchCS::<Fr>::new();
    circuit.synthesize(&mut cs)?;
    Ok((cs.num_inputs(), cs.num_constraints(), challenges))
}

/// `count-blank --registered-proof ID`
pub fn run(args: &Args) -> Result<serde_json::Value> {
    let proof = parse_seal_proof(&args.req("registered-proof")?)?;
    args.finish()?;
    let size = u64::from(proof.sector_size());
    let t = Instant::now();
    // filecoin-proofs-api's with_shape!: 2 KiB, 8 MiB and 512 MiB share the 8-0-0 tree
    let (inputs, constraints, challenges) = match size {
        2048 | 0x80_0000 | 0x2000_0000 => count::<SectorShapeBase>(proof)?,
        0x8_0000_0000 => count::<SectorShape32GiB>(proof)?,
        0x10_0000_0000 => count::<SectorShape64GiB>(proof)?,
        other => bail!("no tree shape for sector size {}", other),
    };
    Ok(json!({
        "registered_proof": format!("{:?}", proof),
        "registered_proof_id": seal_proof_id(proof),
        "sector_size": size,
        "circuit": "StackedCircuit (blank, one partition)",
        "partitions": usize::from(proof.as_v1_config().partitions),
        "challenges_in_partition": challenges,
        "num_inputs": inputs,
        "num_constraints": constraints,
        "counter": "bellperson BenchCS",
        "seconds": t.elapsed().as_secs_f64(),
    }))
}
