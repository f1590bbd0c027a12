//! A ConstraintSystem that keeps every constraint and every value, and writes them out.
//!
//! File formats (all integers little-endian; see README.md, "R1CS dump format"):
//!
//! R1CS file:
//!   b"CUZKR1CS", u32 version = 1, u32 reserved = 0,
//!   u64 num_inputs (the constant ONE is input 0), u64 num_aux, u64 num_constraints,
//!   u64 num_coeffs, then num_coeffs coefficients of 32 bytes each (canonical Fr, LE),
//!   then for each matrix A, B, C: u64 nnz, (num_constraints + 1) u64 row offsets,
//!   nnz u32 columns, nnz u32 coefficient ids.
//!   A column c < num_inputs is input c; otherwise aux c - num_inputs (the witness vector
//!   z = inputs ++ aux). Terms keep bellpepper's order: inputs, then aux, indices ascending.
//!
//! Witness file:
//!   b"CUZKWITN", u32 version = 1, u32 reserved = 0, u64 num_inputs, u64 num_aux,
//!   then z: num_inputs + num_aux values of 32 bytes each (canonical Fr, LE).

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use anyhow::{ensure, Context, Result};
use bellperson::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar as Fr;
use ff::Field;

const R1CS_MAGIC: &[u8; 8] = b"CUZKR1CS";
const WITNESS_MAGIC: &[u8; 8] = b"CUZKWITN";
const FORMAT_VERSION: u32 = 1;

/// One sparse matrix, rows appended as the circuit enforces them.
#[derive(Default)]
struct Matrix {
    row_offsets: Vec<u64>,
    /// (is_aux, index, coefficient id), resolved to z columns at write time.
    terms: Vec<(bool, u32, u32)>,
}

/// Records the circuit exactly as synthesized, plus the assignment.
///
/// Not extensible and not a witness generator, so gadgets take their ordinary paths (the
/// ones bellperson's parameter generator sees).
pub struct RecordingCS {
    pub inputs: Vec<Fr>,
    pub aux: Vec<Fr>,
    a: Matrix,
    b: Matrix,
    c: Matrix,
    coeffs: Vec<Fr>,
    coeff_ids: HashMap<[u8; 32], u32>,
    pub num_constraints: usize,
    /// Index and annotation of the first constraint whose values do not satisfy it.
    pub first_unsatisfied: Option<(usize, String)>,
    pub num_unsatisfied: usize,
    namespace: Vec<String>,
    too_wide: bool,
}

impl RecordingCS {
    /// An empty system whose input 0 is the constant ONE, as bellperson's prover sets it.
    pub fn new() -> Self {
        let mut cs = RecordingCS {
            inputs: vec![Fr::ONE],
            aux: Vec::new(),
            a: Matrix::default(),
            b: Matrix::default(),
            c: Matrix::default(),
            coeffs: Vec::new(),
            coeff_ids: HashMap::new(),
            num_constraints: 0,
            first_unsatisfied: None,
            num_unsatisfied: 0,
            namespace: Vec::new(),
            too_wide: false,
        };
        for m in [&mut cs.a, &mut cs.b, &mut cs.c] {
            m.row_offsets.push(0);
        }
        cs
    }

    fn coeff_id(&mut self, value: &Fr) -> u32 {
        let key = value.to_bytes_le();
        if let Some(id) = self.coeff_ids.get(&key) {
            return *id;
        }
        let id = self.coeffs.len() as u32;
        self.coeffs.push(*value);
        self.coeff_ids.insert(key, id);
        id
    }

    fn eval(&self, lc: &LinearCombination<Fr>) -> Fr {
        let mut acc = Fr::ZERO;
        for (var, coeff) in lc.iter() {
            let v = match var.get_unchecked() {
                Index::Input(i) => self.inputs[i],
                Index::Aux(i) => self.aux[i],
            };
            acc += v * coeff;
        }
        acc
    }

