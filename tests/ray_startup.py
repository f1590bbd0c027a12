"""Starting local Ray nodes on a loaded 2-core machine, one test cluster at a time.

Ray's ``Node`` gives its raylet a fixed 30 s to register with the GCS and then raises "The
current node timed out during startup". A quiet 2-core machine starts a head in ~2 s and with
six busy processes ~11 s, but while the other test process compiles kernels and proves, a start
has run past 30 s and failed a whole module of cluster tests. ``patient_nodes`` lets a node's
registration take up to ``timeout_s``; a node that never registers still fails, then with the
tail of its raylet and GCS logs in the message, so the cause can be read from the CI log.

Two test processes (pytest-xdist's workers) starting clusters at once share Ray's temporary
folder and ports; in CI one module's nodes then never registered while the other module's
cluster shut down (its GCS answered "Deadline Exceeded"). ``one_cluster`` makes every test
cluster on the machine wait for the one before it to be gone (a lock file), so each module gets
Ray to itself.
"""

import contextlib
import fcntl
import glob
import os
import tempfile
import time

START_TIMEOUT_S = 180
LOCK_TIMEOUT_S = 1200  # the other module's whole run: its cluster's tests take a few minutes


def _log_tails(lines=15):
    out = []
    for name in ("raylet.out", "raylet.err", "gcs_server.out", "gcs_server.err"):
        for path in sorted(glob.glob(os.path.join("/tmp/ray/session_latest/logs", name))):
            try:
                with open(path, errors="replace") as f:
                    tail = f.readlines()[-lines:]
            except OSError:
                continue
            out.append(f"--- {path}\n" + "".join(tail))
    return "\n".join(out) or "(no Ray logs found under /tmp/ray/session_latest/logs)"


@contextlib.contextmanager
def patient_nodes(timeout_s=START_TIMEOUT_S):
    """While active, a starting Ray node waits up to ``timeout_s`` for its raylet to register."""
    import ray._private.services as services

    original = services.get_node

    def get_node(gcs_address, node_id):
        # Ray's start loop calls this until it answers, giving up after 30 s; retrying inside
        # the call stretches that wait without touching Ray's own code.
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return original(gcs_address, node_id)
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.25)

    services.get_node = get_node
    try:
        yield
    except Exception as e:
        if "timed out during startup" in str(e):
            raise RuntimeError(f"a Ray node did not register in {timeout_s} s:\n{_log_tails()}") from e
        raise
    finally:
        services.get_node = original


@contextlib.contextmanager
def one_cluster(timeout_s=LOCK_TIMEOUT_S):
    """Hold the machine's test-cluster lock while active (waits for another holder to finish,
    at most ``timeout_s``; a holder that dies releases it with its process)."""
    path = os.path.join(tempfile.gettempdir(), "cuzk-test-ray-cluster.lock")
    with open(path, "a") as f:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"another test cluster held {path} for over {timeout_s} s") from None
                time.sleep(0.5)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
