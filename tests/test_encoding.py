"""zcash point encodings: round trips, byte equality with py_ecc, every malformed class rejected."""

import numpy as np
import py_ecc.optimized_bls12_381 as ref
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from py_ecc.bls import point_compression as pc

from cuzk.curve import G1, G2
from cuzk.curve.encoding import encoded_size, point_from_bytes, point_to_bytes, points_from_bytes, points_to_bytes
from cuzk.errors import FieldValueError, NotInSubgroupError, NotOnCurveError, PointEncodingError
from cuzk.field import FQ, FR

P = FQ.modulus
GROUPS = [pytest.param(G1, id="G1"), pytest.param(G2, id="G2")]
_POOLS = {}


def pool(group):
    if group.name not in _POOLS:
        pts = group.random(16, np.random.default_rng(7))
        _POOLS[group.name] = np.concatenate([pts, group.neg(pts), group.identity(1)])
    return _POOLS[group.name]


def py_ecc_compressed(group, k):
    """py_ecc's zcash compressed bytes of k·generator."""
    if group is G1:
        return pc.compress_G1(ref.multiply(ref.G1, k)).to_bytes(48, "big")
    z1, z2 = pc.compress_G2(ref.multiply(ref.G2, k))
    return z1.to_bytes(48, "big") + z2.to_bytes(48, "big")


def uncompressed_by_hand(group, point):
    x, y = group.to_ints(point)
    coords = [x, y] if group is G1 else [x[1], x[0], y[1], y[0]]
    return b"".join(c.to_bytes(48, "big") for c in coords)


@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("compressed", [True, False])
def test_round_trip_batch(group, compressed):
    pts = pool(group)
    data = points_to_bytes(group, pts, compressed=compressed)
    assert len(data) == len(pts) * encoded_size(group, compressed)
    back = points_from_bytes(group, data, compressed=compressed)
    assert np.array_equal(back, pts)
    rows = np.frombuffer(data, dtype=np.uint8).reshape(len(pts), -1)
    assert np.array_equal(points_from_bytes(group, rows, compressed=compressed, checked=False), pts)


@pytest.mark.parametrize("group", GROUPS)
@settings(max_examples=8)
@given(k=st.one_of(st.integers(1, 20), st.integers(1, FR.modulus - 1)))
def test_matches_py_ecc_bytes(group, k):
    ours = point_to_bytes(group, group.mul(group.generator(), k))
    assert ours == py_ecc_compressed(group, k)


@pytest.mark.parametrize("group", GROUPS)
def test_py_ecc_decodes_ours_and_identity(group):
    pts = pool(group)[[0, 16, 32]]  # P, -P (other sign bit), identity
    for p in pts:
        data = point_to_bytes(group, p)
        if group is G1:
            dec = ref.normalize(pc.decompress_G1(int.from_bytes(data, "big")))
            ours = group.to_ints(p)
            assert ref.is_inf(pc.decompress_G1(int.from_bytes(data, "big"))) or (dec[0].n, dec[1].n) == ours
        else:
            q = pc.decompress_G2((int.from_bytes(data[:48], "big"), int.from_bytes(data[48:], "big")))
            if group.eq(p, group.identity()):
                assert ref.is_inf(q)
            else:
                dec = ref.normalize(q)
                assert (tuple(dec[0].coeffs), tuple(dec[1].coeffs)) == group.to_ints(p)
        assert point_to_bytes(group, p, compressed=False) == (
            uncompressed_by_hand(group, p) if not group.eq(p, group.identity()) else b"\x40" + bytes(encoded_size(group, False) - 1)
        )


@pytest.mark.parametrize("group", GROUPS)
def test_canonical_infinity(group):
    assert point_to_bytes(group, group.identity()) == b"\xc0" + bytes(encoded_size(group) - 1)
    assert point_to_bytes(group, group.identity(), compressed=False) == b"\x40" + bytes(encoded_size(group, False) - 1)


def _with(data: bytes, index: int, value: int) -> bytes:
    b = bytearray(data)
    b[index] = value
    return bytes(b)


