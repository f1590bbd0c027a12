//! `dump-r1cs-post`: the Fallback PoSt circuit (window or winning) of given vanilla proofs,
//! recorded as `dump-r1cs` records the PoRep circuit.

use anyhow::Result;
use serde_json::json;

use crate::args::Args;
use crate::dump_cmd::{out_paths, record, write_and_summarize};
use crate::post::{post_proof_from, post_proof_id, read_vanilla, PostInstance};

/// `dump-r1cs-post --kind window|winning --vanilla FILE[,FILE...] --randomness HEX32
///  --prover-id HEX32 [--registered-proof ID] [--partition K] (--out FILE [--witness FILE] | --counts-only)`
pub fn run(args: &Args) -> Result<(serde_json::Value, bool)> {
    let proof = post_proof_from(args)?;
    let vanilla = args.paths("vanilla")?;
    let randomness = args.hex32("randomness")?;
    let prover_id = args.hex32("prover-id")?;
    let k = args.opt_u64("partition")?.unwrap_or(0) as usize;
    let (out, witness) = out_paths(args)?;
    args.finish()?;

    let instance = PostInstance::new(proof, &randomness, &prover_id, &read_vanilla(&vanilla)?)?;
    let circuit = instance.circuit(k)?;
    let expected = instance.public_inputs(k)?;
    let (cs, seconds, _) = record(circuit)?;
    let mut summary = write_and_summarize(&cs, out.as_deref(), witness.as_deref(), &expected, seconds)?;
    let vp = &instance.params.pp.vanilla_params;
    summary["circuit"] = json!("FallbackPoStCircuit");
    summary["registered_post_proof"] = json!(format!("{:?}", proof));
    summary["registered_post_proof_id"] = json!(post_proof_id(proof));
    summary["api_version"] = json!(format!("{}", proof.version()));
    summary["partition"] = json!(k);
    summary["partitions"] = json!(instance.partitions.len());
    summary["sector_count"] = json!(vp.sector_count);
    summary["challenge_count"] = json!(vp.challenge_count);
    let ok = cs.num_unsatisfied == 0 && summary["public_inputs_match_verifier"] == json!(true);
    Ok((summary, ok))
}
