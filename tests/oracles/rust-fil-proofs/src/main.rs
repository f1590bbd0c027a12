//! cuzk-fil-oracle: rust-fil-proofs' and bellperson's own code behind a file-and-exit-code CLI,
//! so cuzk's PoRep/PoSt can be checked against Filecoin's implementation. See README.md.
//!
//! Exit status: 0 success; 1 a negative verdict (proof invalid, constraints unsatisfied);
//! 2 an error (bad arguments, unreadable file, proofs-library failure), told on stderr.

mod args;
mod count_cmd;
mod dump_cmd;
mod env;
mod groth16_cmd;
mod porep;
mod post;
mod post_cmd;
mod post_vanilla_cmd;
mod post_verify_cmd;
mod proof_kind;
mod recording_cs;
mod seal_cmd;
mod update_cmd;

use std::process::ExitCode;

use anyhow::{anyhow, Context, Result};

use args::Args;

const USAGE: &str = "usage: cuzk-fil-oracle --tmp DIR <subcommand> [--option value]...

subcommands (each prints one JSON object on stdout):
  seal          --registered-proof ID --prover-id HEX32 --sector-id N --ticket HEX32
                --seed HEX32 --data FILE --out DIR [--sector-size 2048|8388608]
  dump-r1cs     --c1 FILE [--partition K] (--out FILE [--witness FILE] | --counts-only)
  post-vanilla  --kind window|winning --sectors DIR[,DIR...] (seal's --out) --randomness HEX32
                --prover-id HEX32 --out DIR [--registered-proof ID]
  dump-r1cs-post --kind window|winning --vanilla FILE[,FILE...] --randomness HEX32
                --prover-id HEX32 [--registered-proof ID] [--partition K]
                (--out FILE [--witness FILE] | --counts-only)
  verify-post   --kind window|winning --vk FILE --proof FILE --randomness HEX32
                --prover-id HEX32 --replicas ID:HEX32[,...] [--registered-proof ID]
  count-blank   --registered-proof ID   (a seal proof; any sector size)
  setup         --registered-proof ID --params-out FILE --vk-out FILE [--rng-seed N]
  prove         --c1 FILE --params FILE [--out PROOF] [--rng-seed N]   (alias: prove-time)
  verify-seal   --vk FILE --proof FILE --prover-id HEX32 --sector-id N
                (--c1 FILE | --registered-proof ID --comm-r HEX32 --comm-d HEX32
                 --ticket HEX32 --seed HEX32) [--method bellperson|filecoin-proofs]
  seal-inputs   (verify-seal's statement options, no --vk/--proof)
  param-paths   --registered-proof ID
  update        --sector DIR (seal's --out) --data FILE --out DIR [--partition K]
                (--r1cs FILE [--witness FILE] | --counts-only)
  verify-update --vk FILE --proof FILE --comm-r-old HEX32 --comm-r-new HEX32 --comm-d-new HEX32
  version

--tmp DIR (before the subcommand) holds rust-fil-proofs' parameter, parent and other caches.
Exit status: 0 ok, 1 negative verdict (invalid proof / unsatisfied constraints), 2 error.";

fn versions() -> serde_json::Value {
    serde_json::json!({
        "oracle": env!("CARGO_PKG_VERSION"),
        "filecoin-proofs": "19.1.0",
        "filecoin-proofs-api": "19.1.0",
        "storage-proofs-core": "19.1.0",
        "storage-proofs-porep": "19.1.0",
        "storage-proofs-post": "19.1.0",
        "bellperson": "0.27.0",
        "blstrs": "0.7.1",
        "ff": "0.13.0",
    })
}

fn run() -> Result<bool> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let cwd = std::env::current_dir()?;
    let mut rest: &[String] = &argv;
    let mut tmp = None;
    if rest.first().map(String::as_str) == Some("--tmp") {
        tmp = Some(cwd.join(rest.get(1).ok_or_else(|| anyhow!("--tmp needs a value"))?));
        rest = &rest[2..];
    }
    let (cmd, rest) = rest
        .split_first()
        .ok_or_else(|| anyhow!("no subcommand given\n{}", USAGE))?;
    if cmd == "version" {
        println!("{}", versions());
        return Ok(true);
    }
    if cmd == "help" || cmd == "--help" || cmd == "-h" {
        println!("{}", USAGE);
        return Ok(true);
    }
    let tmp = tmp.ok_or_else(|| anyhow!("--tmp DIR must come before the subcommand\n{}", USAGE))?;
    let param_cache = env::point_caches(&tmp)?;
    // rust-fil-proofs also reads ./rust-fil-proofs.config.toml: run where none can be.
    std::env::set_current_dir(&tmp).with_context(|| format!("entering --tmp {:?}", tmp))?;

    let flags = ["counts-only"];
    let args = Args::parse(rest, &flags, cwd)?;
    let (value, ok) = match cmd.as_str() {
        "seal" => (seal_cmd::run(&args)?, true),
        "dump-r1cs" => dump_cmd::run(&args)?,
        "dump-r1cs-post" => post_cmd::run(&args)?,
        "post-vanilla" => post_vanilla_cmd::run(&args)?,
        "verify-post" => post_verify_cmd::run(&args, &param_cache)?,
        "count-blank" => (count_cmd::run(&args)?, true),
        "setup" => (groth16_cmd::setup(&args)?, true),
        "prove" | "prove-time" => {
            let v = groth16_cmd::prove(&args)?;
            let ok = v["verifies"] == serde_json::json!(true);
            (v, ok)
        }
        "verify-seal" => groth16_cmd::verify_seal(&args, &param_cache)?,
        "seal-inputs" => (groth16_cmd::seal_inputs(&args)?, true),
        "param-paths" => (groth16_cmd::param_paths(&args)?, true),
        "update" => update_cmd::run(&args)?,
        "verify-update" => update_cmd::verify(&args, &param_cache)?,
        other => return Err(anyhow!("unknown subcommand {:?}\n{}", other, USAGE)),
    };
    println!("{}", serde_json::to_string(&value)?);
    Ok(ok)
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("cuzk-fil-oracle: error: {:#}", e);
            ExitCode::from(2)
        }
    }
}
