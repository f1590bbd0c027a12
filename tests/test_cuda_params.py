"""The generated CUDA parameter headers (one per curve, from its spec) mean what they say."""

import re
import sys

import pytest

from cuzk.curves import CURVES
from cuzk.kernels import cuda

sys.path.insert(0, str(cuda.CU_DIR.parents[2] / "scripts"))
import gen_cuda_params  # noqa: E402

CURVE_NAMES = sorted(CURVES)


def _arrays(text: str) -> dict[str, list[int]]:
    out = {}
    for name, body in re.findall(r"uint32_t (\w+)\[\d+\] = \{([^}]*)\};", text):
        out[name] = [int(v.rstrip("u"), 16) for v in body.replace(" ", "").split(",")]
    return out


def _int(limbs: list[int]) -> int:
    return sum(v << (32 * i) for i, v in enumerate(limbs))


@pytest.mark.parametrize("curve", CURVE_NAMES)
def test_header_matches_a_fresh_generation(curve):
    path = gen_cuda_params.output(curve)
    assert path.name == f"params_{curve}.h"
    assert path.read_text() == gen_cuda_params.render(curve), "run: python3 scripts/generate.py"


@pytest.mark.parametrize("curve", CURVE_NAMES)
def test_constants_are_consistent_with_the_spec(curve):
    spec = CURVES[curve]
    text = gen_cuda_params.output(curve).read_text()
    arr = _arrays(text)
    for prefix, f, words in (("FR", spec.fr, spec.encoding.fr_words32), ("FQ", spec.fq, spec.encoding.fq_words32)):
        bits = 32 * words
        p = _int(arr[f"{prefix}_MODULUS"])
        assert p == f.modulus and len(arr[f"{prefix}_MODULUS"]) == words
        assert int(re.search(rf"#define {prefix}_LIMBS (\d+)", text).group(1)) == words
        assert _int(arr[f"{prefix}_ONE"]) == (1 << bits) % p
        assert _int(arr[f"{prefix}_R2"]) == (1 << (2 * bits)) % p
        m0 = int(re.search(rf"#define {prefix}_M0 0x([0-9a-f]+)u", text).group(1), 16)
        assert (p * m0) % (1 << 32) == (1 << 32) - 1  # m0 = -p^-1 mod 2^32
    q, R = spec.fq.modulus, 1 << (32 * spec.encoding.fq_words32)
    g2b = tuple(spec.g2.b)
    assert _int(arr["G1_B"]) == spec.g1.b[0] * R % q
    assert (_int(arr["G2_B_C0"]), _int(arr["G2_B_C1"])) == (g2b[0] * R % q, g2b[1] * R % q)
    assert _int(arr["FQ2_NONRESIDUE"]) == spec.fq2_nonresidue * R % q
    minus_one = int(re.search(r"#define FQ2_NONRESIDUE_IS_MINUS_ONE (\d)", text).group(1))
    assert minus_one == int(spec.fq2_nonresidue == q - 1)
    assert f'#define CUZK_CURVE_NAME "{curve}"' in text


@pytest.mark.parametrize("curve", CURVE_NAMES)
def test_roots_of_unity_have_exact_order(curve):
    fr = CURVES[curve].fr
    s = fr.two_adicity
    text = gen_cuda_params.output(curve).read_text()
    body = re.search(rf"FR_ROOTS_OF_UNITY\[{s + 1}\]\[8\] = \{{(.*?)\n\}};", text, re.S).group(1)
    rows = re.findall(r"\{([^}]*)\}", body)
    r, rinv = fr.modulus, pow(1 << 256, -1, fr.modulus)
    assert len(rows) == s + 1
    for k, row in enumerate(rows):
        w = _int([int(v.strip().rstrip("u"), 16) for v in row.split(",")]) * rinv % r
        assert pow(w, 1 << k, r) == 1
        assert k == 0 or pow(w, 1 << (k - 1), r) != 1
        assert w == pow(fr.generator, (r - 1) >> k, r)


def test_the_selector_names_every_curve_and_refuses_none_or_two():
    text = (cuda.CU_DIR / "curve.h").read_text()
    for curve in CURVE_NAMES:
        assert f"defined(CUZK_CURVE_{curve.upper()})" in text
        assert f'#include "params_{curve}.h"' in text and f'#include "mont_asm_{curve}.h"' in text
    assert "!= 1\n#error" in text


def _with(spec, **changes):
    # a shallow copy with fields swapped, skipping the spec's family checks (they refuse it first)
    import copy

    out = copy.copy(spec)
    for k, v in changes.items():
        object.__setattr__(out, k, v)
    return out


def test_a_curve_the_kernels_cannot_hold_is_refused_by_the_generator():
    import attrs
    from cuzk_codegen.cuda_params import check_cuda_fits

    spec = CURVES["bn254"]
    check_cuda_fits(spec)
    with pytest.raises(ValueError, match="top bit"):
        check_cuda_fits(_with(spec, fr=attrs.evolve(spec.fr, modulus=(1 << 256) - 189)))  # a 256-bit prime
    with pytest.raises(ValueError, match="b = 0"):
        check_cuda_fits(_with(spec, g1=attrs.evolve(spec.g1, b=(0,))))


def test_check_mode_passes_on_the_committed_headers():
    assert gen_cuda_params.main(["--check"]) == 0
