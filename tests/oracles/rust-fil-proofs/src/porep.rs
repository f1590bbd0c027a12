//! The 2 KiB StackedCircuit rebuilt from a C1 output, with filecoin-proofs' own types.

use std::convert::TryInto;
use std::fs;
use std::path::Path;

use anyhow::{ensure, Context, Result};
use blstrs::Scalar as Fr;
use filecoin_proofs::constants::{DefaultPieceDomain, DefaultPieceHasher, SectorShape2KiB};
use filecoin_proofs::parameters::setup_params;
use filecoin_proofs::types::VanillaSealProof as RawVanillaSealProof;
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use filecoin_proofs_api::{ApiFeature, RegisteredSealProof};
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_porep::stacked::{self, StackedCircuit, StackedCompound, StackedDrg};

use crate::proof_kind::ensure_2kib;

pub type Tree = SectorShape2KiB;
pub type Compound = StackedCompound<Tree, DefaultPieceHasher>;
pub type PublicParams = compound_proof::PublicParams<'static, StackedDrg<'static, Tree, DefaultPieceHasher>>;
pub type PublicInputs = stacked::PublicInputs<
    <<Tree as storage_proofs_core::merkle::MerkleTreeTrait>::Hasher as filecoin_proofs_api::Hasher>::Domain,
    DefaultPieceDomain,
>;

/// Everything a C1 output holds, in the types the circuit takes.
pub struct PoRepInstance {
    pub registered_proof: RegisteredSealProof,
    pub public_params: PublicParams,
    pub public_inputs: PublicInputs,
    /// Per partition, that partition's per-challenge vanilla proofs.
    pub vanilla_proofs: Vec<Vec<RawVanillaSealProof<Tree>>>,
}

/// Reads a C1 file: serde JSON of filecoin-proofs-api's SealCommitPhase1Output.
pub fn load_c1(path: &Path) -> Result<SealCommitPhase1Output> {
    let bytes = fs::read(path).with_context(|| format!("reading --c1 {:?}", path))?;
    serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "{:?} is not a SealCommitPhase1Output JSON (filecoin-proofs-api {})",
            path, "19.1.0"
        )
    })
}

pub fn public_params(proof: RegisteredSealProof) -> Result<PublicParams> {
    let config = proof.as_v1_config();
    let setup = compound_proof::SetupParams {
        vanilla_params: setup_params(&config)?,
        partitions: Some(usize::from(config.partitions)),
        priority: false,
    };
    Ok(<Compound as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::setup(&setup)?)
}

/// Mirrors seal_commit_phase2's own assembly of public inputs and vanilla proofs.
pub fn instance_from_c1(c1: SealCommitPhase1Output) -> Result<PoRepInstance> {
    let proof = c1.registered_proof;
    ensure_2kib(proof, None)?;
    ensure!(
        !proof.feature_enabled(ApiFeature::NonInteractivePoRep),
        "non-interactive PoRep C1 outputs are not supported by this oracle"
    );
    ensure!(c1.comm_d != [0; 32] && c1.comm_r != [0; 32], "all-zero commitment in C1");
    let vanilla_proofs: Vec<Vec<RawVanillaSealProof<Tree>>> = c1.vanilla_proofs.try_into()?;
    ensure!(
        !vanilla_proofs.is_empty() && vanilla_proofs.iter().all(|p| !p.is_empty()),
        "C1 output contains no vanilla proofs"
    );
    let comm_r = filecoin_proofs::as_safe_commitment(&c1.comm_r, "comm_r")?;
    let comm_d: DefaultPieceDomain = filecoin_proofs::as_safe_commitment(&c1.comm_d, "comm_d")?;
    let replica_id: Fr = c1.replica_id.into();
    let public_inputs = stacked::PublicInputs {
        replica_id: replica_id.into(),
        tau: Some(stacked::Tau { comm_d, comm_r }),
        k: None,
        seed: Some(c1.seed),
    };
    Ok(PoRepInstance {
        registered_proof: proof,
        public_params: public_params(proof)?,
        public_inputs,
        vanilla_proofs,
    })
}

impl PoRepInstance {
    pub fn partitions(&self) -> usize {
        self.vanilla_proofs.len()
    }

    /// The circuit filecoin-proofs proves for partition `k` (StackedCompound::circuit).
    pub fn circuit(&self, k: usize) -> Result<StackedCircuit<Tree, DefaultPieceHasher>> {
        ensure!(
            k < self.partitions(),
            "--partition {} out of range: the C1 output has {} partition(s)",
            k,
            self.partitions()
        );
        Ok(<Compound as CompoundProof<_, _>>::circuit(
            &self.public_inputs,
            Default::default(),
            &self.vanilla_proofs[k],
            &self.public_params.vanilla_params,
            Some(k),
        )?)
    }

    /// Partition `k`'s public inputs (ONE excluded), as the verifier computes them.
    pub fn public_inputs(&self, k: usize) -> Result<Vec<Fr>> {
        Ok(<Compound as CompoundProof<_, _>>::generate_public_inputs(
            &self.public_inputs,
            &self.public_params.vanilla_params,
            Some(k),
        )?)
    }
}

pub fn blank_circuit(proof: RegisteredSealProof) -> Result<StackedCircuit<Tree, DefaultPieceHasher>> {
    let pp = public_params(proof)?;
    Ok(<Compound as CompoundProof<_, _>>::blank_circuit(&pp.vanilla_params))
}
