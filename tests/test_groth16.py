"""cuzk.groth16 against the pure-Python reference, and the verifier's soundness checks.

Every test that proves asserts both directions: the true statement verifies and a tampered one
(proof element, public input, other circuit) does not.
"""

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_groth16_support import WASTE, CubeTag, R, SquareTag, keys_for, programs, witness_inputs

from cuzk import Synthesizer, curves
from cuzk import reference as ref
from cuzk.curve import G1, G2
from cuzk.errors import (
    BackendUnavailableError,
    InputError,
    KeyMismatchError,
    ParamsFormatError,
    ProofVerificationError,
    UnsatisfiedConstraint,
)
from cuzk.field import Fr
from cuzk.groth16 import Proof, ToxicWaste, create_proof, prepare_verifying_key, prove, setup, setup_with_waste, verify, verify_batch
from cuzk.prover import GpuProver, cuda_status

R_BLIND, S_BLIND = 0x6F5C1A7E9B3D4C8A0E2F6B5D7C9A1E3F4B6D8C0A2E5F7B9D1C3E4A6F8B0D2E5, 0x11223344556677889900


def fast_key_ints(pk) -> dict:
    """The fast key in the reference's ``to_affine_ints(omit_infinity=True)`` shape."""
    vk = pk.vk
    return {
        "vk": {
            "alpha_g1": G1.to_ints(vk.alpha_g1), "beta_g1": G1.to_ints(vk.beta_g1), "beta_g2": G2.to_ints(vk.beta_g2),
            "gamma_g2": G2.to_ints(vk.gamma_g2), "delta_g1": G1.to_ints(vk.delta_g1),
            "delta_g2": G2.to_ints(vk.delta_g2), "ic": G1.to_ints(vk.ic),
        },
        "a": G1.to_ints(pk.a), "b_g1": G1.to_ints(pk.b_g1), "b_g2": G2.to_ints(pk.b_g2),
        "l": G1.to_ints(pk.l), "h": G1.to_ints(pk.h),
    }  # fmt: skip


def bumped(inputs, i):
    out = list(inputs)
    out[i] = (out[i] + 1) % R
    return out


# ------------------------------------------------------------------ fast == reference
@settings(max_examples=4)
@given(circuit=programs, data=st.data())
def test_fast_keys_and_proof_equal_the_reference(circuit, data):
    synth = Synthesizer(circuit)
    w = synth.synthesize(**witness_inputs(circuit, lambda: data.draw(st.integers(0, R - 1))))
    r, s = data.draw(st.integers(0, R - 1), label="r"), data.draw(st.integers(0, R - 1), label="s")

    pk = setup_with_waste(synth.r1cs, ToxicWaste(**WASTE))
    rpk, _ = ref.generate_parameters(ref.from_r1cs(synth.r1cs), ref.ToxicWaste(**WASTE))
    assert fast_key_ints(pk) == rpk.to_affine_ints(omit_infinity=True)

    proof = create_proof(pk, w, r, s)
    assert proof.to_bytes() == ref.proof_to_bytes(ref.create_proof(rpk, Fr.to_ints(w.z), r, s))
    pvk = prepare_verifying_key(pk.vk)
    assert verify(pvk, w.public_inputs, proof)
    for i in range(len(w.public_inputs)):  # tags included: only the per-input QAP rows bind them
        assert not verify(pvk, bumped(w.public_inputs, i), proof)


# ------------------------------------------------------------------ one fixed circuit
@pytest.fixture(scope="module")
def cube():
    synth, pk = keys_for(CubeTag)
    w = synth.synthesize(x=3, out=35, tag=12345)
    return synth, pk, prepare_verifying_key(pk.vk), w, create_proof(pk, w, R_BLIND, S_BLIND)


@pytest.fixture(scope="module")
def square():
    synth, pk = keys_for(SquareTag)
    w = synth.synthesize(x=33, out=33 * 33 + 2, tag=12345)
    return synth, pk, w, create_proof(pk, w, R_BLIND, S_BLIND)


