"""``cuzk serve``'s log (cuzk/serve/logs.py): each job's end is one line with its id, kind,
outcome and timings (WARNING with the error when it failed), as text or as one JSON object per
line with ``[logging] format = "json"``, in process and from a ``cuzk serve`` process; the lines
are written by a thread of their own, stamped with the time each job ended."""

from __future__ import annotations

import io
import json
import logging
import threading
import time
import types

import pytest

grpc = pytest.importorskip("grpc")

from cuzk.serve import Client  # noqa: E402
from cuzk.serve.config import parse_config  # noqa: E402
from cuzk.serve.logs import JobLines, configure  # noqa: E402
from cuzk.serve.server import Server  # noqa: E402

from serve_support import DaemonProcess, config_text, cube_entry  # noqa: E402


@pytest.fixture
def captured():
    """configure() onto a buffer; the root logger's handlers and level put back afterwards."""
    root = logging.getLogger()
    before = (list(root.handlers), root.level)
    buf = io.StringIO()

    def install(fmt):
        configure("info", fmt, stream=buf)
        return buf
    yield install
    for h in list(root.handlers):
        if h not in before[0]:
            root.removeHandler(h)
    root.setLevel(before[1])


def _prove_two(srv):
    with Client(srv.tcp_address, timeout=120) as c:
        ok = c.prove_circuit("cube", {"x": 3, "out": 35}, request_id="good-1")
        bad = c.prove_circuit("cube", {"x": 3, "out": 36}, request_id="bad-1")  # not a satisfying witness
    assert ok.result.status == 1 and bad.result.status == 2
    return ok, bad


def test_json_lines_carry_each_job(cube, captured):
    folder, params = cube
    buf = captured("json")
    with Server(parse_config(config_text(folder, circuits=cube_entry(params)))) as srv:
        _prove_two(srv)
    records = [json.loads(line) for line in buf.getvalue().splitlines()]  # every line is one JSON object
    jobs = {r["job"]["id"]: r for r in records if "job" in r}
    good, bad = jobs["good-1"], jobs["bad-1"]
    assert good["level"] == "INFO" and good["logger"] == "cuzk.serve" and good["ts"].endswith("+00:00")
    assert good["job"]["outcome"] == "completed" and good["job"]["kind"] == "circuit:cube"
    t = good["job"]["timings_s"]
    assert t["total_s"] >= t["synth_s"] > 0 and t["prove_s"] > 0
    assert bad["level"] == "WARNING" and bad["job"]["outcome"] == "failed" and bad["job"]["error"]
    assert "good-1 completed" in good["message"]


def test_text_lines(cube, captured):
    folder, params = cube
    buf = captured("text")
    with Server(parse_config(config_text(folder, circuits=cube_entry(params)))) as srv:
        _prove_two(srv)
    lines = buf.getvalue().splitlines()
    good = [x for x in lines if "job good-1 completed" in x]
    bad = [x for x in lines if "job bad-1 failed" in x]
    assert len(good) == 1 and " INFO cuzk.serve: " in good[0] and " s (queue " in good[0]
    assert len(bad) == 1 and " WARNING cuzk.serve: " in bad[0]
    # a second configure replaces the first handler: no line twice
    configure("info", "text", stream=buf)
    logging.getLogger("cuzk.serve").info("once")
    assert buf.getvalue().count("once") == 1


def test_a_daemon_logs_json_on_stderr(cube, tmp_path):
    folder, params = cube
    config = tmp_path / "cuzk.toml"
    config.write_text(config_text(folder, circuits=cube_entry(params)) + '[logging]\nformat = "json"\n')
    daemon = DaemonProcess(config)
    try:
        with Client(daemon.tcp, timeout=120) as c:
            assert c.prove_circuit("cube", {"x": 3, "out": 35}, request_id="proc-1").result.status == 1
        assert daemon.terminate() == 0
    finally:
        daemon.kill()
    records = [json.loads(x) for x in daemon.lines if x.startswith("{")]
    assert any(r.get("job", {}).get("id") == "proc-1" and r["job"]["outcome"] == "completed" for r in records)
    assert any("gRPC on" in r["message"] for r in records)
    # every line is either one of the plain addresses/notices printed on stdout or a JSON record
    assert all(x.startswith(("{", "cuzk serve: ")) for x in daemon.lines), daemon.lines


class _Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append(record)


def _job(job_id):
    return types.SimpleNamespace(id=job_id, kind="circuit:cube", circuit="cube", priority="normal", engine_future=None)


def test_job_lines_are_written_off_the_ending_thread_stamped_at_the_end():
    log = logging.getLogger("cuzk.serve.test-joblines")
    log.propagate, sink = False, _Records()
    log.addHandler(sink)
    log.setLevel(logging.INFO)
    lines = JobLines(log, period_s=0.05)
    try:
        before = time.time()
        lines.post(_job("a"), "completed", None)
        posted = time.time()
        assert sink.records == []  # nothing written on the posting thread
        deadline = time.monotonic() + 10
        while not sink.records and time.monotonic() < deadline:
            time.sleep(0.01)
        (rec,) = sink.records
        assert rec.threadName == "cuzk-serve-joblines" != threading.current_thread().name
        assert before <= rec.created <= posted and rec.job["id"] == "a" and rec.levelno == logging.INFO
        # a failed job's line: WARNING with the error; lines still pending are written by close
        lines.post(_job("b"), "failed", ValueError("bad witness"))
        lines.post(_job("c"), "cancelled", None)
    finally:
        lines.close()
    assert [r.job["id"] for r in sink.records] == ["a", "b", "c"]
    assert sink.records[1].levelno == logging.WARNING and "ValueError: bad witness" in sink.records[1].getMessage()
    lines.post(_job("d"), "completed", None)  # after close: written at once
    assert sink.records[-1].job["id"] == "d"
    log.setLevel(logging.WARNING)
    lines.post(_job("e"), "completed", None)  # below the level: nothing kept
    assert sink.records[-1].job["id"] == "d" and not lines._pending
    log.removeHandler(sink)

