//! `setup`, `prove` (`prove-time`), `verify-seal`: bellperson's CPU Groth16 on the PoRep circuit.

use std::fs;
use std::io::BufReader;
use std::path::Path;
use std::time::Instant;

use anyhow::{ensure, Context, Result};
use bellperson::groth16::{
    create_random_proof, generate_random_parameters, prepare_verifying_key, verify_proof,
    Parameters, Proof, VerifyingKey,
};
use blstrs::{Bls12, Scalar as Fr};
use filecoin_proofs_api::{seal, RegisteredSealProof, SectorId};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde_json::json;

use crate::args::Args;
use crate::porep::{blank_circuit, instance_from_c1, load_c1};
use crate::proof_kind::{ensure_2kib, parse_seal_proof};

/// A compressed Groth16 proof: A (G1, 48 bytes), B (G2, 96), C (G1, 48).
pub const PROOF_BYTES: usize = 192;

fn rng_from(args: &Args) -> Result<ChaCha20Rng> {
    Ok(ChaCha20Rng::seed_from_u64(args.opt_u64("rng-seed")?.unwrap_or(0)))
}

fn read_vk(path: &Path) -> Result<VerifyingKey<Bls12>> {
    let f = fs::File::open(path).with_context(|| format!("opening --vk {:?}", path))?;
    VerifyingKey::<Bls12>::read(BufReader::new(f))
        .with_context(|| format!("{:?} is not a bellperson verifying key", path))
}

fn read_params(path: &Path) -> Result<Parameters<Bls12>> {
    let f = fs::File::open(path).with_context(|| format!("opening --params {:?}", path))?;
    // checked = true: every point is validated on the curve and in its subgroup.
    Parameters::<Bls12>::read(BufReader::new(f), true)
        .with_context(|| format!("{:?} is not a bellperson parameter file", path))
}

/// `setup --registered-proof ID --params-out FILE --vk-out FILE [--rng-seed N]`
pub fn setup(args: &Args) -> Result<serde_json::Value> {
    let proof = parse_seal_proof(&args.req("registered-proof")?)?;
    ensure_2kib(proof, args.opt_u64("sector-size")?)?;
    let params_out = args.path("params-out")?;
    let vk_out = args.path("vk-out")?;
    let mut rng = rng_from(args)?;
    args.finish()?;
    let t = Instant::now();
    let params = generate_random_parameters::<Bls12, _, _>(blank_circuit(proof)?, &mut rng)?;
    let seconds = t.elapsed().as_secs_f64();
    let mut w = std::io::BufWriter::new(fs::File::create(&params_out)?);
    params.write(&mut w)?;
    drop(w);
    let mut w = std::io::BufWriter::new(fs::File::create(&vk_out)?);
    params.vk.write(&mut w)?;
    drop(w);
    Ok(json!({
        "registered_proof": format!("{:?}", proof),
        "params": params_out.display().to_string(),
        "vk": vk_out.display().to_string(),
        "num_public_inputs": params.vk.ic.len() - 1,
        "setup_seconds": seconds,
    }))
}

/// `prove --c1 FILE --params FILE --out PROOF [--rng-seed N]`: one proof per partition,
/// concatenated in partition order (filecoin-proofs' MultiProof bytes).
pub fn prove(args: &Args) -> Result<serde_json::Value> {
    let c1_path = args.path("c1")?;
    let params_path = args.path("params")?;
    let out = args.opt_path("out");
    let mut rng = rng_from(args)?;
    args.finish()?;
    let instance = instance_from_c1(load_c1(&c1_path)?)?;
    let t = Instant::now();
    let params = read_params(&params_path)?;
    let load_seconds = t.elapsed().as_secs_f64();
    let pvk = prepare_verifying_key(&params.vk);
    let mut bytes = Vec::new();
    let mut prove_seconds = Vec::new();
    let mut valid = true;
    for k in 0..instance.partitions() {
        let circuit = instance.circuit(k)?;
        let t = Instant::now();
        let proof = create_random_proof(circuit, &params, &mut rng)?;
        prove_seconds.push(t.elapsed().as_secs_f64());
        valid &= verify_proof(&pvk, &proof, &instance.public_inputs(k)?)?;
        proof.write(&mut bytes)?;
    }
    if let Some(p) = &out {
        fs::write(p, &bytes)?;
    }
    Ok(json!({
        "partitions": instance.partitions(),
        "params_load_seconds": load_seconds,
        "prove_seconds": prove_seconds,
        "threads": rayon_threads(),
        "verifies": valid,
        "proof": out.map(|p| p.display().to_string()),
        "proof_hex": hex::encode(&bytes),
    }))
}

fn rayon_threads() -> usize {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
}

/// The statement a seal proof is checked against.
struct SealStatement {
    proof: RegisteredSealProof,
    comm_r: [u8; 32],
    comm_d: [u8; 32],
    prover_id: [u8; 32],
    sector_id: u64,
    ticket: [u8; 32],
    seed: [u8; 32],
}

