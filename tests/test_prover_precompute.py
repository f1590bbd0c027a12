"""GpuProver(precompute=...): a resident key's fixed-base tables (cuzk/groth16/fixed_base.py) give
proofs byte-identical to the plain path for fixed r, s, on both curves, for tables of every plan
shape; the planner keeps to its byte figure; bad values and other keys' tables are refused."""

import numpy as np
import pytest

from cuzk import curves
from cuzk.errors import InputError, KeyMismatchError
from cuzk.groth16 import ToxicWaste, fixed_base, setup_with_waste, verify
from cuzk.groth16.fixed_base import QUERY_GROUPS, KeyTables, build_tables, plan_tables, tables_bytes
from cuzk.kernels import msm_cpu
from cuzk.kernels.msm_fixed import FixedBasePlan
from cuzk.prover import GpuProver
from cuzk.synth import Synthesizer

from fixed_base_support import WASTE, Chain, chain_out

# every plan shape: narrow and wide windows, one window kept and several, both bucket methods
PLANS = {"a": FixedBasePlan(4, 3), "b_g1": FixedBasePlan(13, 1, "xyzz"), "b_g2": FixedBasePlan(7, 5),
         "l": FixedBasePlan(9, 2), "h": FixedBasePlan(16, 1)}


@pytest.fixture(scope="module", params=["bls12_381", "bn254"])
def key(request):
    curve = request.param
    r = curves.resolve(curve).fr.modulus
    synth = Synthesizer(Chain(), curve=curve)
    pk = setup_with_waste(synth.r1cs, ToxicWaste(**WASTE))
    w = synth.synthesize(x=3, k=5, out=chain_out(3, 5, r))
    return pk, w, r


def _bytes(proof) -> bytes:
    """The proof's points as stored (affine Montgomery limbs: one encoding per point, on any
    curve; BN254 has no bellperson bytes), plus its bellperson bytes where the curve has them."""
    limbs = b"".join(np.ascontiguousarray(p).tobytes() for p in (proof.a, proof.b, proof.c))
    return limbs + (proof.to_bytes() if proof.curve == curves.DEFAULT else b"")


def _tampered(public, r):
    return [(public[0] + 1) % r] + list(public[1:])


def test_proofs_with_tables_are_byte_identical(key):
    pk, w, r = key
    tables = build_tables(pk, PLANS, threads=2)
    assert set(tables.tables) == set(PLANS) and tables.nbytes == tables_bytes(pk, PLANS)
    plain = GpuProver(pk, device="cpu")
    for threads in (1, 2):
        fast = GpuProver(pk, device="cpu", precompute=tables, threads=threads)
        assert fast.tables is tables
        for rr, ss in ((0x1234567, 0x7654321), (r - 1, 1), (0, 0)):
            proof = fast.prove(w, rr, ss)
            assert _bytes(proof) == _bytes(plain.prove(w, rr, ss))
    assert verify(pk.vk, w.public_inputs, proof) and not verify(pk.vk, _tampered(w.public_inputs, r), proof)


