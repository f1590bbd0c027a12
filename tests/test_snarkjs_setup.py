"""cuzk's snarkjs-convention development setup and ``.zkey`` writer.

Without Node: the key equals the Python-int reference built from the same τ, α, β, γ, δ
(``_snarkjs_style_key``), ``write_zkey`` → ``read_zkey`` gives it back, and cuzk proves with it.
With Node (skipped otherwise): ``snarkjs groth16 prove`` proves with cuzk's ``.zkey`` and a circom
``.wtns`` (the cached chain300 artifacts of the interop tests), ``snarkjs groth16 verify`` accepts
the proof with the key ``snarkjs zkey export verificationkey`` exports, and so does cuzk.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import attrs
import numpy as np
import pytest
from hypothesis import given, strategies as st

from cuzk.errors import InputError, KeyMismatchError
from cuzk.formats import snarkjs as sj
from cuzk.formats import snarkjs_json as sjj
from cuzk.formats.snarkjs_setup import setup_snarkjs, snarkjs_domain_size
from cuzk.formats.snarkjs_write import write_zkey, zkey_sections
from cuzk.groth16 import setup, verify
from cuzk.groth16.setup import ToxicWaste
from cuzk.prover import GpuProver
from cuzk.synth import Synthesizer
from cuzk.synth.r1cs import R1CS
from test_snarkjs_formats import Cube, _snarkjs_style_key

if "snarkjs_ceremony" not in sys.modules:
    _spec = importlib.util.spec_from_file_location(
        "snarkjs_ceremony", Path(__file__).parent.parent / "scripts" / "snarkjs_ceremony.py")
    _mod = importlib.util.module_from_spec(_spec)
    sys.modules["snarkjs_ceremony"] = _mod
    _spec.loader.exec_module(_mod)
ceremony = sys.modules["snarkjs_ceremony"]
_OK, _WHY = ceremony.toolchain_status()

WASTE = ToxicWaste(tau=123456789, alpha=11, beta=13, gamma=17, delta=19)


@given(st.integers(1, 2**20), st.integers(0, 64))
def test_domain_size_is_snarkjs_cirpower(n_c, n_pub):
    m = snarkjs_domain_size(n_c, n_pub)
    assert m & (m - 1) == 0 and m // 2 <= n_c + n_pub < m  # 2^(⌊log2(n)⌋ + 1)
    assert m == 2 ** ceremony.power_for(n_c + n_pub)


def _same_key(pk, ref):
    assert pk.vk == ref.vk
    for k in ("a", "b_g1", "b_g2", "l", "h"):
        assert np.array_equal(getattr(pk, k), getattr(ref, k)), k


def test_setup_matches_the_python_int_reference():
    synth = Synthesizer(Cube())
    pk = setup_snarkjs(synth.r1cs, waste=WASTE)
    ref = _snarkjs_style_key(synth, WASTE.tau, WASTE.alpha, WASTE.beta, WASTE.gamma, WASTE.delta)
    assert pk.convention == "snarkjs" and pk.domain_size == ref.domain_size == 8  # 3 rows + 1 public
    # the reference keeps every wire (zeros at infinity); ours drops them as read_zkey does
    dens = pk.density
    assert np.array_equal(pk.a, ref.a[np.concatenate([[True, True], dens.a_aux])])
    keep_b = np.concatenate([dens.b_input, dens.b_aux])
    assert np.array_equal(pk.b_g1, ref.b_g1[keep_b]) and np.array_equal(pk.b_g2, ref.b_g2[keep_b])
    assert not keep_b.all() and not ref.b_g1[~keep_b].any()  # some wire is in no B row
    assert pk.vk == ref.vk and np.array_equal(pk.l, ref.l) and np.array_equal(pk.h, ref.h)


def test_zkey_round_trip_and_prove(tmp_path):
    synth = Synthesizer(Cube())
    pk = setup_snarkjs(synth.r1cs, np.random.default_rng(5))
    write_zkey(pk, tmp_path / "c.zkey")
    back = sj.read_zkey(tmp_path / "c.zkey", r1cs=synth.r1cs)
    _same_key(back, pk)
    assert back.density == pk.density and back.n_constraints == pk.n_constraints and back.digest == pk.digest
    for mine, theirs in ((back.matrix_a, pk.matrix_a), (back.matrix_b, pk.matrix_b)):
        assert sj._same_matrix(mine, theirs) == -1
    write_zkey(back, tmp_path / "again.zkey")  # a key read from a file writes the same file
    assert (tmp_path / "again.zkey").read_bytes() == (tmp_path / "c.zkey").read_bytes()
    z = synth.synthesize(x=3, out=35).z
    proof = GpuProver(back, device="cpu").prove(back.witness(z))  # verified before return
    assert verify(pk.vk, [35], proof) and not verify(pk.vk, [36], proof)


def test_section_layout():
    pk = setup_snarkjs(Synthesizer(Cube()).r1cs, waste=WASTE)
    secs = dict(zkey_sections(pk))
    assert sorted(secs) == list(range(1, 11))
    n_vars = pk.n_vars
    assert len(secs[5]) == len(secs[6]) == n_vars * 96 and len(secs[7]) == n_vars * 192
    assert len(secs[9]) == pk.domain_size * 96 and secs[10][-4:] == bytes(4)
    # every A and B term plus one A row per input, 44 bytes each
    nnz = pk.matrix_a.indices.shape[0] + pk.matrix_b.indices.shape[0] + pk.n_inputs
    assert len(secs[4]) == 4 + 44 * nnz and int.from_bytes(secs[4][:4], "little") == nnz


def test_bad_inputs():
    pk, _ = setup(Synthesizer(Cube()).r1cs, np.random.default_rng(1))
    with pytest.raises(KeyMismatchError, match="snarkjs-convention"):
        zkey_sections(pk)
    r1cs = Synthesizer(Cube()).r1cs
    no_rows = R1CS.build(r1cs.n_public, r1cs.n_private, *(_no_rows(m) for m in (r1cs.a, r1cs.b, r1cs.c)))
    with pytest.raises(InputError, match="no constraints"):
        setup_snarkjs(no_rows)


def test_zkey_domain_size_is_checked_against_the_h_section_before_sizing_rows(tmp_path):
    # header domain 2^24 with the per-input A rows moved to its end: the coefficient parser sized
    # two row arrays by it (at 2^31: 16 GiB, MemoryError or an OOM kill) before the H section,
    # which must hold that many points, was checked
    import struct
    import tracemalloc

    from cuzk.errors import SnarkjsFormatError
    from cuzk.synth.binfile import write_container

    pk = setup_snarkjs(Synthesizer(Cube()).r1cs, waste=WASTE)
    secs = dict(zkey_sections(pk))
    header = bytearray(secs[2])
    at = 4 + 48 + 4 + 32 + 8  # n8q, q, n8r, r, n_vars, n_public -> domain_size
    struct.pack_into("<I", header, at, 2**24)
    t = np.frombuffer(secs[4], dtype=sj._COEF, offset=4).copy()
    in_a = np.flatnonzero(t["m"] == 0)
    n_c = pk.n_constraints
    t["c"][in_a[t["c"][in_a] >= n_c]] += np.uint32(2**24 - pk.n_inputs - n_c)
    secs[2], secs[4] = bytes(header), secs[4][:4] + t.tobytes()
    write_container(tmp_path / "big.zkey", b"zkey", 1, sorted(secs.items()))
    tracemalloc.start()
    try:
        with pytest.raises(SnarkjsFormatError, match=r"H section \(9\) holds \d+ bytes, expected 16777216 points"):
            sj.read_zkey(tmp_path / "big.zkey", checked=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20


def _no_rows(mat):
    return attrs.evolve(mat, indptr=mat.indptr[:1], indices=mat.indices[:0], data=mat.data[:0],
                        coeff_table=None, coeff_index=None)


@pytest.mark.skipif(not _OK, reason=f"snarkjs interoperability tests skipped: {_WHY}")
def test_snarkjs_proves_with_cuzk_zkey(tmp_path):
    d = ceremony.ceremony("chain300", ceremony.chain_source(300), {"x": "3", "k": "7"}, 10)  # cached by the interop tests
    r1cs = sj.read_r1cs(d / "circuit.r1cs")
    pk = setup_snarkjs(r1cs, np.random.default_rng(11))
    zkey = tmp_path / "cuzk.zkey"
    write_zkey(pk, zkey)
    res = ceremony.snarkjs("groth16", "prove", zkey, d / "witness.wtns", tmp_path / "proof.json", tmp_path / "public.json")
    assert res.returncode == 0, res.stdout + res.stderr
    res = ceremony.snarkjs("zkey", "export", "verificationkey", zkey, tmp_path / "vk.json")
    assert res.returncode == 0, res.stdout + res.stderr
    assert sjj.vk_to_json(pk.vk) == json.loads((tmp_path / "vk.json").read_text())
    res = ceremony.snarkjs("groth16", "verify", tmp_path / "vk.json", tmp_path / "public.json", tmp_path / "proof.json")
    assert res.returncode == 0 and "OK" in res.stdout, res.stdout + res.stderr
    public = sjj.read_public_json(tmp_path / "public.json")
    theirs = sjj.read_proof_json(tmp_path / "proof.json")
    assert verify(pk.vk, public, theirs)  # cuzk verifies snarkjs's proof from cuzk's key
    assert not verify(pk.vk, [public[0], (public[1] + 1)], theirs)
    w = pk.witness(d / "witness.wtns")
    assert w.public_inputs == public
    ours = GpuProver(pk, device="cpu").prove(w)
    sjj.write_proof_json(tmp_path / "ours.json", ours)
    res = ceremony.snarkjs("groth16", "verify", tmp_path / "vk.json", tmp_path / "public.json", tmp_path / "ours.json")
    assert res.returncode == 0, res.stdout + res.stderr
    # the proof belongs to cuzk's key: the ceremony's key for the same circuit rejects it
    res = ceremony.snarkjs("groth16", "verify", d / "verification_key.json", tmp_path / "public.json", tmp_path / "ours.json")
    assert res.returncode != 0
