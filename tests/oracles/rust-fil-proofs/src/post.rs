//! Fallback PoSt (WindowPoSt / WinningPoSt) of 2 KiB and 8 MiB sectors with filecoin-proofs' own types:
//! registered PoSt proofs, the statement, and each partition's circuit and public inputs built
//! the way `generate_window_post_with_vanilla` / `generate_winning_post_with_vanilla` build them.

use anyhow::{bail, ensure, Context, Result};
use blstrs::Scalar as Fr;
use filecoin_proofs::constants::SectorShape2KiB;
use filecoin_proofs::parameters::{window_post_setup_params, winning_post_setup_params};
use filecoin_proofs::types::{FallbackPoStSectorProof, PoStConfig, VanillaProof};
use filecoin_proofs_api::{PoStType, RegisteredPoStProof, SectorId};
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_post::fallback::{self, FallbackPoSt, FallbackPoStCircuit, FallbackPoStCompound, PublicSector};
use RegisteredPoStProof::*;

use crate::args::Args;
use crate::proof_kind::SEALABLE;

/// Every 2 KiB and 8 MiB PoSt has the 8-0-0 tree of its sealed sector (filecoin-proofs'
/// SectorShape2KiB and SectorShape8MiB are both its SectorShapeBase).
pub type Tree = SectorShape2KiB;
pub type Domain = <<Tree as storage_proofs_core::merkle::MerkleTreeTrait>::Hasher as filecoin_proofs_api::Hasher>::Domain;
pub type PublicParams = compound_proof::PublicParams<'static, FallbackPoSt<'static, Tree>>;
pub type PublicInputs = fallback::PublicInputs<Domain>;

/// Filecoin's RegisteredPoStProof numbering (filecoin-ffi, go-state-types): the api enum's
/// declaration order, which is append-only upstream.
const POST_PROOFS: [RegisteredPoStProof; 15] = [
    StackedDrgWinning2KiBV1,
    StackedDrgWinning8MiBV1,
    StackedDrgWinning512MiBV1,
    StackedDrgWinning32GiBV1,
    StackedDrgWinning64GiBV1,
    StackedDrgWindow2KiBV1,
    StackedDrgWindow8MiBV1,
    StackedDrgWindow512MiBV1,
    StackedDrgWindow32GiBV1,
    StackedDrgWindow64GiBV1,
    StackedDrgWindow2KiBV1_2,
    StackedDrgWindow8MiBV1_2,
    StackedDrgWindow512MiBV1_2,
    StackedDrgWindow32GiBV1_2,
    StackedDrgWindow64GiBV1_2,
];

pub fn post_proof_id(p: RegisteredPoStProof) -> usize {
    POST_PROOFS.iter().position(|q| *q == p).expect("every variant is listed")
}

fn parse_post_proof(text: &str) -> Result<RegisteredPoStProof> {
    if let Ok(id) = text.parse::<usize>() {
        return POST_PROOFS
            .get(id)
            .copied()
            .with_context(|| format!("unknown registered PoSt proof id {} (0-14)", id));
    }
    POST_PROOFS
        .into_iter()
        .find(|p| format!("{:?}", p) == text)
        .with_context(|| format!("unknown registered PoSt proof {:?}", text))
}

/// `--kind window|winning [--registered-proof ID]`: by default the 2 KiB proofs the chain takes
/// today (WindowPoSt V1_2, id 10: API 1.2 challenge numbering; WinningPoSt V1, id 0).
pub fn post_proof_from(args: &Args) -> Result<RegisteredPoStProof> {
    let kind = args.req("kind")?;
    let want = match kind.as_str() {
        "window" => PoStType::Window,
        "winning" => PoStType::Winning,
        other => bail!("--kind must be window or winning, got {:?}", other),
    };
    let proof = match args.opt("registered-proof") {
        Some(t) => parse_post_proof(&t)?,
        None if want == PoStType::Window => StackedDrgWindow2KiBV1_2,
        None => StackedDrgWinning2KiBV1,
    };
    ensure!(proof.typ() == want, "{:?} is not a {} PoSt proof", proof, kind);
    ensure!(
        SEALABLE.contains(&u64::from(proof.sector_size())),
        "the oracle proves PoSt of {:?}-byte sectors only; {:?} is {} bytes",
        SEALABLE,
        proof,
        u64::from(proof.sector_size())
    );
    Ok(proof)
}

/// The public parameters filecoin-proofs sets up for `n_sectors` sectors, and the partition count.
pub fn public_params(proof: RegisteredPoStProof, n_sectors: usize) -> Result<(PostParams, usize)> {
    let config = proof.as_v1_config();
    let (vanilla_params, partitions) = match config.typ {
        // get_partitions_for_window_post: None for a single partition
        PoStType::Window => {
            let n = filecoin_proofs::get_num_partition_for_fallback_post(&config, n_sectors);
            (window_post_setup_params(&config), if n > 1 { Some(n) } else { None })
        }
        PoStType::Winning => (winning_post_setup_params(&config)?, None),
    };
    let setup = compound_proof::SetupParams { vanilla_params, partitions, priority: config.priority };
    let pp = <FallbackPoStCompound<Tree> as CompoundProof<_, _>>::setup(&setup)?;
    Ok((PostParams { config, pp }, partitions.unwrap_or(1)))
}

pub struct PostParams {
    pub config: PoStConfig,
    pub pp: PublicParams,
}

/// `as_safe_commitment`: 32 bytes that must be a canonical field element.
pub fn domain(bytes: &[u8; 32], what: &str) -> Result<Domain> {
    filecoin_proofs::as_safe_commitment(bytes, what)
}

