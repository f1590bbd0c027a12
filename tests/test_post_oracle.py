"""cuzk's Fallback PoSt against rust-fil-proofs itself (the Rust oracle, tests/oracles/): for 2 KiB
sectors sealed by the oracle, rust-fil-proofs' own WindowPoSt and WinningPoSt vanilla proofs
(tests/oracles/post_sectors.py) are the bytes cuzk writes for the same sectors; the circuit cuzk
builds from those bytes (through ``cuzk serve``'s decoding of Curio's requests) is bellperson's
R1CS row by row with the same value in every variable; and filecoin-proofs' own
``verify_window_post`` / ``verify_winning_post`` accept cuzk's proofs (keys from cuzk's
development setup) and refuse them for other randomness. The vanilla bytes and the rows are
compared for 8 MiB sectors too (slow: a 2^18-leaf tree, six levels of path per challenge; the
proofs of that size are checked through the daemon, tests/test_serve_post_oracle.py). Skipped
where cargo is absent."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "oracles"))
from post_sectors import ALL_STATEMENTS as ALL, RANDOMNESS, STATEMENTS, STATEMENTS_8M, make_oracle_post  # noqa: E402
from r1cs_compare import first_row_difference, witness_difference  # noqa: E402
from rust_oracle import read_r1cs, read_witness  # noqa: E402

import cuzk  # noqa: E402
from cuzk.circuits.filecoin import PostSector, build_tree, window_post, winning_post, winning_post_sectors  # noqa: E402
from cuzk.circuits.filecoin.vanilla import (  # noqa: E402
    FALLBACK_POST_SECTOR_PROOF, from_bincode, sector_proof, to_bincode,
)
from cuzk.circuits.filecoin.vanilla.merkle import domain_int, int_domain  # noqa: E402
from cuzk.formats.bellperson import vk_to_bytes  # noqa: E402
from cuzk.serve.payloads import post_work  # noqa: E402

from post_keys_support import post_keys  # noqa: E402

R = int.from_bytes(RANDOMNESS, "little")
#: the 8 MiB statements: seconds of sealing, and a 231k-row WinningPoSt to compare
NAMES = [*STATEMENTS, *(pytest.param(n, marks=pytest.mark.slow) for n in STATEMENTS_8M)]
#: every partition's row-by-row comparison: API 1.2 and 1.0 WindowPoSt (1.0's second partition is
#: short and repeats its sector), WinningPoSt; and both kinds of 8 MiB sectors
CASES = [("window-v1_2", 0), ("window-v1", 0), ("window-v1", 1), ("winning", 0),
         *(pytest.param(n, 0, marks=pytest.mark.slow) for n in STATEMENTS_8M)]


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """``made(name)``: ``(oracle, sectors)`` of the statement's sector size, made on first use: the
    oracle's sealed sectors and vanilla proofs, and cuzk's own view of each sealed sector (tree
    R_last rebuilt from the replica, comm_c from p_aux)."""
    cache = {}

    def get(name):
        size = ALL[name].sector_size
        if size not in cache:
            oracle = make_oracle_post(tmp_path_factory.mktemp(f"post-oracle-{size}"), size)
            sectors = {}
            for sid, sealed in oracle.sectors.items():
                comm_c, comm_r_last = sealed.comm_c_and_r_last
                sec = PostSector(sector_id=sid, comm_c=domain_int(comm_c), tree=build_tree(sealed.replica))
                assert (int_domain(sec.comm_r_last), int_domain(sec.comm_r)) == (comm_r_last, sealed.comm_r)
                sectors[sid] = sec
            cache[size] = oracle, sectors
        return cache[size]

    return get


def _post(name):
    """cuzk's circuit of a statement (registered proofs 5-9 number challenges as API 1.0)."""
    st = ALL[name]
    if st.kind == "winning":
        return winning_post(st.sector_size)
    return window_post(st.sector_size, api_version="1.2" if st.registered_proof >= 10 else "1.0")


def _partition_ids(name, partition):
    st = ALL[name]
    n = _post(name).sector_count if st.kind == "window" else 1
    return st.sector_ids[partition * n:(partition + 1) * n]


def _request(oracle, name, partition):
    """SubmitProofRequest fields of one partition, as Curio sends them: that partition's vanilla proofs."""
    st = ALL[name]
    return SimpleNamespace(proof_kind=3 if st.kind == "window" else 4, registered_proof=st.registered_proof,
                           sector_size=st.sector_size,
                           vanilla_proofs=oracle.vanilla_bytes(name, _partition_ids(name, partition)),
                           randomness=RANDOMNESS, partition_index=partition, vanilla_proof=b"", comm_r_old=b"",
                           comm_r_new=b"", comm_d_new=b"")


