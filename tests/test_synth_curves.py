"""Synthesis over each curve's Fr: the Synthesizer, the R1CS and the PCE file carry their curve,
values are reduced mod that curve's r, version-1 PCE files load as BLS12-381."""

import hashlib
import json
import struct

import pytest

from cuzk import curves
from cuzk.circuit import Circuit, ConstraintSystem
from cuzk.circuit.gadgets import to_bits
from cuzk.errors import CircuitError, InputError, PceFormatError, UnsupportedCurveError
from cuzk.synth import Synthesizer, python_synthesize
from cuzk.synth import kernels as K
from cuzk.synth.pce import PCE_VERSION

CURVES = ["bls12_381", "bn254"]


class Mixed(Circuit):
    """x^3 + x + 5 = out, a constant -1 (reduced mod r) and a 4-bit range check of x."""

    def define(self, cs, x, out):
        x, out = cs.private(x), cs.public(out)
        cs.assert_equal(x * x * x + x + 5 + (-1) * x - x * (-1), out)
        to_bits(cs, x, 4)


@pytest.fixture(scope="module", params=CURVES)
def curve(request):
    return request.param


@pytest.fixture(scope="module")
def synth(curve):
    return Synthesizer(Mixed(), curve=curve, check=True)


def test_the_curve_travels_from_circuit_to_witness(curve, synth):
    r = curves.resolve(curve).fr.modulus
    assert synth.curve == synth.r1cs.curve == curve
    w = synth.synthesize(x=3, out=35)
    assert w.curve == curve and w.public_inputs == [35]
    z, a, b, c = python_synthesize(synth, {"x": 3, "out": 35})
    assert synth.field.to_ints(w.z) == z and synth.field.to_ints(w.a) == a
    # the constant -1 is r - 1 of this curve's field
    assert r - 1 in {v for row in synth.r1cs.rows_as_ints() for m in row for v in m.values()}
    with pytest.raises(InputError, match=f"out of range \\[0, r\\) of {curves.resolve(curve).title} Fr"):
        synth.synthesize(x=3, out=r)


def test_aliases_and_unknown_curves():
    assert Synthesizer(Mixed(), curve="bn128").curve == "bn254"
    assert Synthesizer(Mixed(), curve="bls12381").curve == "bls12_381"
    assert Synthesizer(Mixed()).curve == "bls12_381"  # the default
    with pytest.raises(UnsupportedCurveError, match="unknown curve 'secp256k1'"):
        Synthesizer(Mixed(), curve="secp256k1")


def test_range_checks_follow_the_field_size():
    # 254 bits are sound over BLS12-381's 255-bit r, not over BN254's 254-bit r
    cs = ConstraintSystem("bls12_381")
    assert len(to_bits(cs, cs.private(5), 254)) == 254
    cs = ConstraintSystem("bn254")
    with pytest.raises(CircuitError, match="1 <= n <= 253"):
        to_bits(cs, cs.private(5), 254)


def test_kernels_per_curve_release_the_gil(curve):
    k = K.for_curve(curve)
    for f in (k.run_witness, k.csr_matvec, k.csr_matvec_parallel, k.first_unsatisfied, k.synthesize_serial):
        assert f.targetoptions.get("nogil") is True, f
    assert K.for_curve(curves.get(curve)) is k


def test_pce_round_trip_keeps_the_curve(tmp_path, curve, synth):
    synth.save(tmp_path / "c.pce")
    back = Synthesizer.load(tmp_path / "c.pce")
    assert back.curve == curve and back.r1cs.digest == synth.r1cs.digest
    assert back.synthesize(x=3, out=35).public_inputs == [35]


def _rewrite_header(raw: bytes, version: int, edit) -> bytes:
    _, _, _, hlen = struct.unpack_from("<8sIIQ", raw)
    hdr = json.loads(raw[24:24 + hlen])
    edit(hdr)
    new = json.dumps(hdr).encode()
    body = raw[:8] + struct.pack("<IIQ", version, 0, len(new)) + new + raw[24 + hlen:-32]
    return body + hashlib.sha256(body).digest()


def test_version_1_pce_loads_as_bls12_381(tmp_path):
    assert PCE_VERSION == 2
    s = Synthesizer(Mixed())
    s.save(tmp_path / "c.pce")
    old = _rewrite_header((tmp_path / "c.pce").read_bytes(), 1, lambda h: h.pop("curve"))
    (tmp_path / "v1.pce").write_bytes(old)
    back = Synthesizer.load(tmp_path / "v1.pce")
    assert back.curve == "bls12_381" and back.synthesize(x=3, out=35).public_inputs == [35]


@pytest.mark.parametrize("value, match", [
    ("secp256k1", "unknown curve"), (7, "must be a str"), (None, "must be a str"),
])
def test_pce_with_a_bad_curve_is_refused(tmp_path, value, match):
    s = Synthesizer(Mixed())
    s.save(tmp_path / "c.pce")
    bad = _rewrite_header((tmp_path / "c.pce").read_bytes(), 2, lambda h: h.update(curve=value))
    (tmp_path / "bad.pce").write_bytes(bad)
    with pytest.raises(PceFormatError, match=match):
        Synthesizer.load(tmp_path / "bad.pce")


def test_pce_whose_curve_does_not_fit_its_constants_is_refused(tmp_path):
    # BLS12-381's constants relabelled as BN254: r - 1 of BLS12-381 is not a BN254 element
    s = Synthesizer(Mixed())
    s.save(tmp_path / "c.pce")
    bad = _rewrite_header((tmp_path / "c.pce").read_bytes(), 2, lambda h: h.update(curve="bn254"))
    (tmp_path / "bad.pce").write_bytes(bad)
    with pytest.raises(PceFormatError):
        Synthesizer.load(tmp_path / "bad.pce")


def test_synthesizer_pickles_for_worker_processes(curve, synth):
    import pickle

    back = pickle.loads(pickle.dumps(synth))
    assert back.curve == curve and back.synthesize(x=3, out=35).public_inputs == [35]
