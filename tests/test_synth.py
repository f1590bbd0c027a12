"""Synthesizer: Numba kernels vs Python ints, checks, input validation, PCE and .r1cs files."""

import concurrent.futures
import hashlib
import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuzk.circuit import Circuit
from cuzk.circuits import porep_like
from cuzk.errors import InputError, PceFormatError, R1csFormatError, UnsatisfiedConstraint
from cuzk.field import FR, Fr
from cuzk.synth import CsrMatrix, Synthesizer, python_synthesize, read_r1cs
from cuzk.synth import kernels as K
from cuzk.synth.pce import PCE_MAGIC

R = FR.modulus


class Cube(Circuit):
    def define(self, cs, x, out):
        x, out = cs.private(x), cs.public(out)
        cs.assert_equal(x * x * x + x + 5, out, name="cube")


class Vec(Circuit):
    def input_shapes(self):
        return {"v": (2, 3), "s": ()}

    def define(self, cs, v, s):
        s = cs.public(s)
        acc = cs.constant(0)
        for row in v:
            for x in row:
                acc = acc + cs.private(x)
        cs.assert_equal(acc, s, name="sum")


@pytest.fixture(scope="module")
def small_porep():
    c = porep_like(leaves=8, challenges=2)
    return c, Synthesizer(c, check=True)


# --- CSR mat-vec ----------------------------------------------------------------------------

@given(
    rows=st.integers(1, 12), cols=st.integers(1, 12), seed=st.integers(0, 2**32 - 1),
    density=st.floats(0.0, 1.0), special=st.booleans(),
)
def test_csr_matvec_matches_dense_python(rows, cols, seed, density, special):
    rng = np.random.default_rng(seed)
    pool = [0, 1, 2, R - 1, R - 2] if special else None
    dense = [[(int(rng.choice(pool)) if special else int.from_bytes(rng.bytes(32), "little") % R)
              if rng.random() < density else 0 for _ in range(cols)] for _ in range(rows)]
    z = [int.from_bytes(rng.bytes(32), "little") % R for _ in range(cols)]
    indptr, indices, data = [0], [], []
    for row in dense:
        for j, v in enumerate(row):
            if v:
                indices.append(j)
                data.append(v)
        indptr.append(len(indices))
    args = (np.array(indptr, np.int64), np.array(indices, np.int32),
            Fr.from_ints(data) if data else np.zeros((0, 4), np.uint64), Fr.from_ints(z))
    expect = [sum(v * x for v, x in zip(row, z)) % R for row in dense]
    assert Fr.to_ints(K.csr_matvec(*args)) == expect
    assert Fr.to_ints(K.csr_matvec_parallel(*args)) == expect


# --- synthesis vs Python ints, checks -----------------------------------------------------------

def test_porep_synthesis_matches_python_ints(small_porep):
    c, s = small_porep
    for seed in (1, 2):
        inp = c.sample_inputs(seed)
        w = s.synthesize(**inp)
        z, a, b, cc = python_synthesize(s, inp)
        assert Fr.to_ints(w.z) == z and Fr.to_ints(w.a) == a and Fr.to_ints(w.b) == b and Fr.to_ints(w.c) == cc
        assert w.public_inputs == [inp["root"], inp["comm"], *inp["challenges"]]
        assert w.digest == s.r1cs.digest and w.job_id is None


def test_threads_option_gives_same_result(small_porep):
    c, s = small_porep
    inp = c.sample_inputs(5)
    w1 = s.synthesize_inputs(inp, threads=1)
    w2 = s.synthesize_inputs(inp, threads=2)
    for name in "zabc":
        assert np.array_equal(getattr(w1, name), getattr(w2, name))


def test_synthesize_is_reentrant_across_threads(small_porep):
    c, s = small_porep
    inputs = [c.sample_inputs(seed) for seed in range(6)]
    expect = [s.synthesize(**i).z for i in inputs]
    with concurrent.futures.ThreadPoolExecutor(3) as ex:
        got = list(ex.map(lambda i: s.synthesize(**i).z, inputs))
    assert all(np.array_equal(a, b) for a, b in zip(expect, got))


def test_unsatisfied_constraint_names_index_and_name():
    s = Synthesizer(Cube(), check=True)
    with pytest.raises(UnsatisfiedConstraint) as e:
        s.synthesize(x=3, out=36)
    assert e.value.index == 2 and e.value.name == "cube" and "constraint 2 (cube)" in str(e.value)
    Synthesizer(Cube()).synthesize(x=3, out=36)  # check=False: no verification, no error


