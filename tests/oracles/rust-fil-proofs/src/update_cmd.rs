//! `update`, `verify-update`: rust-fil-proofs' own sector update (SnapDeals) of a 2 KiB sector
//! sealed by `seal`, its vanilla partition proofs, the EmptySectorUpdate circuit's R1CS, and
//! filecoin-proofs' verifier of an update proof.

use std::fs;
use std::io::Cursor;
use std::path::Path;
use std::time::Instant;

use anyhow::{ensure, Context, Result};
use bellperson::util_cs::bench_cs::BenchCS;
use bellperson::Circuit;
use blstrs::Scalar as Fr;
use filecoin_proofs::constants::SectorShape2KiB;
use filecoin_proofs_api::update as api;
use filecoin_proofs_api::{seal, PieceInfo, RegisteredSealProof, RegisteredUpdateProof, UnpaddedBytesAmount};
use serde_json::json;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::parameter_cache::{parameter_cache_verifying_key_path, CacheableParameters};
use storage_proofs_update::{
    constants::h_default, EmptySectorUpdate, EmptySectorUpdateCircuit, EmptySectorUpdateCompound,
    PartitionProof, PublicInputs, PublicParams,
};

use crate::args::{parse_hex32, Args};
use crate::dump_cmd::write_and_summarize;
use crate::recording_cs::RecordingCS;
use crate::groth16_cmd::PROOF_BYTES;

type Tree = SectorShape2KiB;
type Compound = EmptySectorUpdateCompound<Tree>;

const PROOF: RegisteredUpdateProof = RegisteredUpdateProof::StackedDrg2KiBV1;
const UNPADDED_2KIB: usize = 2032;
const PADDED_2KIB: usize = 2048;

/// The new data as one full-sector piece: 2032 raw bytes, or 2048 Fr32-padded ones (checked).
fn stage(data: &[u8], staged: &Path) -> Result<PieceInfo> {
    let raw = match data.len() {
        UNPADDED_2KIB => data.to_vec(),
        PADDED_2KIB => {
            let mut raw = Vec::with_capacity(UNPADDED_2KIB);
            filecoin_proofs_api::fr32::write_unpadded(data, &mut raw, 0, UNPADDED_2KIB)?;
            raw
        }
        n => anyhow::bail!("--data must hold {} raw or {} padded bytes, got {}", UNPADDED_2KIB, PADDED_2KIB, n),
    };
    let mut out = Cursor::new(Vec::new());
    let (piece, _) = seal::add_piece(
        RegisteredSealProof::StackedDrg2KiBV1_1,
        Cursor::new(&raw),
        &mut out,
        UnpaddedBytesAmount(UNPADDED_2KIB as u64),
        &[],
    )?;
    let padded = out.into_inner();
    if data.len() == PADDED_2KIB {
        ensure!(padded == data, "the 2048-byte --data is not valid Fr32");
    }
    fs::write(staged, &padded)?;
    Ok(piece)
}

fn hex32(v: &serde_json::Value, key: &str) -> Result<[u8; 32]> {
    let s = v[key].as_str().with_context(|| format!("seal.json has no {:?}", key))?;
    parse_hex32(s)
}

fn public_params() -> PublicParams {
    PublicParams::from_sector_size(u64::from(PROOF.sector_size()))
}

