"""``cuzk`` commands run in a child process under an address-space limit: a command that reads a
huge (sparse) file or ``/dev/zero`` whole fails there with a MemoryError in seconds, instead of
taking the test machine's memory."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

#: the child's address space: room for cuzk's imports, not for a multi-GiB read
LIMIT_BYTES = 5 << 29  # 2.5 GiB

_CHILD = """
import contextlib, io, json, sys
from cuzk import cli
out = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        out.append([cli.main(argv), err.getvalue()])
print(json.dumps(out))
"""


def sparse_file(path: Path, size: int = 4 << 30) -> Path:
    """A file of ``size`` bytes that takes no disk space (a hole)."""
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def run_limited(argvs, *, timeout: float = 120) -> list[tuple[int, str]]:
    """``(exit status, stderr)`` of ``cuzk.cli.main(argv)`` for each of ``argvs``, run in one child
    process under :data:`LIMIT_BYTES` of address space; the child's own failure fails the test."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parents[1]),
                                                                      os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", _CHILD, json.dumps([[str(a) for a in argv] for argv in argvs])],
                          capture_output=True, text=True, timeout=timeout, preexec_fn=limit, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return [tuple(x) for x in json.loads(done.stdout.splitlines()[-1])]
