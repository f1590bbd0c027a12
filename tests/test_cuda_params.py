"""The generated CUDA parameters header is fresh and its constants mean what they say."""

import re
import sys

from cuzk.field.params import FQ, FR
from cuzk.kernels import cuda

sys.path.insert(0, str(cuda.CU_DIR.parents[2] / "scripts"))
import gen_cuda_params  # noqa: E402

HEADER = cuda.CU_DIR / "params_bls12_381.h"


def _arrays(text: str) -> dict[str, list[int]]:
    out = {}
    for name, body in re.findall(r"uint32_t (\w+)\[\d+\] = \{([^}]*)\};", text):
        out[name] = [int(v.rstrip("u"), 16) for v in body.replace(" ", "").split(",")]
    return out


def _int(limbs: list[int]) -> int:
    return sum(v << (32 * i) for i, v in enumerate(limbs))


def test_header_matches_a_fresh_generation():
    assert HEADER.read_text() == gen_cuda_params.render(), "run: python3 scripts/gen_cuda_params.py"


def test_constants_are_consistent_with_the_moduli():
    text = HEADER.read_text()
    arr = _arrays(text)
    for prefix, f, bits in (("FR", FR, 256), ("FQ", FQ, 384)):
        p = _int(arr[f"{prefix}_MODULUS"])
        assert p == f.modulus
        assert _int(arr[f"{prefix}_ONE"]) == (1 << bits) % p
        assert _int(arr[f"{prefix}_R2"]) == (1 << (2 * bits)) % p
        m0 = int(re.search(rf"#define {prefix}_M0 0x([0-9a-f]+)u", text).group(1), 16)
        assert (p * m0) % (1 << 32) == (1 << 32) - 1  # m0 = -p^-1 mod 2^32
    R = 1 << 384
    assert _int(arr["G1_B"]) == 4 * R % FQ.modulus
    assert _int(arr["G2_B_C0"]) == _int(arr["G2_B_C1"]) == 4 * R % FQ.modulus


def test_roots_of_unity_have_exact_order():
    body = re.search(r"FR_ROOTS_OF_UNITY\[33\]\[8\] = \{(.*?)\n\};", HEADER.read_text(), re.S).group(1)
    rows = re.findall(r"\{([^}]*)\}", body)
    r, rinv = FR.modulus, pow(1 << 256, -1, FR.modulus)
    assert len(rows) == 33
    for k, row in enumerate(rows):
        w = _int([int(v.strip().rstrip("u"), 16) for v in row.split(",")]) * rinv % r
        assert pow(w, 1 << k, r) == 1
        assert k == 0 or pow(w, 1 << (k - 1), r) != 1
        assert w == pow(7, (r - 1) >> k, r)


def test_check_mode_reports_staleness(tmp_path, monkeypatch):
    stale = tmp_path / "params.h"
    stale.write_text("// stale\n")
    monkeypatch.setattr(gen_cuda_params, "OUTPUT", stale)
    assert gen_cuda_params.main(["--check"]) == 1
    assert gen_cuda_params.main([]) == 0
    assert gen_cuda_params.main(["--check"]) == 0
