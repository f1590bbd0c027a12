//! `post-vanilla`: rust-fil-proofs' own PoSt vanilla proofs of sectors sealed by `seal`, written
//! as the bincode `FallbackPoStSectorProof` bytes a node (Curio, through filecoin-ffi) hands a
//! SNARK prover.

use std::fs;

use anyhow::{ensure, Context, Result};
use filecoin_proofs_api::post as api;
use filecoin_proofs_api::{PoStType, PrivateReplicaInfo, SectorId};
use serde_json::json;

use crate::args::{parse_hex32, Args};
use crate::post::{post_proof_from, post_proof_id, read_vanilla, PostInstance};

/// `post-vanilla --kind window|winning --sectors DIR[,DIR...] --randomness HEX32 --prover-id HEX32
///  --out DIR [--registered-proof ID]`
pub fn run(args: &Args) -> Result<(serde_json::Value, bool)> {
    let proof = post_proof_from(args)?;
    let dirs = args.paths("sectors")?;
    let randomness = args.hex32("randomness")?;
    let prover_id = args.hex32("prover-id")?;
    let out = args.path("out")?;
    args.finish()?;
    if proof.typ() == PoStType::Winning {
        // generate_fallback_sector_challenges draws WinningPoSt challenges for its first sector only
        ensure!(dirs.len() == 1, "WinningPoSt proves one sector (the one the chain drew), got {}", dirs.len());
    }

    let mut ids = Vec::new();
    let mut replicas = Vec::new();
    for dir in &dirs {
        let seal: serde_json::Value = serde_json::from_slice(
            &fs::read(dir.join("seal.json")).with_context(|| format!("reading {:?}/seal.json (seal's --out)", dir))?,
        )?;
        let id = seal["sector_id"].as_u64().context("seal.json has no sector_id")?;
        let comm_r = parse_hex32(seal["comm_r"].as_str().context("seal.json has no comm_r")?)?;
        ids.push(SectorId::from(id));
        replicas.push(PrivateReplicaInfo::new(proof, comm_r, dir.join("cache"), dir.join("sealed.bin")));
    }
    let challenges = api::generate_fallback_sector_challenges(proof, &randomness, &ids, prover_id)
        .context("generate_fallback_sector_challenges")?;

    fs::create_dir_all(&out)?;
    let mut sectors = Vec::new();
    let mut files = Vec::new();
    for (id, replica) in ids.iter().zip(&replicas) {
        let chal = challenges.get(id).with_context(|| format!("no challenges drawn for sector {}", u64::from(*id)))?;
        let bytes = api::generate_single_vanilla_proof(proof, *id, replica, chal)
            .with_context(|| format!("generate_single_vanilla_proof of sector {}", u64::from(*id)))?;
        let name = format!("vanilla-{}.bin", u64::from(*id));
        fs::write(out.join(&name), &bytes)?;
        files.push(out.join(&name));
        sectors.push(json!({"sector_id": u64::from(*id), "challenges": chal, "vanilla": name, "bytes": bytes.len()}));
    }
    // The proofs go through filecoin-proofs' own partitioning and vanilla verification.
    let instance = PostInstance::new(proof, &randomness, &prover_id, &read_vanilla(&files)?)?;
    let value = json!({
        "registered_post_proof": format!("{:?}", proof),
        "registered_post_proof_id": post_proof_id(proof),
        "api_version": format!("{}", proof.version()),
        "randomness": hex::encode(randomness),
        "prover_id": hex::encode(prover_id),
        "partitions": instance.partitions.len(),
        "vanilla_verifies": true,
        "sectors": sectors,
    });
    fs::write(out.join("post.json"), serde_json::to_vec_pretty(&value)?)?;
    Ok((value, true))
}
