//! `dump-r1cs`: synthesize one PoRep partition into the recording constraint system.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{ensure, Result};
use bellperson::util_cs::bench_cs::BenchCS;
use bellperson::{Circuit, ConstraintSystem};
use blstrs::Scalar as Fr;
use serde_json::json;

use crate::args::Args;
use crate::porep::{instance_from_c1, load_c1};
use crate::recording_cs::RecordingCS;

/// Synthesizes `circuit` after input 0 = ONE, as bellperson's prover does (the prover then
/// appends one `input_i * 0 = 0` row per input; those rows are NOT in the dump).
pub fn record<C: Circuit<Fr> + Clone>(circuit: C) -> Result<(RecordingCS, f64, [usize; 3])> {
    let t = Instant::now();
    let mut cs = RecordingCS::new();
    circuit.clone().synthesize(&mut cs)?;
    let seconds = t.elapsed().as_secs_f64();
    // bellperson's own counting CS on the same circuit: the recording must agree with it.
    let mut bench = BenchCS::<Fr>::new();
    circuit.synthesize(&mut bench)?;
    let counts = [bench.num_inputs(), 0, bench.num_constraints()];
    ensure!(
        counts[0] == cs.inputs.len() && counts[2] == cs.num_constraints,
        "recording CS ({} inputs, {} constraints) disagrees with bellperson's BenchCS ({}, {})",
        cs.inputs.len(),
        cs.num_constraints,
        counts[0],
        counts[2]
    );
    let _ = bench.get_root();
    Ok((cs, seconds, counts))
}

/// Writes the files and builds the JSON summary shared by the PoRep and PoSt dumps.
pub fn write_and_summarize(
    cs: &RecordingCS,
    out: Option<&Path>,
    witness: Option<&Path>,
    expected_inputs: &[Fr],
    synth_seconds: f64,
) -> Result<serde_json::Value> {
    if let Some(p) = out {
        cs.write_r1cs(p)?;
    }
    if let Some(p) = witness {
        cs.write_witness(p)?;
    }
    let inputs_hex: Vec<String> = cs.inputs[1..]
        .iter()
        .map(|v| hex::encode(v.to_bytes_le()))
        .collect();
    let matches = cs.inputs.len() == expected_inputs.len() + 1
        && cs.inputs[1..].iter().zip(expected_inputs).all(|(a, b)| a == b);
    Ok(json!({
        "num_inputs": cs.inputs.len(),
        "num_aux": cs.aux.len(),
        "num_constraints": cs.num_constraints,
        "nnz": cs.nnz(),
        "num_coeffs": cs.num_coeffs(),
        "satisfied": cs.num_unsatisfied == 0,
        "num_unsatisfied": cs.num_unsatisfied,
        "first_unsatisfied": cs.first_unsatisfied.as_ref().map(|(i, name)| json!({"index": i, "annotation": name})),
        "public_inputs": inputs_hex,
        "public_inputs_match_verifier": matches,
        "synthesis_seconds": synth_seconds,
        "r1cs": out.map(|p| p.display().to_string()),
        "witness": witness.map(|p| p.display().to_string()),
    }))
}

/// Output paths: `--out FILE` (R1CS) and `--witness FILE` (default FILE.witness);
/// `--counts-only` writes neither.
pub fn out_paths(args: &Args) -> Result<(Option<PathBuf>, Option<PathBuf>)> {
    let counts_only = args.flag("counts-only");
    let out = args.opt_path("out");
    let witness = args.opt_path("witness");
    if counts_only {
        ensure!(out.is_none() && witness.is_none(), "--counts-only takes no --out/--witness");
        return Ok((None, None));
    }
    let out = out.ok_or_else(|| anyhow::anyhow!("missing --out (or give --counts-only)"))?;
    let witness = witness.unwrap_or_else(|| {
        let mut s = out.clone().into_os_string();
        s.push(".witness");
        PathBuf::from(s)
    });
    Ok((Some(out), Some(witness)))
}

pub fn run(args: &Args) -> Result<(serde_json::Value, bool)> {
    let c1_path = args.path("c1")?;
    let k = args.opt_u64("partition")?.unwrap_or(0) as usize;
    let (out, witness) = out_paths(args)?;
    args.finish()?;

    let instance = instance_from_c1(load_c1(&c1_path)?)?;
    let circuit = instance.circuit(k)?;
    let expected = instance.public_inputs(k)?;
    let (cs, seconds, _) = record(circuit)?;
    let mut summary = write_and_summarize(&cs, out.as_deref(), witness.as_deref(), &expected, seconds)?;
    summary["circuit"] = json!("StackedCircuit");
    summary["registered_proof"] = json!(format!("{:?}", instance.registered_proof));
    summary["partition"] = json!(k);
    summary["partitions"] = json!(instance.partitions());
    summary["challenges_in_partition"] = json!(instance.vanilla_proofs[k].len());
    let ok = cs.num_unsatisfied == 0 && summary["public_inputs_match_verifier"] == json!(true);
    Ok((summary, ok))
}
