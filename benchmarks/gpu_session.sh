#!/usr/bin/env bash
# The one command a GPU session runs (device tool):  bash benchmarks/gpu_session.sh [gpu_check args]
# Carried wheels in .whl/ (see docs/perf/cuda.md) are installed first when present; the log
# lands in $OUT/gpu_check.log so it comes back even if the run is cut short.
set -o pipefail
if compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && export PYTHONPATH=/tmp/site || exit 1
fi
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" CUZK_NUMBA_CACHE_DIR=/tmp/cuzk-numba
log="${OUT:-/tmp}/gpu_check.log"
{
    date -u
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total --format=csv
    python3 -c "import sys, numba, numpy, cupy; print(sys.version.split()[0], 'numba', numba.__version__, 'numpy', numpy.__version__, 'cupy', cupy.__version__)"
} 2>&1 | tee "$log"
timeout "${GPU_CHECK_TIMEOUT:-540}" python3 benchmarks/gpu_check.py "$@" 2>&1 | tee -a "$log"
