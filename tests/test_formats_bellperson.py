"""bellperson ``.params``/``.vk`` layout: byte-exact against an independent encoder of the
reference keys, round trips that prove identically, and every malformed-file class."""

import io
import os
import re
import struct

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_groth16_support import WASTE, CubeTag, RandomCircuit, keys_for

from cuzk import Synthesizer
from cuzk import reference as ref
from cuzk.curve import G1
from cuzk.errors import KeyMismatchError, ParamsFormatError
from cuzk.field import FQ
from cuzk.formats import bellperson as bp
from cuzk.groth16 import bellperson_layout
from cuzk.groth16 import ProvingKey, ToxicWaste, VerifyingKey, create_proof, setup_with_waste, verify
from cuzk.prover import GpuProver

R_BLIND, S_BLIND = 0x1234567, 0x7654321
G1U, G2U = 96, 192  # uncompressed sizes
VK_FIXED_BYTES = 3 * G1U + 3 * G2U


# ------------------------------------------------------------------ independent encoder
def enc_g1(p) -> bytes:
    x, y = p
    return x.to_bytes(48, "big") + y.to_bytes(48, "big")


def enc_g2(p) -> bytes:
    (x0, x1), (y0, y1) = p  # zcash order: c1 then c0
    return b"".join(c.to_bytes(48, "big") for c in (x1, x0, y1, y0))


def expected_params_bytes(d) -> bytes:
    vk = d["vk"]
    out = [enc_g1(vk["alpha_g1"]), enc_g1(vk["beta_g1"]), enc_g2(vk["beta_g2"]), enc_g2(vk["gamma_g2"]),
           enc_g1(vk["delta_g1"]), enc_g2(vk["delta_g2"]), struct.pack(">I", len(vk["ic"]))]
    out += [enc_g1(p) for p in vk["ic"]]
    for name, enc in (("h", enc_g1), ("l", enc_g1), ("a", enc_g1), ("b_g1", enc_g1), ("b_g2", enc_g2)):
        out += [struct.pack(">I", len(d[name]))] + [enc(p) for p in d[name]]
    return b"".join(out)


def sections(pk):
    """field -> (offset of its u32 count or None, offset of its first point, point count, point size)."""
    out, off = {}, 0
    for name, size in (("alpha_g1", G1U), ("beta_g1", G1U), ("beta_g2", G2U), ("gamma_g2", G2U),
                       ("delta_g1", G1U), ("delta_g2", G2U)):
        out[name] = (None, off, 1, size)
        off += size
    for name, n, size in (("ic", pk.vk.ic.shape[0], G1U), ("h", pk.h.shape[0], G1U), ("l", pk.l.shape[0], G1U),
                          ("a", pk.a.shape[0], G1U), ("b_g1", pk.b_g1.shape[0], G1U), ("b_g2", pk.b_g2.shape[0], G2U)):
        out[name] = (off, off + 4, n, size)
        off += 4 + n * size
    return out


