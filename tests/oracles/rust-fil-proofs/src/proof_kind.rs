//! Registered seal proofs by Filecoin's numeric id (as go-state-types and filecoin-ffi number
//! them) or by filecoin-proofs-api's variant name.

use anyhow::{bail, ensure, Result};
use filecoin_proofs_api::RegisteredSealProof;
use RegisteredSealProof::*;

/// The enum is append-only upstream and its ids are its declaration order.
const SEAL_PROOFS: [RegisteredSealProof; 20] = [
    StackedDrg2KiBV1,
    StackedDrg8MiBV1,
    StackedDrg512MiBV1,
    StackedDrg32GiBV1,
    StackedDrg64GiBV1,
    StackedDrg2KiBV1_1,
    StackedDrg8MiBV1_1,
    StackedDrg512MiBV1_1,
    StackedDrg32GiBV1_1,
    StackedDrg64GiBV1_1,
    StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
    StackedDrg8MiBV1_1_Feat_SyntheticPoRep,
    StackedDrg512MiBV1_1_Feat_SyntheticPoRep,
    StackedDrg32GiBV1_1_Feat_SyntheticPoRep,
    StackedDrg64GiBV1_1_Feat_SyntheticPoRep,
    StackedDrg2KiBV1_2_Feat_NonInteractivePoRep,
    StackedDrg8MiBV1_2_Feat_NonInteractivePoRep,
    StackedDrg512MiBV1_2_Feat_NonInteractivePoRep,
    StackedDrg32GiBV1_2_Feat_NonInteractivePoRep,
    StackedDrg64GiBV1_2_Feat_NonInteractivePoRep,
];

pub fn parse_seal_proof(text: &str) -> Result<RegisteredSealProof> {
    if let Ok(id) = text.parse::<usize>() {
        if let Some(p) = SEAL_PROOFS.get(id) {
            return Ok(*p);
        }
        bail!("unknown registered seal proof id {}", id);
    }
    for p in SEAL_PROOFS {
        if format!("{:?}", p) == text {
            return Ok(p);
        }
    }
    bail!(
        "unknown registered seal proof {:?} (give an id 0-19 or a name such as StackedDrg2KiBV1_1)",
        text
    )
}

pub fn seal_proof_id(p: RegisteredSealProof) -> usize {
    SEAL_PROOFS
        .iter()
        .position(|q| *q == p)
        .expect("every variant is listed")
}

/// Sector sizes the oracle seals: 2 KiB for every command, and 8 MiB for `seal` and the PoSt
/// commands (a larger tree under the same 8-0-0 shape; its PoRep partition is too large to prove
/// here).
pub const SEALABLE: [u64; 2] = [2048, 8 << 20];

/// Only 2 KiB sectors here: the oracle's PoRep commands are for small, fast test sectors.
pub fn ensure_2kib(p: RegisteredSealProof, sector_size: Option<u64>) -> Result<()> {
    ensure_size(p, sector_size, &[2048])
}

/// `p` seals a sector of one of `sizes`, and `--sector-size`, when given, is its size.
pub fn ensure_size(p: RegisteredSealProof, sector_size: Option<u64>, sizes: &[u64]) -> Result<()> {
    let size = u64::from(p.sector_size());
    ensure!(
        sizes.contains(&size),
        "the oracle takes sectors of {:?} bytes here; {:?} is {} bytes",
        sizes,
        p,
        size
    );
    if let Some(s) = sector_size {
        ensure!(
            s == size,
            "--sector-size {} does not match {:?} ({} bytes)",
            s,
            p,
            size
        );
    }
    Ok(())
}