@pytest.mark.parametrize("group", GROUPS)
def test_malformed_encodings_rejected(group):
    g = group.generator()
    comp = point_to_bytes(group, g)
    unc = point_to_bytes(group, g, compressed=False)
    inf_c = b"\xc0" + bytes(len(comp) - 1)
    inf_u = b"\x40" + bytes(len(unc) - 1)
    bad = {
        "length": (comp[:-1], True, "bytes"),
        "no compression flag": (_with(comp, 0, comp[0] & 0x7F), True, "flag"),
        "compression flag on uncompressed": (_with(unc, 0, unc[0] | 0x80), False, "flag"),
        "sign bit on uncompressed": (_with(unc, 0, unc[0] | 0x20), False, "flag"),
        "sign bit on infinity": (_with(inf_c, 0, 0xE0), True, "infinity"),
        "junk after infinity": (_with(inf_c, len(comp) - 1, 1), True, "infinity"),
        "junk in infinity flag byte": (_with(inf_u, 0, 0x41), False, "infinity"),
        "uncompressed infinity in compressed read": (inf_u[: len(comp)], True, "flag"),
    }
    for name, (data, compressed, needle) in bad.items():
        with pytest.raises(PointEncodingError, match=needle):
            point_from_bytes(group, data, compressed=compressed)
        assert name


@pytest.mark.parametrize("group", GROUPS)
def test_coordinates_not_reduced(group):
    width = 48
    # p + 1 ≡ 1 fits in 381 bits, so only the range check can reject it
    big = (P + 1).to_bytes(width, "big")
    small = (1).to_bytes(width, "big")
    xs = [big] if group is G1 else [big + small, small + big]  # G2: c1 ≥ p, then c0 ≥ p
    for raw_x in xs:
        with pytest.raises(PointEncodingError, match="x coordinate"):
            point_from_bytes(group, _with(raw_x, 0, raw_x[0] | 0x80))
        with pytest.raises(PointEncodingError, match="x coordinate"):
            point_from_bytes(group, raw_x + raw_x, compressed=False)
    g = group.generator()
    _, y = group.to_ints(g)
    good_x = point_to_bytes(group, g, compressed=False)[: width * group.degree]
    ys = [[y + P]] if group is G1 else [[y[1] + P, y[0]], [y[1], y[0] + P]]
    for coeffs in ys:
        big_y = b"".join(c.to_bytes(width, "big") for c in coeffs)
        with pytest.raises(PointEncodingError, match="y coordinate"):
            point_from_bytes(group, good_x + big_y, compressed=False)


@pytest.mark.parametrize("group", GROUPS)
def test_not_on_curve(group):
    unc = bytearray(point_to_bytes(group, group.generator(), compressed=False))
    unc[-1] ^= 1  # y off by one
    with pytest.raises(NotOnCurveError, match="not on the curve"):
        point_from_bytes(group, bytes(unc), compressed=False)
    # an x whose x³ + b is a non-residue has no point; search a small one
    for x in range(1, 200):
        data = bytearray(encoded_size(group))
        data[-1] = x
        data[0] = 0x80
        try:
            point_from_bytes(group, bytes(data), checked=False)
        except NotOnCurveError:
            break
    else:
        pytest.fail("no x without a curve point among 1..199")
    # (0, 0) without the infinity flag is not a point
    with pytest.raises(NotOnCurveError):
        point_from_bytes(group, bytes(encoded_size(group, False)), compressed=False)


@pytest.mark.parametrize("group", GROUPS)
def test_not_in_subgroup_only_when_checked(group):
    # a curve point outside the subgroup: cofactor-order torsion r·Q of a hashed point Q
    for x in range(1, 100):
        data = bytearray(encoded_size(group))
        data[-1], data[0] = x, 0x80
        try:
            q = point_from_bytes(group, bytes(data), checked=False)
            break
        except NotOnCurveError:
            continue
    a = group.add(group.generator(), group.mul(q, FR.modulus))
    assert group.is_on_curve(a) and not group.is_in_subgroup(a)
    for compressed in (True, False):
        data = point_to_bytes(group, a, compressed=compressed)
        with pytest.raises(NotInSubgroupError, match="subgroup"):
            point_from_bytes(group, data, compressed=compressed)
        assert np.array_equal(point_from_bytes(group, data, compressed=compressed, checked=False), a)