/// A PoSt statement with its per-partition vanilla proofs, as `generate_*_post_with_vanilla`
/// assembles them (partition_vanilla_proofs, which also checks every inclusion proof).
pub struct PostInstance {
    pub params: PostParams,
    /// The prover's statement: the sectors in the order of their vanilla proofs.
    pub pub_inputs: PublicInputs,
    /// The verifier's (see [`verifier_inputs`]).
    pub verifier_inputs: PublicInputs,
    pub partitions: Vec<VanillaProof<Tree>>,
}

/// The statement as `verify_window_post` / `verify_winning_post` assemble it: the sectors in
/// ascending id order (filecoin-proofs-api takes them as a BTreeMap), and WinningPoSt's one
/// sector repeated in each of its `sector_count` slots. For WinningPoSt this differs from the
/// prover's statement (one sector, padded by repeating its inputs), and only the verifier's gives
/// each slot its own challenge index under API 1.0.
pub fn verifier_inputs(
    params: &PostParams,
    randomness: &[u8; 32],
    prover_id: &[u8; 32],
    sectors: &[(SectorId, Domain)],
) -> Result<PublicInputs> {
    let mut sorted = sectors.to_vec();
    sorted.sort_by_key(|(id, _)| u64::from(*id));
    let mut pub_sectors: Vec<_> = sorted.iter().map(|(id, comm_r)| PublicSector { id: *id, comm_r: *comm_r }).collect();
    if params.config.typ == PoStType::Winning {
        ensure!(pub_sectors.len() == 1, "WinningPoSt is verified against one sector, got {}", pub_sectors.len());
        pub_sectors = vec![pub_sectors[0].clone(); params.pp.vanilla_params.sector_count];
    }
    Ok(fallback::PublicInputs {
        randomness: domain(randomness, "randomness")?,
        prover_id: domain(prover_id, "prover_id")?,
        sectors: pub_sectors,
        k: None,
    })
}

impl PostInstance {
    pub fn new(
        proof: RegisteredPoStProof,
        randomness: &[u8; 32],
        prover_id: &[u8; 32],
        vanilla: &[FallbackPoStSectorProof<Tree>],
    ) -> Result<PostInstance> {
        ensure!(!vanilla.is_empty(), "no vanilla proofs given");
        let (params, partitions) = public_params(proof, vanilla.len())?;
        if params.config.typ == PoStType::Winning {
            ensure!(
                vanilla.len() == params.config.sector_count,
                "WinningPoSt takes {} sector proof(s), got {}",
                params.config.sector_count,
                vanilla.len()
            );
        }
        let pub_inputs = fallback::PublicInputs {
            randomness: domain(randomness, "randomness")?,
            prover_id: domain(prover_id, "prover_id")?,
            sectors: vanilla.iter().map(|v| PublicSector { id: v.sector_id, comm_r: v.comm_r }).collect(),
            k: None,
        };
        let parts = filecoin_proofs::partition_vanilla_proofs(
            &params.config,
            &params.pp.vanilla_params,
            &pub_inputs,
            partitions,
            vanilla,
        )
        .context("partition_vanilla_proofs (filecoin-proofs' vanilla check)")?;
        let sectors: Vec<_> = vanilla.iter().map(|v| (v.sector_id, v.comm_r)).collect();
        let verifier_inputs = verifier_inputs(&params, randomness, prover_id, &sectors)?;
        Ok(PostInstance { params, pub_inputs, verifier_inputs, partitions: parts })
    }

    fn check(&self, k: usize) -> Result<()> {
        ensure!(k < self.partitions.len(), "--partition {} out of range: {} partition(s)", k, self.partitions.len());
        Ok(())
    }

    /// Partition `k`'s circuit (FallbackPoStCompound::circuit, as circuit_proofs calls it).
    pub fn circuit(&self, k: usize) -> Result<FallbackPoStCircuit<Tree>> {
        self.check(k)?;
        Ok(<FallbackPoStCompound<Tree> as CompoundProof<_, _>>::circuit(
            &self.pub_inputs,
            Default::default(),
            &self.partitions[k],
            &self.params.pp.vanilla_params,
            Some(k),
        )?)
    }

    /// Partition `k`'s public inputs (ONE excluded), as the verifier computes them.
    pub fn public_inputs(&self, k: usize) -> Result<Vec<Fr>> {
        self.check(k)?;
        public_inputs(&self.params, &self.verifier_inputs, k)
    }
}

/// `generate_public_inputs` of partition `k` (ONE excluded).
pub fn public_inputs(params: &PostParams, inputs: &PublicInputs, k: usize) -> Result<Vec<Fr>> {
    Ok(<FallbackPoStCompound<Tree> as CompoundProof<_, _>>::generate_public_inputs(
        inputs,
        &params.pp.vanilla_params,
        Some(k),
    )?)
}

/// Reads bincode `FallbackPoStSectorProof`s (filecoin-proofs-api's VanillaProofBytes).
pub fn read_vanilla(paths: &[std::path::PathBuf]) -> Result<Vec<FallbackPoStSectorProof<Tree>>> {
    paths
        .iter()
        .map(|p| {
            let bytes = std::fs::read(p).with_context(|| format!("reading vanilla proof {:?}", p))?;
            bincode::deserialize(&bytes).with_context(|| format!("{:?} is not a bincode FallbackPoStSectorProof", p))
        })
        .collect()
}

pub fn hex_inputs(inputs: &[Fr]) -> Vec<String> {
    inputs.iter().map(|x| hex::encode(x.to_bytes_le())).collect()
}
