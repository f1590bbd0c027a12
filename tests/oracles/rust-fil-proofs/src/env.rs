//! Points rust-fil-proofs' on-disk caches into a folder the caller owns.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Sets the FIL_PROOFS_* variables before any proofs code reads its settings.
///
/// storage-proofs-core reads them once, into a lazily built global, on first use; so this
/// runs first thing in `main`. The parameter cache is where filecoin-proofs looks for (and,
/// when absent, writes freshly generated) Groth16 parameters and verifying keys.
pub fn point_caches(tmp: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(tmp).with_context(|| format!("creating --tmp {:?}", tmp))?;
    let tmp = tmp
        .canonicalize()
        .with_context(|| format!("resolving --tmp {:?}", tmp))?;
    let params = tmp.join("filecoin-proof-parameters");
    let parents = tmp.join("filecoin-parents");
    std::fs::create_dir_all(&params)?;
    std::fs::create_dir_all(&parents)?;
    // Trailing slash: the settings join file names onto these strings.
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", format!("{}/", params.display()));
    std::env::set_var("FIL_PROOFS_PARENT_CACHE", format!("{}/", parents.display()));
    std::env::set_var("FIL_PROOFS_CACHE_DIR", format!("{}/", tmp.display()));
    // Production-parameter checks compare against the published manifest, which a test's own
    // keys never match; and no GPU code is built in.
    std::env::set_var("FIL_PROOFS_VERIFY_PRODUCTION_PARAMS", "false");
    std::env::set_var("FIL_PROOFS_USE_GPU_COLUMN_BUILDER", "false");
    std::env::set_var("FIL_PROOFS_USE_GPU_TREE_BUILDER", "false");
    Ok(params)
}
