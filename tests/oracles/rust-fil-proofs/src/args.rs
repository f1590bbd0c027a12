//! A tiny `--key value` parser: the oracle keeps its dependency set to the proofs crates.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{anyhow, bail, ensure, Context, Result};

/// Parsed `--key value` options of one subcommand; every key must be read once.
pub struct Args {
    values: BTreeMap<String, String>,
    /// Where relative paths point: the directory the oracle was started in.
    cwd: PathBuf,
    used: std::cell::RefCell<Vec<String>>,
}

impl Args {
    /// Parses `--key value` pairs (`--key=value` also works); `flags` take no value.
    pub fn parse(items: &[String], flags: &[&str], cwd: PathBuf) -> Result<Args> {
        let mut values = BTreeMap::new();
        let mut i = 0;
        while i < items.len() {
            let item = &items[i];
            let key = item
                .strip_prefix("--")
                .ok_or_else(|| anyhow!("expected an option starting with --, got {:?}", item))?;
            let (key, value) = if let Some((k, v)) = key.split_once('=') {
                (k.to_string(), v.to_string())
            } else if flags.contains(&key) {
                (key.to_string(), "true".to_string())
            } else {
                i += 1;
                let v = items
                    .get(i)
                    .ok_or_else(|| anyhow!("option --{} needs a value", key))?;
                (key.to_string(), v.clone())
            };
            ensure!(!values.contains_key(&key), "option --{} given twice", key);
            values.insert(key, value);
            i += 1;
        }
        Ok(Args {
            values,
            cwd,
            used: std::cell::RefCell::new(Vec::new()),
        })
    }

    fn take(&self, key: &str) -> Option<String> {
        self.used.borrow_mut().push(key.to_string());
        self.values.get(key).cloned()
    }

    pub fn opt(&self, key: &str) -> Option<String> {
        self.take(key)
    }

    pub fn req(&self, key: &str) -> Result<String> {
        self.take(key)
            .ok_or_else(|| anyhow!("missing required option --{}", key))
    }

    pub fn flag(&self, key: &str) -> bool {
        self.take(key).is_some()
    }

    pub fn path(&self, key: &str) -> Result<PathBuf> {
        Ok(self.cwd.join(self.req(key)?))
    }

    /// A comma-separated list of paths (`--vanilla A,B`), each taken from the caller's directory.
    pub fn paths(&self, key: &str) -> Result<Vec<PathBuf>> {
        let v = self.req(key)?;
        let out: Vec<PathBuf> = v.split(',').filter(|s| !s.is_empty()).map(|s| self.cwd.join(s)).collect();
        ensure!(!out.is_empty(), "--{} names no path", key);
        Ok(out)
    }

    pub fn opt_path(&self, key: &str) -> Option<PathBuf> {
        self.take(key).map(|p| self.cwd.join(p))
    }

    pub fn u64(&self, key: &str) -> Result<u64> {
        let v = self.req(key)?;
        v.parse::<u64>()
            .with_context(|| format!("--{} must be a non-negative integer, got {:?}", key, v))
    }

    pub fn opt_u64(&self, key: &str) -> Result<Option<u64>> {
        match self.take(key) {
            None => Ok(None),
            Some(v) => Ok(Some(v.parse::<u64>().with_context(|| {
                format!("--{} must be a non-negative integer, got {:?}", key, v)
            })?)),
        }
    }

    pub fn hex32(&self, key: &str) -> Result<[u8; 32]> {
        parse_hex32(&self.req(key)?).with_context(|| format!("option --{}", key))
    }

    pub fn opt_hex32(&self, key: &str) -> Result<Option<[u8; 32]>> {
        match self.take(key) {
            None => Ok(None),
            Some(v) => Ok(Some(
                parse_hex32(&v).with_context(|| format!("option --{}", key))?,
            )),
        }
    }

    /// Fails naming any option the subcommand did not read (a typo must not pass silently).
    pub fn finish(&self) -> Result<()> {
        let used = self.used.borrow();
        let unknown: Vec<&String> = self.values.keys().filter(|k| !used.contains(k)).collect();
        if !unknown.is_empty() {
            bail!("unknown option(s): {:?}", unknown);
        }
        Ok(())
    }
}

/// 64 hex digits (an optional 0x prefix) to 32 bytes, in the order written.
pub fn parse_hex32(s: &str) -> Result<[u8; 32]> {
    let t = s.strip_prefix("0x").unwrap_or(s);
    let bytes = hex::decode(t).with_context(|| format!("not hex: {:?}", s))?;
    ensure!(
        bytes.len() == 32,
        "expected 32 bytes (64 hex digits), got {} bytes",
        bytes.len()
    );
    let mut out = [0u8; 32];
    out.copy_from_slice(&bytes);
    Ok(out)
}
