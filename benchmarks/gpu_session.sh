#!/usr/bin/env bash
# The one command a GPU session runs (device tool):  bash benchmarks/gpu_session.sh [gpu_check args]
#   first run:   bash benchmarks/gpu_session.sh                  (<= 6 min; timeout_s ~ 480 on the tool)
#   rerun:       bash benchmarks/gpu_session.sh --only smoke,proofs    (what failed, minutes less)
#   budget:      python3 benchmarks/gpu_check.py --dry-run
# Carried wheels in .whl/ (see docs/perf/cuda.md) are installed first when present. Everything
# lands in $OUT as it happens: gpu_check.log (this output), gpu_check.jsonl (one JSON row per
# measurement, appended at once), dmon.txt (nvidia-smi dmon: clocks, power, throttling).
# The run is stopped with SIGINT after GPU_CHECK_TIMEOUT seconds (default 420), so gpu_check
# prints its summary; SIGKILL follows 20 s later if it does not stop.
set -o pipefail
if compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && export PYTHONPATH=/tmp/site || exit 1
fi
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" CUZK_NUMBA_CACHE_DIR=/tmp/cuzk-numba
out="${OUT:-$PWD/gpu_check_out}"
mkdir -p "$out"
log="$out/gpu_check.log"
{
    date -u
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,memory.total --format=csv
    python3 -c "import sys, numba, numpy, cupy; print(sys.version.split()[0], 'numba', numba.__version__, 'numpy', numpy.__version__, 'cupy', cupy.__version__)"
} 2>&1 | tee "$log"
timeout -s INT -k 20 "${GPU_CHECK_TIMEOUT:-420}" python3 benchmarks/gpu_check.py --out "$out" "$@" 2>&1 | tee -a "$log"
rc=${PIPESTATUS[0]}
nvidia-smi --query-gpu=clocks_throttle_reasons.active,temperature.gpu,clocks.sm --format=csv 2>&1 | tee -a "$log"
exit "$rc"
