//! `verify-post`: filecoin-proofs-api's `verify_window_post` / `verify_winning_post` of a given
//! proof with a given verifying key; the public inputs are the ones filecoin-proofs derives from
//! the randomness, the prover id and the sectors' ids and comm_r.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use anyhow::{ensure, Context, Result};
use filecoin_proofs_api::post as api;
use filecoin_proofs_api::{PoStType, PublicReplicaInfo, SectorId};
use serde_json::json;

use crate::args::{parse_hex32, Args};
use crate::groth16_cmd::PROOF_BYTES;
use crate::post::{domain, hex_inputs, post_proof_from, public_inputs, public_params, verifier_inputs};

/// `--replicas ID:HEX32[,ID:HEX32...]`: sector id and comm_r (as `seal` prints it).
fn replicas(text: &str) -> Result<Vec<(u64, [u8; 32])>> {
    text.split(',')
        .map(|item| {
            let (id, comm_r) = item
                .split_once(':')
                .with_context(|| format!("--replicas item {:?} is not ID:COMM_R", item))?;
            Ok((id.parse().with_context(|| format!("sector id {:?}", id))?, parse_hex32(comm_r)?))
        })
        .collect()
}

/// `verify-post --kind window|winning --vk FILE --proof FILE --randomness HEX32 --prover-id HEX32
///  --replicas ID:HEX32[,...] [--registered-proof ID]`
pub fn run(args: &Args, param_cache: &Path) -> Result<(serde_json::Value, bool)> {
    let proof = post_proof_from(args)?;
    let vk_path = args.path("vk")?;
    let proof_path = args.path("proof")?;
    let randomness = args.hex32("randomness")?;
    let prover_id = args.hex32("prover-id")?;
    let sectors = replicas(&args.req("replicas")?)?;
    args.finish()?;
    let bytes = fs::read(&proof_path).with_context(|| format!("reading --proof {:?}", proof_path))?;

    // The verifier's own inputs, per partition: printed, and the key's size is checked against
    // them before filecoin-proofs would panic on a mismatch.
    let (params, partitions) = public_params(proof, sectors.len())?;
    let mut statement = Vec::new();
    for (id, comm_r) in &sectors {
        statement.push((SectorId::from(*id), domain(comm_r, "comm_r")?));
    }
    let pub_inputs = verifier_inputs(&params, &randomness, &prover_id, &statement)?;
    let inputs: Vec<Vec<String>> = (0..partitions)
        .map(|k| Ok(hex_inputs(&public_inputs(&params, &pub_inputs, k)?)))
        .collect::<Result<_>>()?;

    // Parsed first: filecoin-proofs would otherwise generate fresh random keys in place of a
    // file it cannot read.
    let f = fs::File::open(&vk_path).with_context(|| format!("opening --vk {:?}", vk_path))?;
    let vk = bellperson::groth16::VerifyingKey::<blstrs::Bls12>::read(std::io::BufReader::new(f))
        .with_context(|| format!("{:?} is not a bellperson verifying key", vk_path))?;
    ensure!(
        vk.ic.len() == inputs[0].len() + 1,
        "the verifying key takes {} public inputs; {:?} has {}",
        vk.ic.len() - 1,
        proof,
        inputs[0].len()
    );
    ensure!(
        bytes.len() == partitions * PROOF_BYTES,
        "--proof holds {} bytes; {} partition(s) of {} bytes expected",
        bytes.len(),
        partitions,
        PROOF_BYTES
    );
    let cached = proof.cache_verifying_key_path()?;
    ensure!(cached.starts_with(param_cache), "parameter cache {:?} is not the oracle's {:?}", cached, param_cache);
    fs::copy(&vk_path, &cached)?;

    let map: BTreeMap<SectorId, PublicReplicaInfo> = sectors
        .iter()
        .map(|(id, comm_r)| (SectorId::from(*id), PublicReplicaInfo::new(proof, *comm_r)))
        .collect();
    let valid = match proof.typ() {
        PoStType::Window => api::verify_window_post(&randomness, &[(proof, &bytes[..])], &map, prover_id)?,
        PoStType::Winning => api::verify_winning_post(&randomness, &bytes, &map, prover_id)?,
    };
    Ok((
        json!({
            "valid": valid,
            "registered_post_proof": format!("{:?}", proof),
            "circuit_identifier": proof.circuit_identifier()?,
            "vk": cached.display().to_string(),
            "partitions": partitions,
            "public_inputs": inputs,
        }),
        valid,
    ))
}