def test_unsatisfied_merkle_path(small_porep):
    c, s = small_porep
    inp = c.sample_inputs(3)
    inp["paths"][1][2][0] = (inp["paths"][1][2][0] + 1) % R
    with pytest.raises(UnsatisfiedConstraint) as e:
        s.synthesize(**inp)
    assert e.value.name == "challenge1/root"


@pytest.mark.parametrize(
    "inputs, match",
    [
        ({"x": 3}, "missing"),
        ({"x": 3, "out": 35, "y": 1}, "unexpected"),
        ({"x": -1, "out": 35}, "out of range"),
        ({"x": R, "out": 35}, "out of range"),
        ({"x": "3", "out": 35}, "integer"),
        ({"x": 3.0, "out": 35}, "integer"),
        ({"x": True, "out": 35}, "bool"),
    ],
)
def test_bad_inputs_raise_input_error(inputs, match):
    with pytest.raises(InputError, match=match):
        Synthesizer(Cube()).synthesize(**inputs)


def test_array_inputs_shapes_checked():
    s = Synthesizer(Vec(), check=True)
    assert s.synthesize(v=[[1, 2, 3], [4, 5, 6]], s=21).public_inputs == [21]
    assert s.synthesize(v=np.arange(6).reshape(2, 3), s=15).public_inputs == [15]
    for bad in ([[1, 2, 3]], [[1, 2], [3, 4]], [1, 2], 5, [[1, 2, 3], [4, 5, R]]):
        with pytest.raises(InputError):
            s.synthesize(v=bad, s=0)


def test_unordered_or_non_mapping_inputs_and_bad_threads_raise_input_error():
    s, v = Synthesizer(Cube()), Synthesizer(Vec())
    for bad in ({0: [1, 2, 3], 1: [4, 5, 6]}, [{1, 2, 3}, [4, 5, 6]]):  # iterate, but not in the caller's order
        with pytest.raises(InputError, match="sequence"):
            v.synthesize(v=bad, s=21)
    for bad in (None, [("x", 3), ("out", 35)]):
        with pytest.raises(InputError, match="mapping"):
            s.synthesize_inputs(bad)
    with pytest.raises(InputError, match=r"unexpected \['y', 1\]"):  # used to be a TypeError from sorting
        s.synthesize_inputs({"x": 3, "out": 35, 1: 2, "y": 3})
    for threads in (0, -1, "2", 2.0, True):
        with pytest.raises(InputError, match="threads"):
            s.synthesize_inputs({"x": 3, "out": 35}, threads=threads)
        with pytest.raises(InputError, match="threads"):
            Synthesizer(Cube(), threads=threads)


# --- PCE file -------------------------------------------------------------------------------------

def test_pce_round_trip(tmp_path, small_porep):
    c, s = small_porep
    path = tmp_path / "p.pce"
    s.save(path)
    t = Synthesizer.load(path, check=True)
    assert t.r1cs.digest == s.r1cs.digest and t.r1cs.names == s.r1cs.names
    assert t.program.inputs == s.program.inputs
    inp = c.sample_inputs(9)
    assert np.array_equal(t.synthesize(**inp).c, s.synthesize(**inp).c)
    assert not list(tmp_path.glob("*.tmp*"))  # atomic write leaves no temp file


def test_coefficient_factoring_round_trips(small_porep):
    _, s = small_porep
    m = s.r1cs.b
    for table, index in (m.factored(), CsrMatrix(m.indptr, m.indices, m.data).factored()):
        assert np.array_equal(table[index], m.data) and table.shape[0] < m.nnz


