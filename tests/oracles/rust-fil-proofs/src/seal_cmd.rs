//! `seal`: rust-fil-proofs' own sealer on one 2 KiB or 8 MiB sector (PC1, PC2, C1).

use std::fs;
use std::io::Cursor;
use std::path::Path;

use anyhow::{ensure, Context, Result};
use filecoin_proofs_api::{fr32, seal};
use filecoin_proofs_api::{ApiFeature, SectorId, UnpaddedBytesAmount};
use serde_json::json;

use crate::args::Args;
use crate::proof_kind::{ensure_size, parse_seal_proof, seal_proof_id, SEALABLE};

/// Turns the caller's bytes into the one piece that fills a sector of `padded` bytes.
///
/// `padded / 128 * 127` bytes are raw data (Fr32-padded here: 254 data bits in each 32-byte
/// node); `padded` bytes are an already padded sector, accepted only if it is valid Fr32 (it
/// unpads and pads back to itself).
fn unpadded_piece(data: &[u8], padded: usize) -> Result<Vec<u8>> {
    let unpadded = padded / 128 * 127;
    if data.len() == unpadded {
        return Ok(data.to_vec());
    }
    ensure!(
        data.len() == padded,
        "--data must hold {} raw bytes or {} Fr32-padded bytes for a {}-byte sector, got {}",
        unpadded,
        padded,
        padded,
        data.len()
    );
    let mut raw = Vec::with_capacity(unpadded);
    fr32::write_unpadded(data, &mut raw, 0, unpadded).context("unpadding the padded --data")?;
    ensure!(raw.len() == unpadded, "unpadding gave {} bytes", raw.len());
    Ok(raw)
}

pub fn run(args: &Args) -> Result<serde_json::Value> {
    let proof = parse_seal_proof(&args.req("registered-proof")?)?;
    ensure_size(proof, args.opt_u64("sector-size")?, &SEALABLE)?;
    let padded = u64::from(proof.sector_size()) as usize;
    let prover_id = args.hex32("prover-id")?;
    let sector_id = args.u64("sector-id")?;
    let ticket = args.hex32("ticket")?;
    let seed = args.hex32("seed")?;
    let data_path = args.path("data")?;
    let out = args.path("out")?;
    args.finish()?;

    let data = fs::read(&data_path).with_context(|| format!("reading --data {:?}", data_path))?;
    let raw = unpadded_piece(&data, padded)?;

    fs::create_dir_all(&out).with_context(|| format!("creating --out {:?}", out))?;
    let cache = out.join("cache");
    fs::create_dir_all(&cache)?;
    let staged = out.join("staged.bin");
    let sealed = out.join("sealed.bin");

    // add_piece writes the Fr32-padded piece into the staged sector and returns its comm_p.
    let mut staged_bytes = Cursor::new(Vec::new());
    let (piece, _) = seal::add_piece(
        proof,
        Cursor::new(&raw),
        &mut staged_bytes,
        UnpaddedBytesAmount(raw.len() as u64),
        &[],
    )?;
    let staged_bytes = staged_bytes.into_inner();
    ensure!(
        staged_bytes.len() == padded,
        "staged sector is {} bytes",
        staged_bytes.len()
    );
    if data.len() == padded {
        ensure!(
            staged_bytes == data,
            "the padded --data is not valid Fr32 (its top two bits per 32-byte node must be clear)"
        );
    }
    fs::write(&staged, &staged_bytes)?;
    fs::write(&sealed, b"")?; // PC1 requires the replica file to exist.
    let pieces = [piece.clone()];

    let pc1 = seal::seal_pre_commit_phase1(
        proof,
        &cache,
        &staged,
        &sealed,
        prover_id,
        SectorId::from(sector_id),
        ticket,
        &pieces,
    )
    .context("seal_pre_commit_phase1")?;
    let pc2 = seal::seal_pre_commit_phase2(pc1, &cache, &sealed).context("seal_pre_commit_phase2")?;
    if proof.feature_enabled(ApiFeature::SyntheticPoRep) {
        seal::generate_synth_proofs(
            &cache,
            &sealed,
            prover_id,
            SectorId::from(sector_id),
            ticket,
            pc2.clone(),
            &pieces,
        )
        .context("generate_synth_proofs")?;
    }
    let comm_r = pc2.comm_r;
    let comm_d = pc2.comm_d;
    let c1 = seal::seal_commit_phase1(
        &cache,
        &sealed,
        prover_id,
        SectorId::from(sector_id),
        ticket,
        seed,
        pc2,
        &pieces,
    )
    .context("seal_commit_phase1")?;
    // filecoin-ffi hands this output across its C boundary as serde_json::to_vec bytes.
    let c1_bytes = serde_json::to_vec(&c1)?;
    let c1_path = out.join("c1.json");
    fs::write(&c1_path, &c1_bytes)?;

    let replica_id: blstrs::Scalar = c1.replica_id.into();
    let summary = json!({
        "registered_proof": format!("{:?}", proof),
        "registered_proof_id": seal_proof_id(proof),
        "sector_size": u64::from(proof.sector_size()),
        "prover_id": hex::encode(prover_id),
        "sector_id": sector_id,
        "ticket": hex::encode(ticket),
        "seed": hex::encode(seed),
        "comm_d": hex::encode(comm_d),
        "comm_r": hex::encode(comm_r),
        "comm_p": hex::encode(piece.commitment),
        "replica_id": hex::encode(replica_id.to_bytes_le()),
        "staged": rel(&out, &staged),
        "replica": rel(&out, &sealed),
        "cache": rel(&out, &cache),
        "c1": rel(&out, &c1_path),
    });
    fs::write(out.join("seal.json"), serde_json::to_vec_pretty(&summary)?)?;
    Ok(summary)
}

fn rel(base: &Path, p: &Path) -> String {
    p.strip_prefix(base).unwrap_or(p).display().to_string()
}
