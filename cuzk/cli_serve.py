"""``cuzk serve``: run the proving daemon (docs/serve.md) until SIGTERM or SIGINT.

    cuzk serve                         # the embedded default: loopback TCP 9820, a Unix socket, CPU
    cuzk serve --config cuzk.toml      # an operator's configuration
    cuzk serve --print-default-config  # the embedded default as TOML, to start a file from
    cuzk serve --config cuzk.toml --check-config   # what a start would refuse, without starting
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["add_serve_parser"]


def _cmd_serve(args) -> int:
    from cuzk.serve.config import DEFAULT_TOML, default_config, load_config, parse_listen, runtime_dir

    if args.print_default_config:
        print(DEFAULT_TOML.replace("{runtime}", str(runtime_dir())), end="")
        return 0
    import importlib.util

    if importlib.util.find_spec("grpc") is None:  # the extra's absence, said plainly
        print("cuzk serve: error: grpcio is not installed: pip install 'cuzk[serve]'", file=sys.stderr)
        return 1
    from cuzk.serve.logs import configure
    from cuzk.serve.server import run

    cfg = load_config(args.config) if args.config else default_config()
    if args.listen:
        import attrs

        cfg = attrs.evolve(cfg, listen=tuple(parse_listen(a, "--listen") for a in args.listen))
    if args.device:
        import attrs

        cfg = attrs.evolve(cfg, device=args.device)
    if args.check_config:
        from cuzk.serve.check import check_config

        for line in check_config(cfg):  # ConfigError / InputError: cuzk.cli prints it, exit 1
            print(line)
        print(f"cuzk serve: {args.config or 'the embedded default'}: OK")
        return 0
    configure(cfg.log_level, cfg.log_format)
    return run(cfg, announce=lambda line: print(line, flush=True))


def add_serve_parser(subparsers) -> argparse.ArgumentParser:
    s = subparsers.add_parser("serve", help="the proving daemon: Curio's cuzk.v1 gRPC API over one Engine")
    s.add_argument("--config", help="TOML configuration (default: the embedded one; docs/serve.md)")
    s.add_argument("--listen", action="append", metavar="ADDR",
                   help="listen here instead of [daemon] listen (host:port or unix:///path; repeatable)")
    s.add_argument("--device", choices=("auto", "cpu", "cuda"), help="override [gpus] device")
    s.add_argument("--print-default-config", action="store_true", help="print the embedded configuration and exit")
    s.add_argument("--check-config", action="store_true",
                   help="check the configuration as a start would (token, TLS pair, circuits) and exit: 0 when OK")
    s.set_defaults(fn=_cmd_serve)
    return s