/// Fields come from `--c1` when given (registered proof, comm_r, comm_d, ticket, seed),
/// and any explicit option overrides them; prover id and sector id are always explicit.
fn statement(args: &Args) -> Result<SealStatement> {
    let c1 = match args.opt_path("c1") {
        Some(p) => Some(load_c1(&p)?),
        None => None,
    };
    let proof = match args.opt("registered-proof") {
        Some(t) => parse_seal_proof(&t)?,
        None => c1
            .as_ref()
            .map(|c| c.registered_proof)
            .ok_or_else(|| anyhow::anyhow!("missing --registered-proof (or --c1)"))?,
    };
    ensure_2kib(proof, args.opt_u64("sector-size")?)?;
    let pick = |key: &str, from_c1: Option<[u8; 32]>| -> Result<[u8; 32]> {
        match args.opt_hex32(key)? {
            Some(v) => Ok(v),
            None => from_c1.ok_or_else(|| anyhow::anyhow!("missing --{} (or --c1)", key)),
        }
    };
    Ok(SealStatement {
        proof,
        comm_r: pick("comm-r", c1.as_ref().map(|c| c.comm_r))?,
        comm_d: pick("comm-d", c1.as_ref().map(|c| c.comm_d))?,
        ticket: pick("ticket", c1.as_ref().map(|c| c.ticket))?,
        seed: pick("seed", c1.as_ref().map(|c| c.seed))?,
        prover_id: args.hex32("prover-id")?,
        sector_id: args.u64("sector-id")?,
    })
}

/// `verify-seal --vk FILE --proof FILE --prover-id HEX --sector-id N (--c1 FILE | --registered-proof ID
///  --comm-r HEX --comm-d HEX --ticket HEX --seed HEX) [--method bellperson|filecoin-proofs]`
pub fn verify_seal(args: &Args, param_cache: &Path) -> Result<(serde_json::Value, bool)> {
    let vk_path = args.path("vk")?;
    let proof_path = args.path("proof")?;
    let method = args.opt("method").unwrap_or_else(|| "bellperson".to_string());
    let st = statement(args)?;
    args.finish()?;

    let proof_bytes = fs::read(&proof_path).with_context(|| format!("reading --proof {:?}", proof_path))?;
    // Parsed first in either method: filecoin-proofs would otherwise regenerate random keys
    // in place of a file it cannot read.
    let vk = read_vk(&vk_path)?;
    let partitions = usize::from(st.proof.partitions());
    ensure!(
        proof_bytes.len() == partitions * PROOF_BYTES,
        "--proof holds {} bytes; {:?} needs {} partition proof(s) of {} bytes",
        proof_bytes.len(),
        st.proof,
        partitions,
        PROOF_BYTES
    );
    // filecoin-proofs' generate_public_inputs, one vector per partition.
    let inputs = seal::get_seal_inputs(
        st.proof,
        st.comm_r,
        st.comm_d,
        st.prover_id,
        SectorId::from(st.sector_id),
        st.ticket,
        st.seed,
    )?;
    ensure!(inputs.len() == partitions, "{} input vectors for {} partitions", inputs.len(), partitions);
    for v in &inputs {
        ensure!(
            v.len() + 1 == vk.ic.len(),
            "the verifying key takes {} public inputs; this statement has {}",
            vk.ic.len() - 1,
            v.len()
        );
    }
    let valid = match method.as_str() {
        "bellperson" => {
            let pvk = prepare_verifying_key(&vk);
            let mut ok = true;
            for (k, chunk) in proof_bytes.chunks(PROOF_BYTES).enumerate() {
                let proof = Proof::<Bls12>::read(chunk)
                    .with_context(|| format!("partition {} proof does not decode", k))?;
                ok &= verify_proof(&pvk, &proof, &inputs[k])?;
            }
            ok
        }
        "filecoin-proofs" => {
            // verify_seal reads the key from the parameter cache under its circuit's file name;
            // the manifest check is off (FIL_PROOFS_VERIFY_PRODUCTION_PARAMS=false).
            let cached = st.proof.cache_verifying_key_path()?;
            ensure!(
                cached.starts_with(param_cache),
                "parameter cache {:?} is not the oracle's {:?}",
                cached,
                param_cache
            );
            fs::copy(&vk_path, &cached)?;
            seal::verify_seal(
                st.proof,
                st.comm_r,
                st.comm_d,
                st.prover_id,
                SectorId::from(st.sector_id),
                st.ticket,
                st.seed,
                &proof_bytes,
            )?
        }
        other => anyhow::bail!("--method must be bellperson or filecoin-proofs, got {:?}", other),
    };
    let inputs_hex = hex_inputs(&inputs);
    Ok((
        json!({
            "valid": valid,
            "method": method,
            "registered_proof": format!("{:?}", st.proof),
            "public_inputs": inputs_hex,
        }),
        valid,
    ))
}

/// `seal-inputs` (verify-seal's statement options): filecoin-proofs' public inputs, per partition.
pub fn seal_inputs(args: &Args) -> Result<serde_json::Value> {
    let st = statement(args)?;
    args.finish()?;
    let inputs = seal::get_seal_inputs(
        st.proof,
        st.comm_r,
        st.comm_d,
        st.prover_id,
        SectorId::from(st.sector_id),
        st.ticket,
        st.seed,
    )?;
    Ok(json!({
        "registered_proof": format!("{:?}", st.proof),
        "public_inputs": hex_inputs(&inputs),
    }))
}

fn hex_inputs(inputs: &[Vec<Fr>]) -> Vec<Vec<String>> {
    inputs
        .iter()
        .map(|v| v.iter().map(|x| hex::encode(x.to_bytes_le())).collect())
        .collect()
}

/// `param-paths --registered-proof ID`: the file names filecoin-proofs looks for.
pub fn param_paths(args: &Args) -> Result<serde_json::Value> {
    let proof = parse_seal_proof(&args.req("registered-proof")?)?;
    args.finish()?;
    Ok(json!({
        "registered_proof": format!("{:?}", proof),
        "circuit_identifier": proof.circuit_identifier()?,
        "params": proof.cache_params_path()?.display().to_string(),
        "vk": proof.cache_verifying_key_path()?.display().to_string(),
    }))
}