def test_pce_rejects_truncated_corrupted_and_wrong_version(tmp_path):
    s = Synthesizer(Cube())
    path = tmp_path / "c.pce"
    s.save(path)
    raw = path.read_bytes()
    cases = {
        "truncated": raw[: len(raw) // 2],
        "empty": b"",
        "magic": b"NOTAPCE\0" + raw[8:],
        "flipped": raw[:60] + bytes([raw[60] ^ 1]) + raw[61:],
        "tail": raw[:-1] + bytes([raw[-1] ^ 0xFF]),
    }
    body = raw[:8] + struct.pack("<I", 3) + raw[12:-32]
    cases["version"] = body + hashlib.sha256(body).digest()
    for label, data in cases.items():
        bad = tmp_path / f"{label}.pce"
        bad.write_bytes(data)
        with pytest.raises(PceFormatError):
            Synthesizer.load(bad)
    assert raw.startswith(PCE_MAGIC)


def test_pce_rejects_checksummed_but_inconsistent_program(tmp_path):
    # a file with a valid checksum whose witness program points outside the registers
    s = Synthesizer(Cube())
    path = tmp_path / "c.pce"
    s.save(path)
    raw = bytearray(path.read_bytes())
    code = s.program.code.astype("<i8").tobytes()
    at = bytes(raw).find(code)
    raw[at + 8: at + 16] = struct.pack("<q", 10**6)  # dst of the first op
    body = bytes(raw[:-32])
    path.write_bytes(body + hashlib.sha256(body).digest())
    with pytest.raises(PceFormatError, match="witness program"):
        Synthesizer.load(path)


@pytest.mark.parametrize("edit, match", [
    (lambda p: {"n_slots": 2**40}, "registers"),  # used to surface as a MemoryError per synthesis
    (lambda p: {"consts": np.vstack([p.consts, np.full((1, 4), 2**64 - 1, np.uint64)])}, ">= r"),
], ids=["n_slots", "consts"])
def test_pce_rejects_checksummed_absurd_registers_and_unreduced_constants(tmp_path, edit, match):
    import attrs

    from cuzk.synth.pce import save_pce

    s = Synthesizer(Cube())
    save_pce(tmp_path / "c.pce", s.r1cs, attrs.evolve(s.program, **edit(s.program)))
    with pytest.raises(PceFormatError, match=match):
        Synthesizer.load(tmp_path / "c.pce")


# --- .r1cs ---------------------------------------------------------------------------------------

def test_r1cs_write_parses_back(tmp_path, small_porep):
    _, s = small_porep
    r = s.r1cs
    path = tmp_path / "c.r1cs"
    r.write(path)
    raw = path.read_bytes()
    assert raw[:4] == b"r1cs" and struct.unpack_from("<II", raw, 4) == (1, 3)
    sid, size = struct.unpack_from("<IQ", raw, 12)
    n8, = struct.unpack_from("<I", raw, 24)
    prime = int.from_bytes(raw[28:60], "little")
    n_vars, n_out, n_pub, n_prv, n_labels, n_cons = struct.unpack_from("<IIIIQI", raw, 60)
    assert (sid, size, n8, prime) == (1, 64, 32, R)
    assert (n_vars, n_out, n_pub, n_prv, n_labels, n_cons) == (r.n_vars, 0, r.n_public, r.n_private, r.n_vars, r.n_constraints)
    back = read_r1cs(path)
    assert back.digest == r.digest and back.rows_as_ints() == r.rows_as_ints()


def test_r1cs_reader_rejects_bad_files(tmp_path):
    path = tmp_path / "c.r1cs"
    Synthesizer(Cube()).r1cs.write(path)
    raw = path.read_bytes()
    for data in (raw[:-5], b"r1cx" + raw[4:], raw[:4] + struct.pack("<I", 2) + raw[8:]):
        path.write_bytes(data)
        with pytest.raises(R1csFormatError):
            read_r1cs(path)


def test_digest_identifies_shape():
    d1 = Synthesizer(Cube()).r1cs.digest
    assert d1 == Synthesizer(Cube()).r1cs.digest
    assert d1 != Synthesizer(porep_like(leaves=8, challenges=1)).r1cs.digest
    assert porep_like(leaves=8, challenges=1) is not None


def test_kernels_release_the_gil():
    import threading
    import time

    for f in (K.run_witness, K.csr_matvec, K.csr_matvec_parallel, K.first_unsatisfied, K.synthesize_serial):
        assert f.targetoptions.get("nogil") is True, f
    # dynamic: the main thread keeps running Python while a long witness program runs elsewhere
    n_ops = 200000  # OP_INV r1 <- r1, ~2 µs each
    code = np.tile(np.array([K.OP_INV, 1, 1], dtype=np.int64), n_ops)
    consts = Fr.from_ints([1])
    K.run_witness(code[:3], consts, np.zeros((0, 4), np.uint64), 2)  # compiled/loaded before timing
    t = threading.Thread(target=K.run_witness, args=(code, consts, np.zeros((0, 4), np.uint64), 2))
    progress = 0
    t.start()
    time.sleep(0.01)
    while t.is_alive():
        progress += 1
    t.join()
    assert progress > 1000
