"""``cuzk serve``'s server reflection (cuzk/serve/reflection.py): off unless configured; with it a
client holding no stubs finds every service, rebuilds the messages from the reflected files and
calls GetStatus and ProveCircuit, as grpcurl does; the token is needed when set; streams are
bounded; bad bytes end a stream INVALID_ARGUMENT and the daemon serves on."""

from __future__ import annotations

import json
import threading
import time

import pytest

grpc = pytest.importorskip("grpc")
pytest.importorskip("grpc_reflection")

from google.protobuf import descriptor_pool, message_factory  # noqa: E402
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc  # noqa: E402
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase  # noqa: E402

from cuzk.serve import Client  # noqa: E402
from cuzk.serve.config import default_config, parse_config  # noqa: E402
from cuzk.serve.health import MAX_STREAMS  # noqa: E402
from cuzk.serve.reflection import SERVICE_NAMES  # noqa: E402
from cuzk.serve.server import Server  # noqa: E402

from serve_support import config_text, cube_entry  # noqa: E402

TOKEN = "reflect-token-0123456789abcdef"


def _config(folder, params, extra="reflection = true", tail=""):
    return parse_config(config_text(folder, circuits=cube_entry(params), extra=extra) + tail)


def test_off_unless_configured_on_in_the_embedded_default(cube):
    folder, params = cube
    assert default_config().reflection is True
    with Server(_config(folder, params, extra="")) as srv, grpc.insecure_channel(srv.tcp_address) as ch:
        assert srv.reflection is None
        with pytest.raises(grpc.RpcError) as e:
            ProtoReflectionDescriptorDatabase(ch).get_services()
        assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_a_client_without_stubs_calls_the_daemon(cube):
    folder, params = cube
    with Server(_config(folder, params)) as srv, grpc.insecure_channel(srv.tcp_address) as ch:
        db = ProtoReflectionDescriptorDatabase(ch)
        assert sorted(db.get_services()) == sorted(SERVICE_NAMES)
        pool = descriptor_pool.DescriptorPool(db)  # a pool of its own: nothing from cuzk's stubs
        engine = pool.FindServiceByName("cuzk.v1.ProvingEngine")
        assert {"SubmitProof", "AwaitProof", "Prove", "CancelProof", "GetStatus", "GetMetrics", "PreloadSRS",
                "EvictSRS"} <= {m.name for m in engine.methods}

        def call(service, method, **fields):
            m = pool.FindServiceByName(service).methods_by_name[method]
            req_cls = message_factory.GetMessageClass(m.input_type)
            resp_cls = message_factory.GetMessageClass(m.output_type)
            rpc = ch.unary_unary(f"/{service}/{method}", request_serializer=req_cls.SerializeToString,
                                 response_deserializer=resp_cls.FromString)
            return rpc(req_cls(**fields), timeout=120)

        status = call("cuzk.v1.ProvingEngine", "GetStatus")
        assert status.backend == "cpu" and json.loads(status.engine_status_json)["engine"]["backend"] == "cpu"
        answer = call("cuzk.v1.CircuitProver", "ProveCircuit", circuit="cube", inputs_json='{"x": 3, "out": 35}')
        assert answer.result.status == 1 and json.loads(answer.public_json) == ["35"]
        assert srv.daemon.rpc_counts[("ServerReflectionInfo", "OK")] >= 1


def test_the_token_is_needed_when_set(cube):
    folder, params = cube
    (folder / "token").write_text(TOKEN)
    cfg = _config(folder, params, tail=f'[auth]\ntoken_file = "{folder / "token"}"\n')
    with Server(cfg) as srv, grpc.insecure_channel(srv.tcp_address) as ch:
        with pytest.raises(grpc.RpcError) as e:
            ProtoReflectionDescriptorDatabase(ch).get_services()
        assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
        stub = reflection_pb2_grpc.ServerReflectionStub(ch)
        replies = stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="*")]),
                                            metadata=(("authorization", f"Bearer {TOKEN}"),), timeout=30)
        names = [s.name for r in replies for s in r.list_services_response.service]
        assert sorted(names) == sorted(SERVICE_NAMES)


class _Quiet:
    """A request stream that sends nothing until ``done`` is set, then ends."""

    def __init__(self, done):
        self.done = done

    def __iter__(self):
        return self

    def __next__(self):
        self.done.wait(60)
        raise StopIteration


def _wait_for(pred, timeout=10.0) -> bool:
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


def test_streams_are_bounded_and_bad_bytes_refused(cube):
    folder, params = cube
    done = threading.Event()
    with Server(_config(folder, params)) as srv, grpc.insecure_channel(srv.tcp_address) as ch:
        stub = reflection_pb2_grpc.ServerReflectionStub(ch)
        try:
            held = [stub.ServerReflectionInfo(_Quiet(done), timeout=60) for _ in range(MAX_STREAMS)]
            assert _wait_for(lambda: srv.reflection.streams == MAX_STREAMS), srv.reflection.streams
            with pytest.raises(grpc.RpcError) as e:
                list(stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="*")]),
                                               timeout=30))
            assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert f"at most {MAX_STREAMS}" in e.value.details()
            with Client(srv.tcp_address, timeout=60) as c:  # the handler pool is not starved
                assert c.prove_circuit("cube", {"x": 3, "out": 35}).result.status == 1
            for stream in held:
                stream.cancel()
            assert _wait_for(lambda: srv.reflection.streams == 0), srv.reflection.streams
        finally:
            done.set()
        raw = ch.stream_stream("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")
        with pytest.raises(grpc.RpcError) as e:
            list(raw(iter([b"\xff\xff\xff"]), timeout=30))
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "ServerReflectionRequest" in e.value.details()
        assert sorted(ProtoReflectionDescriptorDatabase(ch).get_services()) == sorted(SERVICE_NAMES)