def test_planned_tables_fit_their_figure_and_prove_identically(key, monkeypatch):
    pk, w, r = key
    monkeypatch.setattr(fixed_base, "MIN_POINTS", 1)  # the test key's queries are small
    qbytes = sum(getattr(pk, q).nbytes for q in QUERY_GROUPS)
    assert plan_tables(pk, 0) == {}
    for cap in (qbytes // 2, qbytes, 4 * qbytes):
        assert tables_bytes(pk, plan_tables(pk, cap)) <= cap
    assert plan_tables(pk, 4 * qbytes)
    kern = curves.get(pk.curve).kernels
    unbounded = plan_tables(pk, 1 << 50)  # every query ends at its front's cheapest plan
    for q, plan in unbounded.items():
        assert plan == kern.trade_off(QUERY_GROUPS[q], getattr(pk, q).shape[0])[-1][2]
    plain = _bytes(GpuProver(pk, device="cpu").prove(w, 5, 7))
    monkeypatch.setattr(fixed_base, "auto_factor", lambda: fixed_base.AUTO_FACTOR)  # "auto" as on CPUs without IFMA
    for option in (2 * qbytes, "auto"):
        prover = GpuProver(pk, device="cpu", precompute=option, threads=2)
        assert prover.tables is not None and prover.tables.seconds > 0
        assert prover.tables.nbytes <= (2 * qbytes if option != "auto" else fixed_base.auto_bytes(pk))
        assert _bytes(prover.prove(w, 5, 7)) == plain
    assert GpuProver(pk, device="cpu", precompute=0).tables is None


def test_small_queries_get_no_tables_by_default(key):
    pk = key[0]
    assert all(getattr(pk, q).shape[0] < fixed_base.MIN_POINTS for q in QUERY_GROUPS)
    assert GpuProver(pk, device="cpu", precompute="auto").tables is None


@pytest.mark.parametrize("bad", [-1, 1.5, "AUTO", "1G", True, [1 << 20], b"auto", {"a": 1}])
def test_bad_precompute_values_are_refused(key, bad):
    with pytest.raises(InputError, match="precompute"):
        GpuProver(key[0], device="cpu", precompute=bad)


def test_tables_of_another_key_are_refused(key):
    pk, w, r = key
    other = setup_with_waste(Synthesizer(Chain(), curve=pk.curve).r1cs, ToxicWaste(**{**WASTE, "tau": 99}))
    with pytest.raises(KeyMismatchError, match="other points"):
        GpuProver(pk, device="cpu", precompute=build_tables(other, {"l": FixedBasePlan(8, 4)}))
    mine = build_tables(pk, {"l": FixedBasePlan(8, 4)})
    with pytest.raises(KeyMismatchError, match="bases|other points"):  # the l table handed in as a's
        GpuProver(pk, device="cpu", precompute=KeyTables({"a": mine.tables["l"]}))
    if pk.curve != "bls12_381":  # same shapes on another curve: refused by the group's field
        bls = setup_with_waste(Synthesizer(Chain()).r1cs, ToxicWaste(**WASTE))
        with pytest.raises(KeyMismatchError, match="not of the key"):
            GpuProver(pk, device="cpu", precompute=build_tables(bls, {"l": FixedBasePlan(8, 4)}))


def test_tables_round_trip_through_arrays(key):
    pk, w, _ = key
    tables = build_tables(pk, {"h": FixedBasePlan(10, 3), "b_g2": FixedBasePlan(12, 2, "xyzz")})
    arrays, meta = fixed_base.tables_to_arrays(tables)
    back = fixed_base.tables_from_arrays(pk, {k: np.array(v) for k, v in arrays.items()}, meta)
    assert back.plans == tables.plans
    assert all(np.array_equal(back.tables[q].points, tables.tables[q].points) for q in tables.tables)
    bad = dict(arrays)
    bad["h.skip"] = np.ones_like(arrays["h.skip"])
    with pytest.raises(InputError, match="identities"):
        fixed_base.tables_from_arrays(pk, bad, meta)
    with pytest.raises(InputError, match="malformed"):
        fixed_base.tables_from_arrays(pk, {k: v for k, v in arrays.items() if k != "h.points"}, meta)


def test_auto_builds_no_tables_where_the_msms_run_on_ifma(key, monkeypatch):
    """On an AVX-512 IFMA CPU the plain MSM measured as fast as the tables (docs/perf/kernels.md)."""
    pk = key[0]
    monkeypatch.setattr(fixed_base, "MIN_POINTS", 1)
    ifma_here = msm_cpu.VEC_METHODS[0] in msm_cpu.AVAILABLE
    assert fixed_base.auto_factor() == (0 if ifma_here else fixed_base.AUTO_FACTOR)
    assert (GpuProver(pk, device="cpu", precompute="auto").tables is None) == ifma_here
