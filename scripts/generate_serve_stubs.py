"""Generate the Python gRPC stubs of ``cuzk serve`` from its ``.proto`` files (grpcio-tools).

The stubs are committed beside the ``.proto`` files (cuzk/serve/proto/cuzk/v1/), so installing
cuzk needs grpcio and protobuf only; tests/test_serve_proto.py fails when they no longer match
the ``.proto`` files. Run after editing a ``.proto``::

    python scripts/generate_serve_stubs.py            # rewrite the committed stubs
    python scripts/generate_serve_stubs.py --out DIR  # write them elsewhere (the freshness test)

protoc is given ``cuzk/serve/proto`` as the import root, so each file keeps the name Curio's
contract has (``cuzk/v1/proving.proto``); the generated ``from cuzk.v1 import ...`` lines are
rewritten to this package's path, the one edit made to protoc's output.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROTO_ROOT = ROOT / "cuzk" / "serve" / "proto"
PROTOS = ("cuzk/v1/proving.proto", "cuzk/v1/circuits.proto")
PACKAGE = "cuzk.serve.proto.cuzk.v1"
_IMPORT = re.compile(r"^from cuzk\.v1 import ", re.MULTILINE)


def generate(out: Path) -> list[Path]:
    """Write ``*_pb2.py`` and ``*_pb2_grpc.py`` for every proto under ``out/cuzk/v1``; returns them."""
    from grpc_tools import protoc

    with tempfile.TemporaryDirectory() as tmp:
        args = ["protoc", f"-I{PROTO_ROOT}", f"--python_out={tmp}", f"--grpc_python_out={tmp}", *PROTOS]
        if protoc.main(args) != 0:
            raise SystemExit(f"protoc failed: {' '.join(args)}")
        written = []
        dest = out / "cuzk" / "v1"
        dest.mkdir(parents=True, exist_ok=True)
        for src in sorted((Path(tmp) / "cuzk" / "v1").glob("*.py")):
            text = _IMPORT.sub(f"from {PACKAGE} import ", src.read_text())
            (dest / src.name).write_text(text)
            written.append(dest / src.name)
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=None, help="folder to write cuzk/v1/*.py under (default: in place)")
    args = ap.parse_args(argv)
    if args.out is None:
        with tempfile.TemporaryDirectory() as tmp:
            for path in generate(Path(tmp)):
                shutil.copyfile(path, PROTO_ROOT / "cuzk" / "v1" / path.name)
                print(PROTO_ROOT / "cuzk" / "v1" / path.name)
    else:
        for path in generate(args.out):
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
