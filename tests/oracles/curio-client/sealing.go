package main

// The two sealing requests as Curio's lib/ffi builds them for the cuzk daemon (docs/serve.md,
// "What is and is not checked against Curio and Filecoin"), from the files its storage holds:
//
//   - PoRep C2 (PoRepSnarkCuzk): the SealCommitPhase1Output JSON bytes wrapped in the envelope
//     {"SectorNum", "Phase1Out", "SectorSize"} by encoding/json, so Phase1Out travels as base64;
//     request id porep-<miner>-<sector>, NORMAL priority.
//   - SnapDeals (ProveUpdateCuzk): the stored snap vanilla proof, a JSON array of byte strings
//     (one bincode PartitionProof each), as vanilla_proofs; the three raw 32-byte commitments;
//     request id snap-<miner>-<sector>, NORMAL priority.

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"cuzk.dev/oracles/curio-client/cuzk"
)

// c1Envelope is the PoRep payload's wire form: field names and types are what the daemon reads.
type c1Envelope struct {
	SectorNum  int64  `json:"SectorNum"`
	Phase1Out  []byte `json:"Phase1Out"`
	SectorSize uint64 `json:"SectorSize"`
}

// sectorRef is what Curio knows of a sector when it asks for a proof: the miner's actor id, the
// sector number, the registered proof (seal or update) and the sector size in bytes.
type sectorRef struct {
	miner, number, proof, size uint64
}

// parseSectorRef reads the four numbers from the command line, in that order.
func parseSectorRef(args []string) (sectorRef, error) {
	if len(args) != 4 {
		return sectorRef{}, fmt.Errorf("want MINER SECTOR REGISTERED_PROOF SECTOR_SIZE, got %q", args)
	}
	var v [4]uint64
	for i, a := range args {
		n, err := strconv.ParseUint(a, 10, 64)
		if err != nil {
			return sectorRef{}, fmt.Errorf("%q is not a number: %w", a, err)
		}
		v[i] = n
	}
	return sectorRef{miner: v[0], number: v[1], proof: v[2], size: v[3]}, nil
}

// request is the part of a sealing request Curio fills the same way for both kinds: the request
// id <prefix>-<miner>-<sector>, the sector's numbers and NORMAL priority.
func request(prefix string, kind cuzk.ProofKind, s sectorRef) *cuzk.SubmitProofRequest {
	return &cuzk.SubmitProofRequest{
		RequestId:       fmt.Sprintf("%s-%d-%d", prefix, s.miner, s.number),
		ProofKind:       kind,
		SectorSize:      s.size,
		RegisteredProof: s.proof,
		Priority:        cuzk.Priority_NORMAL,
		SectorNumber:    s.number,
		MinerId:         s.miner,
	}
}

func porepRequest(c1JSON []byte, s sectorRef) (*cuzk.SubmitProofRequest, error) {
	wrapped, err := json.Marshal(c1Envelope{SectorNum: int64(s.number), Phase1Out: c1JSON, SectorSize: s.size})
	if err != nil {
		return nil, fmt.Errorf("wrapping the C1 output: %w", err)
	}
	req := request("porep", cuzk.ProofKind_POREP_SEAL_COMMIT, s)
	req.VanillaProof = wrapped
	return req, nil
}

// commitment decodes one 32-byte commitment given in hex (Curio takes the digest out of its CID).
func commitment(name, text string) ([]byte, error) {
	b, err := hex.DecodeString(text)
	if err != nil || len(b) != 32 {
		return nil, fmt.Errorf("%s: want 64 hex digits, got %q", name, text)
	}
	return b, nil
}

func snapRequest(vanillaJSON []byte, s sectorRef, commROld, commRNew, commDNew []byte) (*cuzk.SubmitProofRequest, error) {
	var proofs [][]byte
	if err := json.Unmarshal(vanillaJSON, &proofs); err != nil {
		return nil, fmt.Errorf("the snap vanilla proof is not a JSON array of byte strings: %w", err)
	}
	req := request("snap", cuzk.ProofKind_SNAP_DEALS_UPDATE, s)
	req.VanillaProofs = proofs
	req.CommROld, req.CommRNew, req.CommDNew = commROld, commRNew, commDNew
	return req, nil
}
