"""The ``cuzk serve`` contract: the .proto is Curio's ``cuzk.v1`` (names, numbers, enums) plus new
numbers only, and the committed stubs are what grpcio-tools makes of the .proto files today.

Curio's facts are written out here once (from Curio's extern/cuzk/cuzk-proto/proto/cuzk/v1/
proving.proto): every message's fields as (name, number, type), every enum's values, every RPC.
The check reads our descriptor, so a renumbered, retyped or removed field fails it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("grpc")
from google.protobuf.descriptor import FieldDescriptor as F  # noqa: E402

from cuzk.serve.proto.cuzk.v1 import circuits_pb2, proving_pb2  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
STUBS = ROOT / "cuzk" / "serve" / "proto" / "cuzk" / "v1"

U64, U32, STR, BYTES, BOOL, ENUM, MSG = F.TYPE_UINT64, F.TYPE_UINT32, F.TYPE_STRING, F.TYPE_BYTES, F.TYPE_BOOL, \
    F.TYPE_ENUM, F.TYPE_MESSAGE

CURIO_MESSAGES = {
    "SubmitProofRequest": [("request_id", 1, STR), ("proof_kind", 2, ENUM), ("sector_size", 3, U64),
                           ("registered_proof", 4, U64), ("priority", 5, ENUM), ("vanilla_proof", 10, BYTES),
                           ("vanilla_proofs", 11, BYTES), ("sector_number", 20, U64), ("miner_id", 21, U64),
                           ("randomness", 22, BYTES), ("partition_index", 23, U32), ("comm_r_old", 30, BYTES),
                           ("comm_r_new", 31, BYTES), ("comm_d_new", 32, BYTES)],
    "SubmitProofResponse": [("job_id", 1, STR), ("queue_position", 2, U32), ("assigned_gpu", 3, STR)],
    "AwaitProofRequest": [("job_id", 1, STR), ("timeout_ms", 2, U64)],
    "AwaitProofResponse": [("job_id", 1, STR), ("status", 2, ENUM), ("proof", 3, BYTES), ("error_message", 4, STR),
                           ("queue_wait_ms", 10, U64), ("srs_load_ms", 11, U64), ("synthesis_ms", 12, U64),
                           ("gpu_compute_ms", 13, U64), ("total_ms", 14, U64)],
    "ProveRequest": [("submit", 1, MSG)],
    "ProveResponse": [("result", 1, MSG)],
    "CancelProofRequest": [("job_id", 1, STR)],
    "CancelProofResponse": [("was_running", 1, BOOL)],
    "GetStatusRequest": [],
    "GetStatusResponse": [("gpus", 1, MSG), ("loaded_srs", 2, MSG), ("queues", 3, MSG),
                          ("total_proofs_completed", 4, U64), ("total_proofs_failed", 5, U64),
                          ("uptime_seconds", 6, U64), ("pinned_memory_bytes", 7, U64),
                          ("pinned_memory_limit_bytes", 8, U64)],
    "GPUStatus": [("ordinal", 1, U32), ("name", 2, STR), ("vram_total_bytes", 3, U64), ("vram_free_bytes", 4, U64),
                  ("current_job_id", 5, STR), ("current_proof_kind", 6, STR)],
    "SRSStatus": [("circuit_id", 1, STR), ("tier", 2, ENUM), ("size_bytes", 3, U64), ("ref_count", 4, U32)],
    "QueueStatus": [("proof_kind", 1, STR), ("pending", 2, U32), ("in_progress", 3, U32)],
    "PreloadSrsRequest": [("circuit_id", 1, STR)],
    "PreloadSrsResponse": [("already_loaded", 1, BOOL), ("load_time_ms", 2, U64)],
    "EvictSrsRequest": [("circuit_id", 1, STR)],
    "EvictSrsResponse": [("was_loaded", 1, BOOL), ("freed_bytes", 2, U64)],
    "GetMetricsRequest": [],
    "GetMetricsResponse": [("prometheus_text", 1, STR)],
}
CURIO_ENUMS = {
    "ProofKind": {"PROOF_KIND_UNSPECIFIED": 0, "POREP_SEAL_COMMIT": 1, "SNAP_DEALS_UPDATE": 2,
                  "WINDOW_POST_PARTITION": 3, "WINNING_POST": 4},
    "Priority": {"PRIORITY_UNSPECIFIED": 0, "LOW": 1, "NORMAL": 2, "HIGH": 3, "CRITICAL": 4},
    "AwaitProofResponse.Status": {"UNKNOWN": 0, "COMPLETED": 1, "FAILED": 2, "CANCELLED": 3, "TIMEOUT": 4},
    "SRSStatus.Tier": {"HOT": 0, "WARM": 1, "COLD": 2},
}
CURIO_RPCS = {"SubmitProof": ("SubmitProofRequest", "SubmitProofResponse"),
              "AwaitProof": ("AwaitProofRequest", "AwaitProofResponse"), "Prove": ("ProveRequest", "ProveResponse"),
              "CancelProof": ("CancelProofRequest", "CancelProofResponse"),
              "GetStatus": ("GetStatusRequest", "GetStatusResponse"),
              "GetMetrics": ("GetMetricsRequest", "GetMetricsResponse"),
              "PreloadSRS": ("PreloadSrsRequest", "PreloadSrsResponse"),
              "EvictSRS": ("EvictSrsRequest", "EvictSrsResponse")}


def test_package_and_service_are_curios():
    d = proving_pb2.DESCRIPTOR
    assert d.package == "cuzk.v1" and d.name == "cuzk/v1/proving.proto"
    svc = d.services_by_name["ProvingEngine"]
    got = {m.name: (m.input_type.name, m.output_type.name) for m in svc.methods}
    assert got == CURIO_RPCS
    assert all(not m.client_streaming and not m.server_streaming for m in svc.methods)


@pytest.mark.parametrize("name", sorted(CURIO_MESSAGES))
def test_curio_fields_keep_name_number_and_type(name):
    msg = proving_pb2.DESCRIPTOR.message_types_by_name[name]
    ours = {f.name: (f.number, f.type) for f in msg.fields}
    for fname, number, ftype in CURIO_MESSAGES[name]:
        assert ours.get(fname) == (number, ftype), f"{name}.{fname}"
    # what we add takes numbers Curio's message does not use
    curio_numbers = {n for _, n, _ in CURIO_MESSAGES[name]}
    added = [f for f in msg.fields if f.name not in {c[0] for c in CURIO_MESSAGES[name]}]
    assert all(f.number not in curio_numbers for f in added)


def test_repeated_fields_are_curios():
    sub = proving_pb2.DESCRIPTOR.message_types_by_name["SubmitProofRequest"]
    status = proving_pb2.DESCRIPTOR.message_types_by_name["GetStatusResponse"]
    repeated = {f.name for m in (sub, status) for f in m.fields if f.is_repeated}
    assert repeated == {"vanilla_proofs", "gpus", "loaded_srs", "queues"}


@pytest.mark.parametrize("name", sorted(CURIO_ENUMS))
def test_enums_are_curios(name):
    outer, _, inner = name.partition(".")
    d = proving_pb2.DESCRIPTOR
    e = d.message_types_by_name[outer].enum_types_by_name[inner] if inner else d.enum_types_by_name[outer]
    assert {v.name: v.number for v in e.values} == CURIO_ENUMS[name]


def test_a_curio_encoded_request_reads_back():
    # bytes as Curio's Go client writes them for a WindowPoSt Prove (fields 1-5, 11, 21-23)
    req = proving_pb2.SubmitProofRequest(request_id="wdpost-1000-0-[1 2 3 4 5 6 7 8]", proof_kind=3,
                                         sector_size=2048, registered_proof=10, priority=3,
                                         vanilla_proofs=[b"\x01\x02"], miner_id=1000, randomness=bytes(32))
    raw = proving_pb2.ProveRequest(submit=req).SerializeToString()
    assert proving_pb2.ProveRequest.FromString(raw).submit == req


def test_extension_is_its_own_service_in_the_same_package():
    d = circuits_pb2.DESCRIPTOR
    assert d.package == "cuzk.v1" and "ProvingEngine" not in d.services_by_name
    assert {m.name for m in d.services_by_name["CircuitProver"].methods} == {"ProveCircuit", "ListCircuits"}


def _normalized(path: Path) -> str:
    """A generated stub without the lines that name generator versions."""
    text = path.read_text()
    text = re.sub(r"# Protobuf Python Version: .*\n", "", text)
    text = re.sub(r"_runtime_version\.ValidateProtobufRuntimeVersion\([^)]*\)\n", "", text)
    text = re.sub(r"GRPC_GENERATED_VERSION = '.*'\n", "", text)
    return text


def test_committed_stubs_are_fresh(tmp_path):
    pytest.importorskip("grpc_tools")
    subprocess.run([sys.executable, str(ROOT / "scripts" / "generate_serve_stubs.py"), "--out", str(tmp_path)],
                   check=True, capture_output=True, timeout=120)
    fresh = sorted((tmp_path / "cuzk" / "v1").glob("*.py"))
    assert [p.name for p in fresh] == sorted(p.name for p in STUBS.glob("*_pb2*.py"))
    for p in fresh:
        assert _normalized(p) == _normalized(STUBS / p.name), \
            f"{p.name} is stale: run python scripts/generate_serve_stubs.py and commit the result"
