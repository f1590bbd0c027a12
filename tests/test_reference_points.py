"""cuzk.reference points: zcash encodings (known vectors, sign rule, errors), affine ints, MSM."""

import ast
import doctest
import importlib
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuzk.errors import NotInSubgroupError, NotOnCurveError, PointEncodingError
from cuzk.field import FQ
from cuzk.reference import PROOF_BYTES, Proof, proof_from_bytes, proof_to_bytes
from cuzk.reference import points as P

q = FQ.modulus
R = P.curve_order

# BLS12-381 generators (the zcash/IETF constants)
G1_X = 0x17F1D3A73197D7942695638C4FA9AC0FC3688C4F9774B905A14E3A3F171BAC586C55E83FF97A1AEFFB3AF00ADB22C6BB
G1_Y = 0x08B3F481E3AAA0F1A09E30ED741D8AE4FCF5E095D5D00AF600DB18CB2C04B3EDD03CC744A2888AE40CAA232946C5E7E1
G2_X0 = 0x024AA2B2F08F0A91260805272DC51051C6E47AD4FA403B02B4510B647AE3D1770BAC0326A805BBEFD48056C8C121BDB8
G2_X1 = 0x13E02B6052719F607DACD3A088274F65596BD0D09920B61AB5DA61BBDC7F5049334CF11213945D57E5AC7D055D042B7E

scalars = st.one_of(st.sampled_from([1, 2, R - 1]), st.integers(1, R - 1))


def test_generator_vectors():
    assert P.g1_affine(P.G1) == (G1_X, G1_Y)
    assert P.g2_affine(P.G2)[0] == (G2_X0, G2_X1)
    assert P.g1_compress(P.G1) == (G1_X | 1 << 383).to_bytes(48, "big")  # y is the smaller root
    assert P.g2_compress(P.G2) == (G2_X1 | 1 << 383).to_bytes(48, "big") + G2_X0.to_bytes(48, "big")
    assert P.g1_uncompressed(P.G1) == G1_X.to_bytes(48, "big") + G1_Y.to_bytes(48, "big")
    (x0, x1), (y0, y1) = P.g2_affine(P.G2)
    assert P.g2_uncompressed(P.G2) == b"".join(c.to_bytes(48, "big") for c in (x1, x0, y1, y0))


def test_infinity_encodings():
    assert P.g1_affine(P.Z1) == (0, 0) and P.g2_affine(P.Z2) == ((0, 0), (0, 0))
    assert P.g1_compress(P.Z1) == b"\xc0" + bytes(47)
    assert P.g2_compress(P.Z2) == b"\xc0" + bytes(95)
    assert P.g1_uncompressed(P.Z1) == b"\x40" + bytes(95)
    assert P.g2_uncompressed(P.Z2) == b"\x40" + bytes(191)
    assert P.is_inf(P.g1_decompress(P.g1_compress(P.Z1))) and P.is_inf(P.g2_decompress(P.g2_compress(P.Z2)))
    assert P.is_inf(P.g1_from_affine((0, 0))) and P.is_inf(P.g2_from_affine(((0, 0), (0, 0))))


def larger(c):
    return c > (q - 1) // 2


@settings(max_examples=5)
@given(scalars)
def test_sign_bit_and_round_trip(k):
    for mul, compress, decompress, affine, from_affine in (
        (P.g1_mul, P.g1_compress, P.g1_decompress, P.g1_affine, P.g1_from_affine),
        (P.g2_mul, P.g2_compress, P.g2_decompress, P.g2_affine, P.g2_from_affine),
    ):
        pt = mul(k)
        data = compress(pt)
        x, y = affine(pt)
        if isinstance(y, tuple):  # Fq2: compare c1, then c0 when c1 = 0 (DESIGN §6)
            sign = larger(y[1]) if y[1] else larger(y[0])
        else:
            sign = larger(y)
        assert data[0] & 0x80 and not data[0] & 0x40 and bool(data[0] & 0x20) == sign
        assert P.eq(decompress(data), pt) and P.eq(from_affine((x, y)), pt)
        assert compress(P.neg(pt))[0] & 0x20 != data[0] & 0x20  # -P has the other root
        assert compress(P.neg(pt))[1:] == data[1:]


def test_canonical_makes_equality_structural():
    two = P.add(P.G1, P.G1)
    assert two != P.canonical(two) or two[2].n == 1
    assert P.canonical(two) == P.canonical(P.g1_mul(2))
    assert P.canonical(P.add(P.G1, P.neg(P.G1))) == P.canonical(P.Z1)