    fn push_row(&mut self, which: usize, lc: &LinearCombination<Fr>) {
        let mut terms = Vec::with_capacity(lc.len());
        for (var, coeff) in lc.iter() {
            let (is_aux, index) = match var.get_unchecked() {
                Index::Input(i) => (false, i),
                Index::Aux(i) => (true, i),
            };
            if index > u32::MAX as usize {
                self.too_wide = true;
            }
            let id = self.coeff_id(coeff);
            terms.push((is_aux, index as u32, id));
        }
        let m = match which {
            0 => &mut self.a,
            1 => &mut self.b,
            _ => &mut self.c,
        };
        m.terms.extend(terms);
        m.row_offsets.push(m.terms.len() as u64);
    }

    /// Writes the R1CS file (format in the module docs).
    pub fn write_r1cs(&self, path: &Path) -> Result<()> {
        let n_in = self.inputs.len() as u64;
        ensure!(
            !self.too_wide && n_in + (self.aux.len() as u64) <= u32::MAX as u64,
            "circuit too wide for u32 columns"
        );
        let file = std::fs::File::create(path).with_context(|| format!("creating {:?}", path))?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
        w.write_all(R1CS_MAGIC)?;
        w.write_all(&FORMAT_VERSION.to_le_bytes())?;
        w.write_all(&0u32.to_le_bytes())?;
        for n in [
            n_in,
            self.aux.len() as u64,
            self.num_constraints as u64,
            self.coeffs.len() as u64,
        ] {
            w.write_all(&n.to_le_bytes())?;
        }
        for c in &self.coeffs {
            w.write_all(&c.to_bytes_le())?;
        }
        for m in [&self.a, &self.b, &self.c] {
            w.write_all(&(m.terms.len() as u64).to_le_bytes())?;
            for off in &m.row_offsets {
                w.write_all(&off.to_le_bytes())?;
            }
            for (is_aux, index, _) in &m.terms {
                let col = if *is_aux { n_in as u32 + *index } else { *index };
                w.write_all(&col.to_le_bytes())?;
            }
            for (_, _, id) in &m.terms {
                w.write_all(&id.to_le_bytes())?;
            }
        }
        w.flush()?;
        Ok(())
    }

    /// Writes the witness file z = inputs ++ aux (format in the module docs).
    pub fn write_witness(&self, path: &Path) -> Result<()> {
        let file = std::fs::File::create(path).with_context(|| format!("creating {:?}", path))?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
        w.write_all(WITNESS_MAGIC)?;
        w.write_all(&FORMAT_VERSION.to_le_bytes())?;
        w.write_all(&0u32.to_le_bytes())?;
        w.write_all(&(self.inputs.len() as u64).to_le_bytes())?;
        w.write_all(&(self.aux.len() as u64).to_le_bytes())?;
        for v in self.inputs.iter().chain(self.aux.iter()) {
            w.write_all(&v.to_bytes_le())?;
        }
        w.flush()?;
        Ok(())
    }

    /// Non-zero terms in A, B, C.
    pub fn nnz(&self) -> [usize; 3] {
        [self.a.terms.len(), self.b.terms.len(), self.c.terms.len()]
    }

    pub fn num_coeffs(&self) -> usize {
        self.coeffs.len()
    }
}

impl ConstraintSystem<Fr> for RecordingCS {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?);
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs.push(f()?);
        Ok(Variable::new_unchecked(Index::Input(self.inputs.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
        let a = a(LinearCombination::zero());
        let b = b(LinearCombination::zero());
        let c = c(LinearCombination::zero());
        if self.eval(&a) * self.eval(&b) != self.eval(&c) {
            self.num_unsatisfied += 1;
            if self.first_unsatisfied.is_none() {
                let mut name = self.namespace.join("/");
                name.push('/');
                name.push_str(&annotation().into());
                self.first_unsatisfied = Some((self.num_constraints, name));
            }
        }
        self.push_row(0, &a);
        self.push_row(1, &b);
        self.push_row(2, &c);
        self.num_constraints += 1;
    }

    fn push_namespace<NR, N>(&mut self, name_fn: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
        // Names are kept only to report where an unsatisfied constraint sits.
        self.namespace.push(name_fn().into());
    }

    fn pop_namespace(&mut self) {
        self.namespace.pop();
    }

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}