def test_cube_proof_matches_reference_proof(cube):
    synth, pk, pvk, w, proof = cube
    rpk, _ = ref.generate_parameters(ref.from_r1cs(synth.r1cs), ref.ToxicWaste(**WASTE))
    assert proof.to_bytes() == ref.proof_to_bytes(ref.create_proof(rpk, Fr.to_ints(w.z), R_BLIND, S_BLIND))
    assert w.public_inputs == [35, 12345] and verify(pvk, w.public_inputs, proof)


@pytest.mark.parametrize("part", ["a", "b", "c"])
def test_tampered_proof_element_fails(cube, part):
    _, _, pvk, w, proof = cube
    group = G2 if part == "b" else G1
    tampered = attrs.evolve(proof, **{part: group.add(getattr(proof, part), group.generator())})
    assert verify(pvk, w.public_inputs, proof)
    assert not verify(pvk, w.public_inputs, tampered)


@pytest.mark.parametrize("index", [0, 1], ids=["out", "untouched-tag"])
def test_changed_public_input_fails(cube, index):
    _, _, pvk, w, proof = cube
    assert verify(pvk, w.public_inputs, proof)
    assert not verify(pvk, bumped(w.public_inputs, index), proof)


def test_proof_for_another_circuit_fails(cube, square):
    _, cube_pk, cube_pvk, _, _ = cube
    _, square_pk, sw, square_proof = square
    assert verify(square_pk.vk, sw.public_inputs, square_proof)
    assert not verify(cube_pvk, sw.public_inputs, square_proof)


def test_verify_accepts_bytes_and_an_unprepared_key(cube):
    _, pk, _, w, proof = cube
    assert verify(pk.vk, w.public_inputs, proof.to_bytes())
    assert not verify(pk.vk, bumped(w.public_inputs, 0), Proof.from_bytes(proof.to_bytes()))


def test_proof_encodings_round_trip_and_malformed_proofs_are_errors(cube):
    _, _, pvk, w, proof = cube
    for back in (Proof.from_bytes(proof.to_bytes()), Proof.from_json(proof.to_json()), Proof.split(Proof.concat([proof]))[0]):
        assert back == proof and verify(pvk, w.public_inputs, back)
    assert not verify(pvk, bumped(w.public_inputs, 0), Proof.from_json(proof.to_json()))
    for bad in (proof.to_bytes()[:-1], bytes(192)):  # wrong length; no compression flag
        with pytest.raises(ParamsFormatError):
            verify(pvk, w.public_inputs, bad)
    a_at_infinity = b"\xc0" + bytes(47) + proof.to_bytes()[48:]  # well-formed, but not a proof
    assert not verify(pvk, w.public_inputs, a_at_infinity)
    with pytest.raises(InputError):
        verify(pvk, w.public_inputs, "not a proof")


def test_verify_batch(cube):
    synth, pk, pvk, w, proof = cube
    w2 = synth.synthesize(x=5, out=135, tag=0)
    p2 = create_proof(pk, w2, 7, 9)
    good = [(w.public_inputs, proof), (w2.public_inputs, p2)]
    assert verify_batch(pvk, good, rng=np.random.default_rng(1))
    assert verify_batch(pvk, [], rng=np.random.default_rng(1))
    swapped = [(w.public_inputs, proof), (w.public_inputs, p2)]  # p2 proves other inputs
    assert not verify_batch(pvk, swapped, rng=np.random.default_rng(1))
    bad_c = attrs.evolve(p2, c=G1.add(p2.c, G1.generator()))
    assert not verify_batch(pk.vk, [(w.public_inputs, proof), (w2.public_inputs, bad_c)])


# ------------------------------------------------------------------ prover entry points
def test_prove_draws_fresh_blinding(cube):
    _, pk, pvk, w, _ = cube
    p1, p2 = prove(pk, w), prove(pk, w, prepared_vk=pvk)
    assert p1 != p2  # fresh r, s each time
    assert verify(pvk, w.public_inputs, p1) and verify(pvk, w.public_inputs, p2)
    assert not verify(pvk, bumped(w.public_inputs, 0), p1)


def test_gpu_prover_on_cpu_matches_create_proof(cube):
    _, pk, pvk, w, proof = cube
    prover = GpuProver(pk, device="cpu")
    assert prover.device == "cpu"
    p = prover.prove(w, R_BLIND, S_BLIND)
    assert p == proof and verify(pvk, w.public_inputs, p)
    assert not verify(pvk, bumped(w.public_inputs, 1), p)


