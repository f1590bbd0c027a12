"""The one ``.r1cs`` reader (``cuzk.synth.read_r1cs`` = ``cuzk.formats.snarkjs.read_r1cs``):
circom-shaped files parse, every malformation raises a ``cuzk.errors`` type naming the problem.
"""

from __future__ import annotations

import struct

import pytest

from cuzk.circuit import Circuit
from cuzk.curves import BN254
from cuzk.errors import R1csFormatError, SnarkjsFormatError
from cuzk.field import FR
from cuzk.formats import snarkjs as sj
from cuzk.synth import Synthesizer, read_r1cs
from cuzk.synth.binfile import write_container

P = FR.modulus


class Cube(Circuit):
    def define(self, cs, x, out):
        x, out = cs.private(x), cs.public(out)
        cs.assert_equal(x * x * x + x + 5, out)


def _header(n_vars=4, n_out=1, n_pub=1, n_prv=1, n_cons=1, prime=P, n8=32, extra=b""):
    return (struct.pack("<I", n8) + prime.to_bytes(n8, "little")
            + struct.pack("<IIIIQI", n_vars, n_out, n_pub, n_prv, n_vars, n_cons) + extra)


def _term(w, c):
    return struct.pack("<I", w) + c.to_bytes(32, "little")


def _lc(*terms):
    return struct.pack("<I", len(terms)) + b"".join(_term(w, c) for w, c in terms)


def _cons(p):
    # out · in = prv (wires: ONE, out, in, prv), as circom lays a 1-output, 1-input circuit out
    return _lc((1, 1)) + _lc((2, 1)) + _lc((3, p - 1))


GOOD_CONS = _cons(P)


def _write(tmp_path, sections, name="c.r1cs"):
    path = tmp_path / name
    write_container(path, b"r1cs", 1, sections)
    return path


def test_one_reader_serves_both_packages():
    assert sj.read_r1cs is read_r1cs
    assert issubclass(R1csFormatError, SnarkjsFormatError)  # sj callers catching the base still do


@pytest.mark.parametrize("prime, curve", [(P, "bls12_381"), (BN254.fr.modulus, "bn254")])
def test_circom_layout_parses_with_outputs_public_and_sections_out_of_order(tmp_path, prime, curve):
    labels = struct.pack("<4Q", 0, 1, 2, 3)
    path = _write(tmp_path, [(3, labels), (2, _cons(prime)), (1, _header(prime=prime))])
    r = read_r1cs(path)
    assert r.curve == curve  # the header's prime says which curve
    assert (r.n_public, r.n_private, r.n_constraints) == (2, 1, 1)  # outputs count as public
    assert r.rows_as_ints() == [({1: 1}, {2: 1}, {3: prime - 1})]


@pytest.mark.parametrize("curve", ["bls12_381", "bn254"])
def test_written_file_reads_back_through_both_names(tmp_path, curve):
    r1cs = Synthesizer(Cube(), curve=curve).r1cs
    r1cs.write(tmp_path / "c.r1cs")
    for reader in (read_r1cs, sj.read_r1cs):
        back = reader(tmp_path / "c.r1cs")
        assert back.curve == curve
        assert back.digest == r1cs.digest and back.rows_as_ints() == r1cs.rows_as_ints()


def test_coefficient_of_the_other_curve_is_unreduced(tmp_path):
    # BLS12-381's r - 1 exceeds BN254's r: a bn128 file holding it is malformed, not mixed
    path = _write(tmp_path, [(1, _header(prime=BN254.fr.modulus)), (2, GOOD_CONS)])
    with pytest.raises(R1csFormatError, match="coefficient >= r"):
        read_r1cs(path)


@pytest.mark.parametrize("sections, error, pattern", [
    ([(1, _header(prime=101)), (2, GOOD_CONS)], R1csFormatError, "prime 101 is neither BLS12-381's nor BN254's"),
    ([(1, _header(n8=48, prime=P)), (2, GOOD_CONS)], R1csFormatError, "48 bytes, expected 32"),
    ([(1, _header(extra=b"\0")), (2, GOOD_CONS)], R1csFormatError, "unexpected bytes at the end of the header"),
    ([(1, _header()[:40]), (2, GOOD_CONS)], R1csFormatError, "header .* truncated"),
    ([(2, GOOD_CONS)], R1csFormatError, r"missing section 1 \(header\)"),
    ([(1, _header())], R1csFormatError, r"missing section 2 \(constraints\)"),
    ([(1, _header(n_vars=2)), (2, GOOD_CONS)], R1csFormatError, "2 public wires .* only 2 wires"),
    ([(1, _header(n_vars=3, n_out=0)), (2, GOOD_CONS)], R1csFormatError, "wire 3 >= nVars 3"),
    ([(1, _header()), (2, _lc((1, P)) + _lc() + _lc())], R1csFormatError, "coefficient >= r"),
    ([(1, _header()), (2, _lc((1, 1), (1, 2)) + _lc() + _lc())], R1csFormatError, "wire 1 appears twice"),
    ([(1, _header()), (2, GOOD_CONS[:-10])], R1csFormatError, r"truncated at byte \d+ \(constraint 0 of 1\)"),
    ([(1, _header(n_cons=2)), (2, GOOD_CONS)], R1csFormatError, r"truncated at byte \d+ \(constraint 1 of 2\)"),
    ([(1, _header()), (2, GOOD_CONS + b"\0")], R1csFormatError, "1 trailing bytes in the constraint section"),
], ids=["prime", "n8", "long-header", "short-header", "no-header", "no-constraints", "few-wires",
        "wire-range", "unreduced", "duplicate-wire", "short-term", "missing-row", "trailing"])
def test_malformed_sections(tmp_path, sections, error, pattern):
    path = _write(tmp_path, sections)
    with pytest.raises(error, match=pattern):
        read_r1cs(path)


@pytest.mark.parametrize("edit, pattern", [
    (lambda b: b[:10], "too short"),
    (lambda b: b"r1cx" + b[4:], "bad magic"),
    (lambda b: b[:4] + struct.pack("<I", 2) + b[8:], "unsupported .r1cs version 2"),
    (lambda b: b[:-5], "truncated file"),
    (lambda b: b + b"\0", "trailing bytes after the last section"),
], ids=["short", "magic", "version", "truncated", "trailing"])
def test_malformed_container(tmp_path, edit, pattern):
    raw = _write(tmp_path, [(1, _header()), (2, GOOD_CONS)]).read_bytes()
    (tmp_path / "bad.r1cs").write_bytes(edit(raw))
    for reader in (read_r1cs, sj.read_r1cs):
        with pytest.raises(R1csFormatError, match=pattern):
            reader(tmp_path / "bad.r1cs")


def test_absurd_wire_count_allocates_nothing_sized_by_it(tmp_path):
    # nVars = 2^32 - 1 used to size an identity permutation (32 GiB: MemoryError or swapping)
    import tracemalloc

    path = _write(tmp_path, [(1, _header(n_vars=2**32 - 1)), (2, GOOD_CONS)])
    tracemalloc.start()
    try:
        r = read_r1cs(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert r.n_vars == 2**32 - 1 and r.rows_as_ints() == [({1: 1}, {2: 1}, {3: P - 1})]
    assert peak < 1 << 20