@settings(max_examples=5)
@given(st.lists(st.tuples(st.integers(0, 50), st.sampled_from([0, 1, 5, R - 1, R])), max_size=4))
def test_msm_is_sum_of_scalar_mults(pairs):
    pts = [P.g1_mul(d) for d, _ in pairs]  # d = 0 gives infinity, skipped like a zero scalar
    ks = [k for _, k in pairs]
    assert P.eq(P.msm(pts, ks, P.Z1), P.g1_mul(sum(d * k for (d, _), k in zip(pairs, ks))))
    with pytest.raises(ValueError, match="points but"):
        P.msm(pts, ks + [1], P.Z1)


def test_proof_layout():
    proof = Proof(P.g1_mul(3), P.g2_mul(5), P.g1_mul(7))
    data = proof_to_bytes(proof)
    assert len(data) == PROOF_BYTES == 192 and data == proof.to_bytes()
    assert data == P.g1_compress(proof.a) + P.g2_compress(proof.b) + P.g1_compress(proof.c)
    assert proof_from_bytes(data) == proof
    assert proof.to_affine_ints() == (P.g1_affine(proof.a), P.g2_affine(proof.b), P.g1_affine(proof.c))


def non_subgroup_g1():
    x = 1
    while pow(x**3 + 4, (q - 1) // 2, q) != 1:
        x += 1
    return (x | 1 << 383).to_bytes(48, "big")


def not_on_curve_g1():
    x = 1
    while pow(x**3 + 4, (q - 1) // 2, q) == 1:
        x += 1
    return (x | 1 << 383).to_bytes(48, "big")


@pytest.mark.parametrize(
    "data, error, match",
    [
        (bytes(191), PointEncodingError, "192 bytes"),
        (bytes(192), PointEncodingError, "proof A: .*c_flag"),
        (P.g1_compress(P.G1) + bytes(96) + P.g1_compress(P.G1), PointEncodingError, "proof B"),
        (P.g1_compress(P.G1) + P.g2_compress(P.G2) + b"\xc1" + bytes(47), PointEncodingError, "proof C"),
        (P.g1_compress(P.G1) + P.g2_compress(P.G2) + (q | 1 << 383).to_bytes(48, "big"), PointEncodingError, "proof C: .*less than"),
        (P.g1_compress(P.G1) + P.g2_compress(P.G2) + not_on_curve_g1(), NotOnCurveError, "proof C"),
        (P.g1_compress(P.G1) + P.g2_compress(P.G2) + non_subgroup_g1(), NotInSubgroupError, "proof C"),
        (P.g1_compress(P.G1) + P.g2_compress(P.G2)[:48] + b"\x80" + bytes(47) + P.g1_compress(P.G1), PointEncodingError, "proof B: .*second half"),
        (P.g1_compress(P.G1) + (1 | 1 << 383).to_bytes(48, "big") + bytes(48) + P.g1_compress(P.G1), NotInSubgroupError, "proof B"),
        (P.g1_compress(P.G1) + (2 | 1 << 383).to_bytes(48, "big") + bytes(48) + P.g1_compress(P.G1), NotOnCurveError, "proof B"),
    ],
)  # fmt: skip
def test_proof_from_bytes_errors(data, error, match):
    with pytest.raises(error, match=match):
        proof_from_bytes(data)


def test_unchecked_decompression_allows_non_subgroup_points():
    pt = P.g1_decompress(non_subgroup_g1(), check_subgroup=False)
    assert not P.in_subgroup(pt)


def test_from_affine_rejects_points_off_the_curve():
    with pytest.raises(NotOnCurveError, match="G1"):
        P.g1_from_affine((1, 1))
    with pytest.raises(NotOnCurveError, match="G2"):
        P.g2_from_affine(((1, 0), (1, 0)))
    with pytest.raises(PointEncodingError, match="48 bytes"):
        P.g1_decompress(bytes(47))
    with pytest.raises(PointEncodingError, match="96 bytes"):
        P.g2_decompress(bytes(48))


@pytest.mark.parametrize("module", ["polynomial", "qap", "points", "setup", "prove", "verify", "__init__"])
def test_docstring_examples(module):
    mod = importlib.import_module("cuzk.reference" if module == "__init__" else f"cuzk.reference.{module}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_reference_modulus_is_the_catalogs():
    from cuzk.curves import BLS12_381
    from cuzk.reference.polynomial import R

    assert R == BLS12_381.fr.modulus


def test_reference_imports_no_fast_path():
    # the oracle must stay independent of what it checks (DESIGN §2): py_ecc, galois, stdlib,
    # attrs and cuzk's pure-data modules only
    allowed_cuzk = {"cuzk.errors", "cuzk.field.params"}
    allowed_third_party = {"attrs", "py_ecc", "galois"}
    import cuzk.reference

    for path in Path(cuzk.reference.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module + "." + a.name for a in node.names] if node.module == "cuzk" else [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                ok = (
                    name in allowed_cuzk
                    or name.startswith("cuzk.reference")
                    or top in allowed_third_party
                    or (top in sys.stdlib_module_names and top != "cuzk")
                )
                assert ok, f"{path.name} imports {name}"
