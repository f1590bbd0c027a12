//! `dump-r1cs-post`: the Fallback PoSt circuit (winning or window) over sealed 2 KiB sectors.

use anyhow::{bail, Result};

use crate::args::Args;

pub fn run(_args: &Args) -> Result<(serde_json::Value, bool)> {
    bail!("dump-r1cs-post is not implemented yet")
}