def _statement_sectors(name, sectors):
    st = ALL[name]
    chosen = [sectors[i] for i in st.sector_ids]
    return winning_post_sectors(chosen[0]) if st.kind == "winning" else chosen


@pytest.mark.parametrize("name", NAMES)
def test_vanilla_proofs_are_the_bytes_cuzk_writes(made, name):
    (oracle, sectors), st, post = made(name), ALL[name], _post(name)
    for i, (sid, data) in enumerate(zip(st.sector_ids, oracle.vanilla_bytes(name))):
        if st.kind == "window":  # i: the sector's index across partitions (API 1.0 numbers by it)
            chal = post.challenges(R, sid, i)
        else:  # one sector, its 66 challenges drawn as the 66 one-challenge slots draw them
            chal = [post.challenges(R, sid, j)[0] for j in range(post.sector_count)]
        assert chal == oracle.challenges(name, sid)
        mine = sector_proof(sectors[sid], chal)
        assert from_bincode(FALLBACK_POST_SECTOR_PROOF, data) == mine
        assert to_bincode(FALLBACK_POST_SECTOR_PROOF, mine) == data


@pytest.mark.parametrize("name, partition", CASES)
def test_post_circuit_is_bellpersons_row_by_row(made, name, partition):
    oracle, sectors = made(name)
    summary, r1cs = oracle.dump(name, partition)
    assert summary["satisfied"] and summary["public_inputs_match_verifier"] and summary["partition"] == partition
    post = _post(name)
    (inputs,) = post_work(_request(oracle, name, partition)).inputs
    # the decoding of rust-fil-proofs' bytes gives what cuzk derives from its own trees
    assert inputs == post.inputs(R, _statement_sectors(name, sectors), partition)
    synth = cuzk.Synthesizer(post)
    w = synth.synthesize(**inputs)
    dump = read_r1cs(r1cs)
    assert (synth.r1cs.n_public + 1, synth.r1cs.n_private, synth.r1cs.n_constraints) == \
        (dump.num_inputs, dump.num_aux, dump.num_constraints)
    assert witness_difference(w.z, read_witness(Path(summary["witness"]))) is None
    for m in "abc":
        assert first_row_difference(synth.r1cs, dump, m) is None
    public = [(s.sector_id, s.comm_r) for s in _statement_sectors(name, sectors)]
    assert [int.from_bytes(bytes.fromhex(h), "little") for h in summary["public_inputs"]] == \
        list(w.public_inputs) == post.public_inputs(R, public, partition)


def test_the_comparison_finds_a_swapped_orientation(made):
    """A guard on the guard: A and B exchanged (cuzk's PoSt had its booleanity rows so) are found."""
    summary, r1cs = made("window-v1_2")[0].dump("window-v1_2")
    dump = read_r1cs(r1cs)
    swapped = type(dump)(dump.num_inputs, dump.num_aux, dump.num_constraints, dump.coeffs, dump.b, dump.a, dump.c)
    synth = cuzk.Synthesizer(_post("window-v1_2"))
    assert first_row_difference(synth.r1cs, dump, "a") is None
    assert first_row_difference(synth.r1cs, swapped, "a") is not None


@pytest.mark.parametrize("name", list(STATEMENTS))
def test_filecoin_proofs_verifies_cuzks_post_proofs(made, name):
    oracle, st = made(name)[0], STATEMENTS[name]
    synth, pk, vk = post_keys(st.kind)
    proof, public = b"", []
    for k in range(st.partitions):  # WindowPoSt: the partitions' proofs concatenated, as Curio does
        (inputs,) = post_work(_request(oracle, name, k)).inputs
        w = synth.synthesize(**inputs)
        proof += cuzk.groth16.create_proof(pk, w, 1234567 + k, 7654321 + k).to_bytes()
        public.append(list(w.public_inputs))
    ok = oracle.verify(name, vk_to_bytes(vk), proof)
    assert (ok.returncode, ok.value["valid"], ok.value["partitions"]) == (0, True, st.partitions), ok.stderr
    assert [[int.from_bytes(bytes.fromhex(h), "little") for h in p] for p in ok.value["public_inputs"]] == public
    other = (R + 1).to_bytes(32, "little")  # other challenges: the same proof no longer verifies
    bad = oracle.verify(name, vk_to_bytes(vk), proof, randomness=other)
    assert (bad.returncode, bad.value["valid"]) == (1, False), bad.stderr