/// `update --sector DIR --data FILE --out DIR [--partition K] (--r1cs FILE [--witness FILE] | --counts-only)`
pub fn run(args: &Args) -> Result<(serde_json::Value, bool)> {
    let sector = args.path("sector")?;
    let data_path = args.path("data")?;
    let out = args.path("out")?;
    let k = args.opt_u64("partition")?.unwrap_or(0) as usize;
    let counts_only = args.flag("counts-only");
    let r1cs = args.opt_path("r1cs");
    let witness = args.opt_path("witness");
    args.finish()?;
    let (r1cs, witness) = match (counts_only, r1cs) {
        (true, None) if witness.is_none() => (None, None),
        (false, Some(p)) => {
            let w = witness.unwrap_or_else(|| {
                let mut s = p.clone().into_os_string();
                s.push(".witness");
                s.into()
            });
            (Some(p), Some(w))
        }
        _ => anyhow::bail!("give --r1cs FILE [--witness FILE] or --counts-only"),
    };

    let summary: serde_json::Value = serde_json::from_slice(&fs::read(sector.join("seal.json"))?)
        .context("reading the sealed sector's seal.json (the seal subcommand's --out)")?;
    let comm_r_old = hex32(&summary, "comm_r")?;
    let sector_key = sector.join("sealed.bin");
    let sector_cache = sector.join("cache");

    fs::create_dir_all(&out)?;
    let new_cache = out.join("cache");
    fs::create_dir_all(&new_cache)?;
    let staged = out.join("staged.bin");
    let replica = out.join("update.bin");
    let data = fs::read(&data_path).with_context(|| format!("reading --data {:?}", data_path))?;
    let piece = stage(&data, &staged)?;
    fs::write(&replica, vec![0u8; PADDED_2KIB])?; // encode_into writes into an existing file
    let enc = api::empty_sector_update_encode_into(
        PROOF, &replica, &new_cache, &sector_key, &sector_cache, &staged, &[piece],
    )
    .context("empty_sector_update_encode_into")?;

    let proofs = api::generate_partition_proofs(
        PROOF, comm_r_old, enc.comm_r_new, enc.comm_d_new, &sector_key, &sector_cache, &replica, &new_cache,
    )
    .context("generate_partition_proofs")?;
    let mut files = Vec::new();
    for (i, p) in proofs.iter().enumerate() {
        let name = format!("partition-{}.bin", i);
        fs::write(out.join(&name), &p.0)?;
        files.push(name);
    }
    let vanilla_ok = api::verify_partition_proofs(PROOF, &proofs, comm_r_old, enc.comm_r_new, enc.comm_d_new)?;

    let decoded = out.join("decoded.bin");
    fs::write(&decoded, vec![0u8; PADDED_2KIB])?;
    api::empty_sector_update_decode_from(PROOF, &decoded, &replica, &sector_key, &sector_cache, enc.comm_d_new)
        .context("empty_sector_update_decode_from")?;

    ensure!(k < proofs.len(), "--partition {} out of range: {} partition(s)", k, proofs.len());
    let pp = public_params();
    let pub_inputs = PublicInputs {
        k,
        comm_r_old: filecoin_proofs::as_safe_commitment(&comm_r_old, "comm_r_old")?,
        comm_d_new: filecoin_proofs::as_safe_commitment(&enc.comm_d_new, "comm_d_new")?,
        comm_r_new: filecoin_proofs::as_safe_commitment(&enc.comm_r_new, "comm_r_new")?,
        h: h_default(pp.sector_nodes),
    };
    let proof: PartitionProof<Tree> = bincode::deserialize(&proofs[k].0)?;
    let circuit = || -> Result<EmptySectorUpdateCircuit<Tree>> {
        Ok(<Compound as CompoundProof<EmptySectorUpdate<Tree>, _>>::circuit(&pub_inputs, (), &proof, &pp, Some(k))?)
    };
    let expected = <Compound as CompoundProof<EmptySectorUpdate<Tree>, _>>::generate_public_inputs(
        &pub_inputs, &pp, Some(k),
    )?;
    // As dump-r1cs records (the circuit is not Clone, so it is built twice): input 0 = ONE is
    // allocated by the recording CS, and bellperson's own BenchCS must count the same.
    let t = Instant::now();
    let mut cs = RecordingCS::new();
    circuit()?.synthesize(&mut cs)?;
    let seconds = t.elapsed().as_secs_f64();
    let mut bench = BenchCS::<Fr>::new();
    circuit()?.synthesize(&mut bench)?;
    ensure!(
        bench.num_inputs() == cs.inputs.len() && bench.num_constraints() == cs.num_constraints,
        "recording CS ({} inputs, {} constraints) disagrees with bellperson's BenchCS ({}, {})",
        cs.inputs.len(), cs.num_constraints, bench.num_inputs(), bench.num_constraints()
    );
    let dump = write_and_summarize(&cs, r1cs.as_deref(), witness.as_deref(), &expected, seconds)?;
    let ok = cs.num_unsatisfied == 0 && dump["public_inputs_match_verifier"] == json!(true) && vanilla_ok;
    let value = json!({
        "registered_update_proof": format!("{:?}", PROOF),
        "comm_r_old": hex::encode(comm_r_old),
        "comm_r_new": hex::encode(enc.comm_r_new),
        "comm_r_last_new": hex::encode(enc.comm_r_last_new),
        "comm_d_new": hex::encode(enc.comm_d_new),
        "h": pub_inputs.h,
        "partitions": proofs.len(),
        "partition_proofs": files,
        "vanilla_verifies": vanilla_ok,
        "staged": "staged.bin",
        "replica": "update.bin",
        "decoded": "decoded.bin",
        "partition": k,
        "dump": dump,
    });
    fs::write(out.join("update.json"), serde_json::to_vec_pretty(&value)?)?;
    Ok((value, ok))
}

