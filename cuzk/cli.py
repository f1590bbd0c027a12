"""The ``cuzk`` command: ``--version``, ``info``, ``demo``, ``bench``, ``waterfall FILE``.

    >>> main(["--version"])
    cuzk 0.1.0
    0
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Sequence

import cuzk
from cuzk.errors import CuzkError, InputError

__all__ = ["main", "build_parser", "environment_info"]


def _cpu_msm_methods() -> tuple[str, ...]:
    # "ifma" where the CPU has AVX-512 IFMA: the MSM's additions run 8 at a time (docs/perf/kernels.md)
    from cuzk.kernels.msm_cpu import AVAILABLE

    return AVAILABLE


def environment_info() -> dict:
    """What ``cuzk info`` prints: versions, Numba threading layer, cache dir, the CPU MSM's bucket
    methods (``ifma`` where the CPU has AVX-512 IFMA), CUDA, CPUs.

    >>> sorted(environment_info())[:3]
    ['cache dir', 'cpu count', 'cpu msm methods']
    """
    import numba

    from cuzk import _runtime

    info = {"cuzk": cuzk.__version__, "numba": numba.__version__,
            "threading layer (cuzk choice)": _runtime.threading_layer_choice(),
            "threading layer (numba.config)": str(numba.config.THREADING_LAYER),
            "cache dir": str(_runtime.cache_dir()),
            "cpu msm methods": ", ".join(_cpu_msm_methods())}
    try:
        import cupy

        info["cupy"] = cupy.__version__
        try:
            n = cupy.cuda.runtime.getDeviceCount()
            info["cuda device"] = f"{n} usable" if n else "none"
        except Exception as e:  # no driver / no device: report why, never fail `info`
            info["cuda device"] = f"not usable ({type(e).__name__}: {str(e).splitlines()[0][:80]})"
        try:
            from cupy_backends.cuda.libs import nvrtc

            info["nvrtc"] = ".".join(str(v) for v in nvrtc.getVersion())
        except Exception as e:  # the kernels are compiled at first use: say now if they cannot be
            info["nvrtc"] = f"not loadable ({type(e).__name__}); pip install nvidia-cuda-nvrtc"
        from cuzk.kernels.cuda_runtime import cubin_cache_dir

        info["cuda kernel cache"] = str(cubin_cache_dir())
    except Exception as e:
        info["cupy"] = f"not importable ({type(e).__name__})"
        info["cuda device"] = "not usable (no CuPy)"
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    info["cpu count"] = f"{os.cpu_count()} ({affinity} usable by this process)" if affinity else str(os.cpu_count())
    return info


def _stages(args):
    from cuzk import demo

    if args.simulate:
        return demo.simulated_stages(*_simulated_times(args.simulate))
    return demo.real_stages(args.size, args.device)


def _simulated_times(text: str) -> tuple[float, float]:
    """``--simulate SYNTH_S,PROVE_S``: two finite numbers of seconds, >= 0.

    >>> _simulated_times("1")
    Traceback (most recent call last):
    ...
    cuzk.errors.InputError: --simulate: expected SYNTH_S,PROVE_S (two numbers of seconds, >= 0), got '1'
    """
    try:
        times = tuple(float(x) for x in text.split(","))
    except ValueError:
        times = ()
    if len(times) != 2 or not all(math.isfinite(t) and t >= 0 for t in times):
        raise InputError(f"--simulate: expected SYNTH_S,PROVE_S (two numbers of seconds, >= 0), got {text[:40]!r}")
    return times


def _cmd_info(args) -> int:
    info = environment_info()
    w = max(map(len, info))
    for k, v in info.items():
        print(f"{k:<{w}}  {v}")
    return 0


def _cmd_waterfall(args) -> int:
    from cuzk.timeline import Timeline

    tl = Timeline.load(args.file)
    if not args.no_summary:
        print(tl.summary())
        print()
    print(tl.waterfall(width=args.width, max_rows=args.rows))
    return 0


def _cmd_demo(args) -> int:
    from cuzk import demo

    demo.run_stages_demo(_stages(args), n_proofs=args.proofs)
    return 0


def _cmd_bench(args) -> int:
    from cuzk import demo

    stages = _stages(args)
    print(f"cuzk bench: {stages.description}")
    demo.run_bench(stages.synthesizer, stages.prover, stages.make_inputs, args.proofs,
                   demo.parse_concurrency_list(args.concurrency), trace=args.trace, png=args.png)
    return 0


def _positive_int(text: str) -> int:
    """argparse type: an int >= 1 (``--proofs 0`` ran nothing and printed a table of NaNs)."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return n


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for docs and tests)."""
    p = argparse.ArgumentParser(prog="cuzk", description="Groth16 proving SDK for BLS12-381 and BN254")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command")
    from cuzk.cli_groth16 import add_groth16_parser  # `cuzk groth16 prove|verify`, snarkjs-style

    add_groth16_parser(sub)
    from cuzk.cli_keys import add_keys_parser  # `cuzk keys list|clear|load`, the proving-key cache

    add_keys_parser(sub)
    from cuzk.cli_serve import add_serve_parser  # `cuzk serve`, the proving daemon

    add_serve_parser(sub)
    from cuzk.cli_client import add_client_parser  # `cuzk client status|health|...`, against a running daemon

    add_client_parser(sub)
    from cuzk.cli_porep import add_porep_parser  # `cuzk porep seal|c2|verify`, Filecoin's sealing proof on files

    add_porep_parser(sub)
    sub.add_parser("info", help="versions, Numba threading layer, cache dir, CUDA, CPUs").set_defaults(fn=_cmd_info)

    w = sub.add_parser("waterfall", help="render a timeline saved with Timeline.save()")
    w.add_argument("file")
    w.add_argument("--width", type=int, default=72)
    w.add_argument("--rows", type=int, default=40, help="most job rows to draw")
    w.add_argument("--no-summary", action="store_true")
    w.set_defaults(fn=_cmd_waterfall)

    for name, helptext, fn in [("demo", "prove a few jobs, verify them, show how concurrency 2 closes the "
                                        "prover's idle gap (waterfalls, utilization)", _cmd_demo),
                               ("bench", "s/proof and GPU utilization per concurrency", _cmd_bench)]:
        c = sub.add_parser(name, help=helptext)
        c.add_argument("--proofs", type=_positive_int, default=5 if name == "demo" else 8)
        # the demo's default is medium: a synthesis long enough (~10 ms) that its waterfall is not
        # thread wake-ups, and a CPU proof short enough for the whole demo to take well under a minute
        c.add_argument("--size", default="medium" if name == "demo" else "small",
                       help="porep_like size: tiny, small, medium, large")
        c.add_argument("--device", default="auto", help="prover backend: auto, cuda, cpu")
        c.add_argument("--simulate", metavar="SYNTH_S,PROVE_S",
                       help="use sleeping stages with these times instead of the real prover")
        if name == "bench":
            c.add_argument("--concurrency", default="1,2,auto")
            c.add_argument("--trace", help="write a Chrome trace (per setting: NAME.cN.json)")
            c.add_argument("--png", help="write a matplotlib waterfall (needs cuzk[plot])")
        c.set_defaults(fn=fn)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (1 for a cuzk error, with a one-line message)."""
    return _run(argv)[0]


def console_main() -> None:
    """The installed ``cuzk`` script and ``python -m cuzk``: :func:`main`, then the process ends
    with its status (at once for the commands that ask for it: :mod:`cuzk.cli_exit`)."""
    from cuzk.cli_exit import exit_process

    status, args = _run(None)
    exit_process(status, args)


def _run(argv):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        print(f"cuzk {cuzk.__version__}")
        return 0, args
    if not getattr(args, "fn", None):
        parser.print_help()
        return 2, args
    try:
        return args.fn(args), args
    # a cuzk error; another ValueError (status 2); an output path that cannot be written
    except (CuzkError, ValueError, OSError) as e:
        sub = getattr(args, "groth16_command", None) or getattr(args, "porep_command", None)  # as the file errors
        print(f"cuzk {args.command}{' ' + sub if sub else ''}: error: {e}", file=sys.stderr)
        return (2 if isinstance(e, ValueError) and not isinstance(e, CuzkError) else 1), args