def test_batch_error_names_the_row():
    pts = pool(G1)[:5]
    data = bytearray(points_to_bytes(G1, pts))
    data[3 * 48] &= 0x7F
    with pytest.raises(PointEncodingError, match="point 3"):
        points_from_bytes(G1, bytes(data))
    with pytest.raises(PointEncodingError, match="multiple of 48"):
        points_from_bytes(G1, bytes(data[:-1]))


@pytest.mark.parametrize("group", [G1, G2], ids=["G1", "G2"])
def test_non_bytes_and_unreduced_points_rejected(group):
    # str/list/None/int were bare TypeErrors from memoryview()/len(); a float array's raw bytes were decoded
    for data in ("ab" * 24, [0] * 48, None, 5, np.zeros(6, np.float64), memoryview(bytes(192))[::2]):
        with pytest.raises(PointEncodingError, match="bytes"):
            points_from_bytes(group, data)
        with pytest.raises(PointEncodingError, match="bytes"):
            point_from_bytes(group, data)
    bad = group.identity()
    bad[0].reshape(-1, 6)[0] = 2**64 - 1  # x >= p: it used to be encoded as if reduced mod p
    with pytest.raises(FieldValueError, match=">= p"):
        point_to_bytes(group, bad)


@pytest.mark.parametrize("group", [G1, G2])
def test_compressed_must_be_a_bool(group):
    from cuzk.errors import InputError

    g = group.generator()
    for flag in ("no", 0.0, None, 1):  # truthiness would silently pick a format
        with pytest.raises(InputError, match="compressed must be True or False"):
            point_to_bytes(group, g, compressed=flag)
        with pytest.raises(InputError, match="compressed must be True or False"):
            points_from_bytes(group, bytes(96), compressed=flag)
    assert point_from_bytes(group, point_to_bytes(group, g, compressed=np.bool_(False)), compressed=False).tobytes() \
        == np.asarray(g).tobytes()


def _coords_of(group, point):
    from cuzk.curve.coords import canonical_coords

    v = canonical_coords(point, FQ)
    return (tuple(v[:group.degree]), tuple(v[group.degree:]))


@pytest.mark.parametrize("group", GROUPS)
@settings(max_examples=12, deadline=None)
@given(k=st.one_of(st.integers(1, 20), st.integers(1, FR.modulus - 1)), neg=st.booleans())
def test_compressed_from_coords_matches_the_kernel_and_py_ecc(group, k, neg):
    """The plain-Python encoder a proof's bytes use gives the batch kernel's bytes (both sign
    flags: a point and its negation), and py_ecc's."""
    from cuzk.curve.encoding import compressed_from_coords

    pt = group.mul(group.generator(), k)
    pt = group.neg(pt) if neg else pt
    x, y = _coords_of(group, pt)
    ours = compressed_from_coords(x, y, P, encoded_size(group))
    assert ours == point_to_bytes(group, pt)
    if not neg:
        assert ours == py_ecc_compressed(group, k)


@pytest.mark.parametrize("group", GROUPS)
def test_compressed_from_coords_identity_and_g2_sign_from_c0(group):
    from cuzk.curve.encoding import compressed_from_coords

    zero = (0,) * group.degree
    assert compressed_from_coords(zero, zero, P, encoded_size(group)) == point_to_bytes(group, group.identity())
    if group is G2:  # y with c1 = 0: the sign comes from c0 (the kernel's rule, on raw coordinates)
        for c0 in (5, P - 5):
            pt = G2.from_ints(((7, 9), (c0, 0)))  # not on the curve: only the flag rule is compared
            got = compressed_from_coords((7, 9), (c0, 0), P, 96)
            assert got == point_to_bytes(G2, pt)
            assert bool(got[0] & 0x20) == (c0 > P // 2)


def test_proof_coordinates_reject_unreduced_limbs():
    from cuzk.groth16 import Proof

    g = G1.generator()
    bad = g.copy()
    bad[0] = np.array([0xFFFFFFFFFFFFFFFF] * 6, np.uint64)  # >= p
    proof = Proof(a=bad, b=G2.generator(), c=g)
    with pytest.raises(FieldValueError, match="proof: a coordinate >= p"):
        proof.coordinates()
    with pytest.raises(FieldValueError):
        proof.to_bytes()
