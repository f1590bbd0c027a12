"""``cuzk serve`` under fuzzed requests (a modest hypothesis run in CI; ``python -m tests.fuzz.serve
--requests 100000`` is the long run, docs/serve.md has its figures): mutated Curio requests, the
extension's JSON, garbage bytes to every method. Every answer is a reply or a status with a message,
and the daemon still proves afterwards, with no handler thread left behind."""

from __future__ import annotations

import threading
from collections import Counter

import pytest

grpc = pytest.importorskip("grpc")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from cuzk.serve import Client  # noqa: E402
from cuzk.serve.config import parse_config  # noqa: E402
from cuzk.serve.proto.cuzk.v1 import proving_pb2 as pb  # noqa: E402
from cuzk.serve.server import Server  # noqa: E402

from fuzz.serve import Mutator, one  # noqa: E402
from serve_support import config_text, cube_entry, cube_keys  # noqa: E402


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzz")
    params, _ = cube_keys(folder)
    srv = Server(parse_config(config_text(folder, circuits=cube_entry(params), extra="request_retention = 1")))
    client = Client(srv.tcp_address, timeout=60)
    yield srv, client
    client.close()
    srv.stop(grace_s=5)


COUNTS: Counter = Counter()


@settings(max_examples=150)
@given(seed=st.integers(0, 2**32 - 1))
def test_fuzzed_requests_get_a_status_with_a_message(served, seed):
    _, client = served
    mut = Mutator(seed)
    for _ in range(4):
        one(client, mut, client._channel, COUNTS, threading.Lock())  # raises on anything but a status or a reply


def test_the_daemon_still_proves_after_the_fuzz(served):
    srv, client = served
    r = client.prove_circuit("cube", {"x": 3, "out": 35})
    assert r.result.status == pb.AwaitProofResponse.COMPLETED
    assert client.status().backend == "cpu"
    live = [j for j in srv.daemon.jobs.snapshot() if j.live]
    assert not live, [j.id for j in live]
