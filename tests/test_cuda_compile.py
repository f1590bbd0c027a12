"""Every CUDA source compiles to sm_80 and sm_90 cubins for every curve without a GPU (nvcc -cubin
with -DCUZK_CURVE_<NAME>, cu/curve.h), and ptxas reports registers for every kernel (recorded in
docs/perf/cuda.md)."""

import concurrent.futures
import os
import re
import shutil
import subprocess

import pytest

from cuzk.curves import CURVES
from cuzk.kernels import cuda, cuda_runtime

NVCC = shutil.which("nvcc") or next((p for p in ["/usr/local/cuda/bin/nvcc"] if os.path.exists(p)), None)
ARCHS = ("sm_80", "sm_90")
CURVE_NAMES = sorted(CURVES)
pytestmark = [
    pytest.mark.slow,  # ptxas needs ~1 min per architecture for msm.cu on 2 cores
    pytest.mark.skipif(NVCC is None, reason="nvcc is not installed: CUDA compile checks need the CUDA toolkit"),
]


def compile_cubin(src: str, arch: str, curve: str, out_dir) -> dict[str, int]:
    """nvcc -cubin one source for one curve; returns {kernel: registers} parsed from ``-Xptxas -v``."""
    out = out_dir / f"{src}.{arch}.{curve}.cubin"
    cmd = [NVCC, "-cubin", f"-arch={arch}", "-std=c++17", f"-DCUZK_CURVE_{curve.upper()}", "-Xptxas", "-v",
           str(cuda.CU_DIR / src), "-o", str(out)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, f"{' '.join(cmd)} failed:\n{res.stderr[-4000:]}"
    assert out.stat().st_size > 0
    regs, current = {}, None  # ptxas prints "Compiling entry function 'k'" then "Used N registers"
    for line in res.stderr.splitlines():
        m = re.search(r"(?:Compiling entry function|Function properties for) '?(\w+)'?", line)
        if m and "entry" in line:
            current = m.group(1)
        m = re.search(r"Used (\d+) registers", line)
        if m and current:
            regs[current] = int(m.group(1))
            current = None
    return regs


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """All (source, arch, curve) cubins, built two at a time (ptxas is single-threaded); msm.cu
    first, the longest."""
    out = tmp_path_factory.mktemp("cubins")
    jobs = [(src, arch, curve) for src in reversed(cuda.KERNEL_FILES) for arch in ARCHS for curve in CURVE_NAMES]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futs = {job: pool.submit(compile_cubin, *job, out) for job in jobs}
    return futs


@pytest.mark.parametrize("curve", CURVE_NAMES)
@pytest.mark.parametrize("arch", ARCHS)
def test_every_kernel_compiles_and_fits_its_launch_bounds(compiled, arch, curve):
    regs = {}
    for src in cuda.KERNEL_FILES:
        regs |= compiled[(src, arch, curve)].result()
    bounds = cuda_runtime.launch_bounds()
    assert set(bounds) <= set(regs), f"ptxas reported no registers for {set(bounds) - set(regs)}"
    for name, block in bounds.items():
        # registers are handed out per warp in units of 256, i.e. per thread in multiples of 8;
        # an SM gives one block at most 64K of them (sm_80 and sm_90)
        per_thread = -(-regs[name] // 8) * 8
        assert 0 < regs[name] <= 255 and per_thread * block <= 65536, (name, regs[name], block)


def test_a_build_without_exactly_one_curve_is_refused(tmp_path):
    # cu/curve.h: no curve macro (or two) is a compile error naming the macros, not a silent default
    for defines in ((), ("-DCUZK_CURVE_BN254", "-DCUZK_CURVE_BLS12_381")):
        cmd = [NVCC, "-E", "-std=c++17", *defines, str(cuda.CU_DIR / "arith.cu"), "-o", str(tmp_path / "x.i")]
        res = subprocess.run(cmd, capture_output=True, text=True)
        assert res.returncode != 0 and "define exactly one curve macro" in res.stderr, defines


def _nvrtc_loadable() -> bool:
    try:
        from cupy_backends.cuda.libs import nvrtc

        nvrtc.getVersion()
        return True
    except Exception:  # CuPy or libnvrtc missing: CI machines usually have neither
        return False


@pytest.mark.skipif(not _nvrtc_loadable(), reason="libnvrtc is not loadable through CuPy (pip: nvidia-cuda-nvrtc)")
@pytest.mark.parametrize("curve", CURVE_NAMES)
def test_nvrtc_builds_and_caches_the_module_the_runtime_loads(tmp_path, monkeypatch, curve):
    # The GPU path compiles with NVRTC, not nvcc: no host headers, its own defines. Build the
    # exact program CupyRuntime loads (all kernels in one cubin, one curve), then hit the cache.
    from cuzk.kernels import cuda_runtime

    monkeypatch.setenv("CUZK_CUDA_CACHE", str(tmp_path))
    path = cuda_runtime._compile_cubin(90, curve=curve)
    data = path.read_bytes()
    assert path.parent == tmp_path and data[:4] == b"\x7fELF"
    for name in ("ntt_stages", "g1_msm_bucket_acc", "g2_msm_window_segments", "fr_batch_op"):
        assert name.encode() in data
    mtime = path.stat().st_mtime_ns
    assert cuda_runtime._compile_cubin(90, curve=curve) == path and path.stat().st_mtime_ns == mtime
