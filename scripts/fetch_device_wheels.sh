#!/usr/bin/env bash
# Download, into .whl/ (git-ignored), the wheels the GPU machine lacks for benchmarks/gpu_session.sh.
# The device image (Python 3.12) has CuPy 14.2, numba, numpy, attrs, pytest, hypothesis; cuzk
# needs none of galois/py_ecc there. Carry numba + llvmlite only if the image's numba fails
# (gpu_session.sh prints its version first): together ~64 MB, right at the 64 MiB carry limit,
# so nothing else fits beside them. Usage: bash scripts/fetch_device_wheels.sh [NAME==VER ...]
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .whl
if [ "$#" -eq 0 ]; then
    set -- "numba==$(python3 -c 'import numba; print(numba.__version__)')" \
           "llvmlite==$(python3 -c 'import llvmlite; print(llvmlite.__version__)')"
fi
python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d .whl "$@"
du -sh .whl