def _cpu_alias(**overrides):
    """BLS12-381's CPU kernels under another object, so create_proof treats them as a second backend."""
    import types

    cpu = curves.get("bls12_381").kernels
    mod = types.SimpleNamespace(**{k: getattr(cpu, k) for k in dir(cpu) if not k.startswith("_")})
    vars(mod).update(overrides)
    return mod


def test_g2_msm_on_a_second_backend_runs_on_its_own_thread(cube):
    import threading

    from cuzk.timeline import Timeline, stage_context

    cpu_backend = curves.get("bls12_381").kernels

    _, pk, _, w, proof = cube
    seen = []

    def msm_g2(points, scalars, threads=None):
        seen.append(threading.current_thread())
        return cpu_backend.msm_g2(points, scalars, threads=threads)

    tl = Timeline()
    with stage_context(tl, job_id=7):
        p = create_proof(pk, w, R_BLIND, S_BLIND, backend="cpu", g2_backend=_cpu_alias(msm_g2=msm_g2))
    assert p == proof
    assert len(seen) == 1 and seen[0] is not threading.current_thread() and not seen[0].is_alive()
    b2 = [sp for sp in tl.spans() if sp.stage == "MSM_B2"]
    assert len(b2) == 1 and b2[0].job_id == 7  # the thread reports into the caller's stage context


def test_errors_on_either_side_of_a_concurrent_g2_msm_propagate_and_leave_no_thread(cube):
    import threading

    from cuzk.errors import DeviceOutOfMemoryError

    _, pk, _, w, _ = cube
    done = threading.Event()

    def failing_g2(points, scalars, threads=None):
        raise DeviceOutOfMemoryError("G2 side failed")

    with pytest.raises(DeviceOutOfMemoryError, match="G2 side failed"):
        create_proof(pk, w, R_BLIND, S_BLIND, backend="cpu", g2_backend=_cpu_alias(msm_g2=failing_g2))

    def slow_g2(points, scalars, threads=None):
        done.wait(0.2)
        done.set()
        return _cpu_alias().msm_g2(points, scalars)

    def failing_g1(points, scalars, threads=None):
        raise ValueError("G1 side failed")

    with pytest.raises(ValueError, match="G1 side failed"):
        create_proof(pk, w, R_BLIND, S_BLIND, backend=_cpu_alias(msm_g1=failing_g1),
                     g2_backend=_cpu_alias(msm_g2=slow_g2))
    assert done.is_set()  # create_proof waited for the G2 thread before raising
    with pytest.raises(InputError, match="g2_msm"):
        GpuProver(pk, device="cpu", g2_msm="gpu")


def test_development_setup_with_seeded_rng_is_reproducible_and_sound():
    synth = Synthesizer(CubeTag())
    (pk1, vk1), (pk2, _) = setup(synth.r1cs, np.random.default_rng(7)), setup(synth.r1cs, np.random.default_rng(7))
    assert vk1 == pk2.vk and pk1.vk is vk1
    w = synth.synthesize(x=2, out=15, tag=1)
    p = create_proof(pk1, w, 3, 4)
    assert verify(vk1, w.public_inputs, p)
    assert not verify(vk1, bumped(w.public_inputs, 1), p)


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    "inputs", [[35], [35, 1, 2], [35, R], [-1, 0], [True, 0], ["35", 0], 35], ids=str
)
def test_verify_rejects_malformed_public_inputs(cube, inputs):
    _, _, pvk, w, proof = cube
    assert verify(pvk, w.public_inputs, proof)
    with pytest.raises(InputError):
        verify(pvk, inputs, proof)
    with pytest.raises(InputError):
        verify_batch(pvk, [(w.public_inputs, proof), (inputs, proof)])


def test_witness_of_another_circuit_is_refused(cube, square):
    _, pk, pvk, w, proof = cube
    _, _, sw, _ = square
    assert verify(pvk, w.public_inputs, proof)
    with pytest.raises(KeyMismatchError, match="circuit"):
        create_proof(pk, sw, 1, 2)
    with pytest.raises(KeyMismatchError):
        GpuProver(pk, device="cpu").prove(sw)
    # same digest but a truncated assignment: the shape check names the variable count
    with pytest.raises(KeyMismatchError, match="variables"):
        create_proof(pk, attrs.evolve(w, z=w.z[:-1]), 1, 2)