def non_subgroup_g1():
    """An affine G1 point on y² = x³ + 4 outside the order-r subgroup (cofactor ≠ 1)."""
    p = FQ.modulus
    x = 1
    while True:
        rhs = (x**3 + 4) % p
        y = pow(rhs, (p + 1) // 4, p)  # p ≡ 3 mod 4
        if y * y % p == rhs:
            return x, y
        x += 1


INFINITY_U = {G1U: b"\x40" + bytes(G1U - 1), G2U: b"\x40" + bytes(G2U - 1)}


# ------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def cube():
    synth, pk = keys_for(CubeTag)
    return synth, pk, synth.synthesize(x=3, out=35, tag=99)


@pytest.fixture(scope="module")
def params(cube, tmp_path_factory):
    _, pk, _ = cube
    path = tmp_path_factory.mktemp("params") / "cube.params"
    pk.write(path)
    return path.read_bytes()


def patched(data: bytes, at: int, new: bytes) -> bytes:
    return data[:at] + new + data[at + len(new):]


def read_err(data: bytes, *, checked=True) -> str:
    with pytest.raises(ParamsFormatError) as e:
        bp.read_params(data, checked=checked)
    return str(e.value)


# ------------------------------------------------------------------ layout and round trips
def test_params_bytes_equal_an_independent_encoding_of_the_reference_key(cube, params):
    synth, pk, _ = cube
    rpk, _ = ref.generate_parameters(ref.from_r1cs(synth.r1cs), ref.ToxicWaste(**WASTE))
    assert params == expected_params_bytes(rpk.to_affine_ints(omit_infinity=True))
    assert params[: len(pk.vk.to_bytes())] == pk.vk.to_bytes() == bp.vk_to_bytes(pk.vk)


def test_written_params_prove_identically(cube, tmp_path):
    synth, pk, w = cube
    path = tmp_path / "k.params"
    pk.write(path)
    assert path.stat().st_mode & 0o777 == 0o644 and os.listdir(tmp_path) == ["k.params"]
    back = ProvingKey.read(path, r1cs=synth.r1cs)
    assert back.digest == pk.digest and back.density == pk.density and back.vk == pk.vk
    for name in ("h", "l", "a", "b_g1", "b_g2"):
        assert np.array_equal(getattr(back, name), getattr(pk, name)), name
    proof = create_proof(back, w, R_BLIND, S_BLIND)
    assert proof == create_proof(pk, w, R_BLIND, S_BLIND)
    assert GpuProver(back, device="cpu").prove(w, R_BLIND, S_BLIND) == proof
    assert verify(back.vk, w.public_inputs, proof)
    assert not verify(back.vk, [35, 100], proof)


def test_params_without_circuit_need_density_for_sparse_queries(cube, params):
    _, pk, _ = cube
    back = bp.read_params(io.BytesIO(params))
    assert back.density is None and back.digest is None and back.convention == "bellperson"
    assert back.b_g1.shape[0] < back.n_vars  # CubeTag's B matrix is sparse: bases were omitted
    with pytest.raises(KeyMismatchError, match="with_circuit"):
        GpuProver(back, device="cpu")


def test_read_accepts_paths_bytes_and_unseekable_streams(cube, params, tmp_path):
    _, pk, _ = cube
    path = tmp_path / "x.params"
    path.write_bytes(params)

    class Pipe(io.RawIOBase):  # readable, not seekable
        def __init__(self, b):
            self.b = io.BytesIO(b)

        def readable(self):
            return True

        def readinto(self, buf):
            n = self.b.readinto(buf)
            return n

    keys = [bp.read_params(path), bp.read_params(str(path)), bp.read_params(params), bp.read_params(Pipe(params))]
    with open(path, "rb") as f:
        keys.append(bp.read_params(f))
    assert all(k.vk == pk.vk and np.array_equal(k.b_g2, pk.b_g2) for k in keys)
    with pytest.raises(ParamsFormatError):
        bp.read_params(12345)


def test_vk_bytes_and_json_round_trip(cube):
    _, pk, _ = cube
    vk = pk.vk
    assert VerifyingKey.from_bytes(vk.to_bytes()) == vk
    assert bp.vk_from_bytes(vk.to_bytes(), checked=False) == vk
    assert bp.vk_from_json(bp.vk_to_json(vk)) == vk
    assert len(vk.to_bytes()) == VK_FIXED_BYTES + 4 + vk.ic.shape[0] * G1U


# ------------------------------------------------------------------ malformed files
FIELDS = ["alpha_g1", "beta_g1", "beta_g2", "gamma_g2", "delta_g1", "delta_g2", "ic", "h", "l", "a", "b_g1", "b_g2"]
COUNTED = ["ic", "h", "l", "a", "b_g1", "b_g2"]


@pytest.mark.parametrize("field", FIELDS)
def test_truncated_in_each_section(cube, params, field):
    _, pk, _ = cube
    count_at, first, n, size = sections(pk)[field]
    cut = first + (n * size) // 2 + 1  # inside the points
    msg = read_err(params[:cut])
    if count_at is None:
        assert f"truncated in {field} at byte offset {first}" in msg
    else:  # the count is checked against the bytes left before any point is read
        assert f"{field} count {n} at byte offset {count_at} needs {n * size} bytes" in msg
        msg = read_err(params[: count_at + 2])  # inside the count itself
        assert f"truncated in {field} count at byte offset {count_at}" in msg


@pytest.mark.parametrize("field", COUNTED)
@pytest.mark.parametrize("count", [0xFFFFFFFF, "one more"])
def test_count_larger_than_bytes_left(cube, params, field, count):
    _, pk, _ = cube
    count_at, first, _, size = sections(pk)[field]
    # "one more": one point more than all the bytes after the count could hold (the boundary)
    value = (len(params) - first) // size + 1 if count == "one more" else count
    msg = read_err(patched(params, count_at, struct.pack(">I", value)))
    assert f"{field} count {value} at byte offset {count_at}" in msg and "left" in msg


@pytest.mark.parametrize("field", FIELDS)
def test_point_off_the_curve(cube, params, field):
    _, pk, _ = cube
    _, first, n, size = sections(pk)[field]
    at = first + (n - 1) * size  # the last point of the section
    bad = patched(params, at + size - 1, bytes([params[at + size - 1] ^ 1]))  # flip a bit of y
    for checked in (True, False):  # the on-curve check is never skipped
        msg = read_err(bad, checked=checked)
        assert f"{field}[{n - 1}] at byte offset {at}" in msg and "curve" in msg


@pytest.mark.parametrize("field", FIELDS)
def test_point_at_infinity_is_forbidden(cube, params, field):
    _, pk, _ = cube
    _, first, _, size = sections(pk)[field]
    for checked in (True, False):
        msg = read_err(patched(params, first, INFINITY_U[size]), checked=checked)
        assert f"{field}[0] at byte offset {first} is the point at infinity" in msg


def test_bad_flags_and_unreduced_coordinates(cube, params):
    _, pk, _ = cube
    _, first, _, _ = sections(pk)["h"]
    msg = read_err(patched(params, first, bytes([params[first] | 0x80])))  # compression flag on x ‖ y
    assert f"h[0] at byte offset {first}" in msg and "flag" in msg
    unreduced = (FQ.modulus + 1).to_bytes(48, "big")
    msg = read_err(patched(params, first, unreduced))
    assert f"h[0] at byte offset {first}" in msg and "not reduced" in msg


def test_subgroup_check_runs_only_when_checked(cube, params):
    _, pk, _ = cube
    x, y = non_subgroup_g1()
    _, first, _, _ = sections(pk)["l"]
    bad = patched(params, first + G1U, enc_g1((x, y)))  # l[1]
    msg = read_err(bad)
    assert f"l[1] at byte offset {first + G1U}" in msg and "subgroup" in msg
    trusted = bp.read_params(bad, checked=False)
    assert G1.to_ints(trusted.l[1]) == (x, y) and not G1.is_in_subgroup(trusted.l[1])


def test_structural_checks(cube, params):
    _, pk, _ = cube
    s = sections(pk)
    assert "trailing bytes" in read_err(params + b"\x00")
    # drop h's last point: 2^k − 2 points is no domain
    h_count, h_first, hn, _ = s["h"]
    end = h_first + hn * G1U
    short_h = patched(params[: end - G1U] + params[end:], h_count, struct.pack(">I", hn - 1))
    assert f"h count {hn - 1} at byte offset {h_count} is not 2^k" in read_err(short_h)
    # drop b_g2's last point: b_g1 and b_g2 must pair up
    b2_count, _, b2n, _ = s["b_g2"]
    short_b2 = patched(params[:-G2U], b2_count, struct.pack(">I", b2n - 1))
    assert f"b_g2 count {b2n - 1} at byte offset {b2_count}" in read_err(short_b2)
    # fewer A points than inputs
    a_count, a_first, an, _ = s["a"]
    cut = a_first + 2 * G1U
    few_a = patched(params[:cut] + params[a_first + an * G1U :], a_count, struct.pack(">I", 2))
    assert f"a count 2 at byte offset {a_count}" in read_err(few_a)
    # an empty IC
    ic_count, ic_first, icn, _ = s["ic"]
    no_ic = patched(params[:ic_first] + params[ic_first + icn * G1U :], ic_count, struct.pack(">I", 0))
    assert "ic count is 0" in read_err(no_ic)


def test_vk_errors(cube):
    _, pk, _ = cube
    data = pk.vk.to_bytes()
    for bad, needle in [
        (data[:-1], "ic count 3 at byte offset 864 needs 288 bytes"),
        (data[:100], "truncated in beta_g1 at byte offset 96"),
        (data + b"\x00", "trailing bytes"),
        (patched(data, VK_FIXED_BYTES, struct.pack(">I", 1000)), "ic count 1000 at byte offset 864"),
        (patched(data, 2 * G1U, INFINITY_U[G2U]), "beta_g2[0] at byte offset 192 is the point at infinity"),
    ]:
        with pytest.raises(ParamsFormatError, match=re.escape(needle)):
            VerifyingKey.from_bytes(bad)
    for text in ["not json", "{}", '{"ic": "00"}', "[" * 100_000 + "]" * 100_000, bp.vk_to_json(pk.vk).replace('"alpha_g1": "', '"alpha_g1": "zz')]:
        with pytest.raises(ParamsFormatError):
            bp.vk_from_json(text)


@settings(max_examples=40)
@given(data=st.data())
def test_corrupted_vk_bytes_never_escape_as_other_errors(cube, data):
    _, pk, _ = cube
    raw = bytearray(pk.vk.to_bytes())
    cut = data.draw(st.integers(0, len(raw)), label="cut")
    at = data.draw(st.integers(0, len(raw) - 1), label="at")
    raw[at] ^= data.draw(st.integers(1, 255), label="xor")
    for blob in (bytes(raw), bytes(raw[:cut])):
        try:
            vk = bp.vk_from_bytes(blob)
        except ParamsFormatError as e:
            assert "offset" in str(e) or "trailing" in str(e)
        else:  # only a flip that still yields a valid encoding may parse (e.g. inside a count's high byte never does)
            assert isinstance(vk, VerifyingKey) and vk != pk.vk


# ------------------------------------------------------------------ writing
def test_write_refuses_another_convention(cube, tmp_path):
    _, pk, _ = cube
    path = tmp_path / "s.params"
    with pytest.raises(ParamsFormatError, match="snarkjs"):
        bp.write_params(attrs.evolve(pk, convention="snarkjs"), path)
    assert not path.exists() and os.listdir(tmp_path) == []


def test_write_refuses_infinity_and_is_atomic(cube, tmp_path):
    _, pk, _ = cube
    # xs[1] is used by no constraint: its L point is the identity, which bellperson cannot read
    synth = Synthesizer(RandomCircuit(2, 0, (("mul", 0, 0, 0),), (2,)))
    bad = setup_with_waste(synth.r1cs, ToxicWaste(**WASTE))
    path = tmp_path / "k.params"
    pk.write(path)
    before = path.read_bytes()
    with pytest.raises(ParamsFormatError, match=r"l\[1\] is the point at infinity"):
        bad.write(path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["k.params"]
    assert bp.read_params(path).vk == pk.vk
    with pytest.raises(ParamsFormatError):
        bp.write_params(pk.vk, path)


# ------------------------------------------------------------------ threaded checks
OFF_CURVE = enc_g1((1, 1))  # 1 ≠ 1 + 4


@pytest.fixture(scope="module")
def wide(cube, tmp_path_factory):
    """(bytes, offset of h[0], the h query): the Cube key with a 1023-point h query (8 random
    points tiled), so a checked read spans many decode blocks (and many chunks with a small _CHUNK)."""
    _, pk, _ = cube
    h = np.tile(G1.random(8, np.random.default_rng(5)), (128, 1, 1))[:1023]
    path = tmp_path_factory.mktemp("wide") / "wide.params"
    attrs.evolve(pk, h=h).write(path)
    data = path.read_bytes()
    return data, sections(bp.read_params(data, checked=False))["h"][1], h


@pytest.mark.parametrize("threads", [1, 3])
def test_threaded_read_matches_the_key(wide, threads):
    data, _, h = wide
    assert np.array_equal(bp.read_params(data, threads=threads).h, h)


@pytest.mark.parametrize("chunk", [1 << 16, 200])
@pytest.mark.parametrize("threads", [1, 2, 5])
def test_first_bad_point_wins_whatever_the_threads(wide, monkeypatch, chunk, threads):
    """The lowest bad index is named even when a cheaper failure sits in a later block (found
    first by another thread), after an infinity, or in a later chunk."""
    data, first, _ = wide
    monkeypatch.setattr(bellperson_layout, "_CHUNK", chunk)  # the reader behind bp.read_params
    sub, inf = enc_g1(non_subgroup_g1()), INFINITY_U[G1U]
    cases = [
        ({700: sub, 900: OFF_CURVE, 1000: inf}, 700, "subgroup"),
        ({40: OFF_CURVE, 1000: sub}, 40, "curve"),
        ({100: sub, 150: inf}, 100, "subgroup"),  # a bad point before an infinity in the same chunk
        ({150: inf, 170: OFF_CURVE, 700: sub}, 150, "infinity"),
    ]
    for bad, index, words in cases:
        patched_data = data
        for i, enc in bad.items():
            patched_data = patched(patched_data, first + i * G1U, enc)
        with pytest.raises(ParamsFormatError) as e:
            bp.read_params(patched_data, threads=threads)
        msg = str(e.value)
        assert f"h[{index}] at byte offset {first + index * G1U}" in msg and words in msg, (bad, msg)


def test_threads_must_be_positive(params):
    from cuzk.errors import InputError

    for bad in (0, -1, 1.5, True):
        with pytest.raises(InputError, match="threads"):
            bp.read_params(params, threads=bad)