/// `verify-update --vk FILE --proof FILE --comm-r-old HEX --comm-r-new HEX --comm-d-new HEX`:
/// filecoin-proofs-api's `verify_empty_sector_update_proof` with the given key.
pub fn verify(args: &Args, param_cache: &Path) -> Result<(serde_json::Value, bool)> {
    let vk_path = args.path("vk")?;
    let proof_path = args.path("proof")?;
    let comm_r_old = args.hex32("comm-r-old")?;
    let comm_r_new = args.hex32("comm-r-new")?;
    let comm_d_new = args.hex32("comm-d-new")?;
    args.finish()?;
    let proof = fs::read(&proof_path).with_context(|| format!("reading --proof {:?}", proof_path))?;
    // Parsed first: filecoin-proofs would otherwise generate fresh random keys in place of a
    // file it cannot read.
    let f = fs::File::open(&vk_path).with_context(|| format!("opening --vk {:?}", vk_path))?;
    let vk = bellperson::groth16::VerifyingKey::<blstrs::Bls12>::read(std::io::BufReader::new(f))
        .with_context(|| format!("{:?} is not a bellperson verifying key", vk_path))?;
    ensure!(vk.ic.len() == 5, "an update verifying key takes 4 public inputs, this one {}", vk.ic.len() - 1);
    let partitions = usize::from(PROOF.partitions());
    ensure!(
        proof.len() == partitions * PROOF_BYTES,
        "--proof holds {} bytes; {:?} needs {} partition proof(s) of {} bytes",
        proof.len(), PROOF, partitions, PROOF_BYTES
    );
    // The verifier reads the key under the update circuit's cache identifier. (filecoin-proofs-api's
    // RegisteredUpdateProof::cache_verifying_key_path names the PoRep circuit's file instead.)
    let id = <Compound as CacheableParameters<EmptySectorUpdateCircuit<Tree>, PublicParams>>::cache_identifier(
        &public_params(),
    );
    let cached = parameter_cache_verifying_key_path(&id);
    ensure!(cached.starts_with(param_cache), "parameter cache {:?} is not the oracle's {:?}", cached, param_cache);
    fs::copy(&vk_path, &cached)?;
    let valid = api::verify_empty_sector_update_proof(PROOF, &proof, comm_r_old, comm_r_new, comm_d_new)?;
    Ok((json!({"valid": valid, "registered_update_proof": format!("{:?}", PROOF), "circuit_identifier": id,
               "vk": cached.display().to_string()}), valid))
}