def test_unsatisfied_witness_is_refused_with_the_row(cube):
    _, pk, pvk, w, _ = cube
    a = w.a.copy()
    a[1] = Fr.from_ints([7])[0]  # row 1 of A·z no longer matches
    with pytest.raises(UnsatisfiedConstraint) as e:
        prove(pk, attrs.evolve(w, a=a))
    assert e.value.index == 1 and "constraint 1" in str(e.value)


def test_tampered_assignment_never_leaves_as_a_proof(cube):
    # A·z, B·z, C·z still satisfy every row, but z itself was changed: only the final
    # verification can notice, and the prover must raise instead of returning the proof.
    _, pk, pvk, w, _ = cube
    z = w.z.copy()
    z[-1] = Fr.from_ints([5])[0]
    bad = attrs.evolve(w, z=z)
    assert not verify(pvk, w.public_inputs, create_proof(pk, bad, 1, 2))
    with pytest.raises(ProofVerificationError):
        prove(pk, bad, 1, 2)


@pytest.mark.parametrize("r, s", [(R, 1), (1, -1), (1.5, 1)])
def test_blinding_out_of_range_is_refused(cube, r, s):
    _, pk, pvk, w, proof = cube
    assert verify(pvk, w.public_inputs, proof)
    with pytest.raises(InputError):
        create_proof(pk, w, r, s)


@pytest.mark.skipif(cuda_status()[0], reason="a usable GPU is present")
def test_cuda_device_without_gpu_is_unavailable(cube):
    _, pk, _, _, _ = cube
    with pytest.raises(BackendUnavailableError, match="cuda"):
        GpuProver(pk, device="cuda")
    assert GpuProver(pk).device == "cpu"  # "auto" falls back


def test_gpu_prover_rejects_bad_arguments(cube):
    _, pk, _, _, _ = cube
    with pytest.raises(InputError):
        GpuProver(pk, device="tpu")
    with pytest.raises(InputError):
        GpuProver(pk.vk)
    for bad in (0, -2, "2", 1.5):  # refused at construction, not at the first proof
        with pytest.raises(InputError, match="threads"):
            GpuProver(pk, device="cpu", threads=bad)
    for bad in (-1, "0", True):
        with pytest.raises(InputError, match="device_id"):
            GpuProver(pk, device="cpu", device_id=bad)


def test_batch_verify_setup_and_proof_bytes_refuse_malformed_arguments(cube):
    _, pk, _, w, proof = cube
    vk = pk.vk
    for items, what in (([5], "item 0"), ([([35],)], "item 0"), (None, "iterable"), ("ab", "iterable")):
        with pytest.raises(InputError, match=what):
            verify_batch(vk, items)
    with pytest.raises(InputError, match="rng"):
        verify_batch(vk, [(w.public_inputs, proof)], rng=5)
    with pytest.raises(InputError, match="rng"):
        setup(Synthesizer(CubeTag()).r1cs, rng="seed")
    for data in ("ab" * 96, None, 192):  # bytes(192) would be 192 zero bytes: a type error, not a length one
        with pytest.raises(InputError, match="takes bytes"):
            Proof.from_bytes(data)
    assert Proof.from_bytes(memoryview(proof.to_bytes())) == proof


@pytest.mark.parametrize("bad", [0, R, -1, 1.5, True])
def test_toxic_waste_out_of_range_is_refused(bad):
    with pytest.raises(InputError, match="toxic waste tau"):
        ToxicWaste(bad, 1, 2, 3, 4)
    assert "hidden" in repr(ToxicWaste(5, 1, 2, 3, 4))


def test_wrong_objects_get_clear_errors(cube):
    _, pk, _, _, _ = cube
    with pytest.raises(InputError, match="R1CS"):
        setup(None)
    with pytest.raises(InputError, match="R1CS"):
        setup_with_waste({"n_public": 1}, ToxicWaste(1, 2, 3, 4, 5))
    for bad in (None, {"x": 3}):
        with pytest.raises(InputError, match="Synthesized"):
            GpuProver(pk, device="cpu").prove(bad)
