"""Status endpoint (cuzk/engine/status_http.py) and Prometheus text (cuzk/engine/prometheus.py).

The metrics text is checked by a strict parser of the text exposition format 0.0.4 written
here (no prometheus_client dependency): every line must be a HELP, a TYPE or a sample of the
family announced before it, label values must unescape to what was put in, and histograms
must be cumulative with a ``+Inf`` bucket equal to ``_count``.
"""

from __future__ import annotations

import doctest
import json
import math
import re
import socket
import threading
import urllib.error
import urllib.request

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuzk import prometheus
from cuzk.engine import status_http
from cuzk.prometheus import Histogram, HistogramSnapshot, MetricsText, add_pipeline_metrics
from cuzk.engine.status_http import serve_status, to_jsonable
from cuzk.errors import InputError
from cuzk.pipeline.metrics import PipelineMetrics

TIMEOUT = 10


# ---------------------------------------------------------------------------- a strict parser
_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_FLOAT = r"(?:[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|NaN|[+-]Inf)"
_SAMPLE = re.compile(rf"({_NAME})(?:\{{(.*)\}})? ({_FLOAT})(?: (-?\d+))?")
_SUFFIXES = {"counter": ("",), "gauge": ("",), "untyped": ("",), "histogram": ("_bucket", "_sum", "_count"),
             "summary": ("", "_sum", "_count")}


def _unescape(s: str, quote: bool) -> str:
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            nxt = s[i + 1] if i + 1 < len(s) else ""
            allowed = {"\\": "\\", "n": "\n", **({'"': '"'} if quote else {})}
            if nxt not in allowed:
                raise ValueError(f"bad escape \\{nxt!r}")
            out.append(allowed[nxt])
            i += 2
        elif quote and c in '"\n':
            raise ValueError("unescaped quote or newline in a label value")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _labels(text: str | None) -> dict:
    out, i = {}, 0
    text = text or ""
    while i < len(text):
        m = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="').match(text, i)
        if not m:
            raise ValueError(f"bad label at {text[i:]!r}")
        j = m.end()
        while j < len(text) and text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        if j >= len(text):
            raise ValueError("unterminated label value")
        if m.group(1) in out:
            raise ValueError(f"label {m.group(1)} repeated")
        out[m.group(1)] = _unescape(text[m.end():j], quote=True)
        i = j + 1
        if i < len(text):
            if text[i] != ",":
                raise ValueError("labels must be separated by commas")
            i += 1
    return out


def _value(s: str) -> float:
    return {"NaN": math.nan, "+Inf": math.inf, "-Inf": -math.inf}.get(s) if s in ("NaN", "+Inf", "-Inf") else float(s)


def parse_exposition(text: str) -> dict:
    """name -> {"type", "help", "samples": [(sample name, labels, value)]}; raises ValueError."""
    if text and not text.endswith("\n"):
        raise ValueError("the exposition must end with a newline")
    fams: dict = {}
    current, seen_series, closed = None, set(), set()
    for n, line in enumerate(text.split("\n")[:-1] if text else [], 1):  # only \n ends a line
        if line.startswith("#"):
            m = re.fullmatch(rf"# (HELP|TYPE) ({_NAME}) ?(.*)", line)
            if not m:
                raise ValueError(f"line {n}: comments other than HELP/TYPE are not written by cuzk: {line!r}")
            what, name, rest = m.groups()
            if name in closed or (name != current and name in fams):
                raise ValueError(f"line {n}: family {name} reopened")
            if current is not None and name != current:
                closed.add(current)
            fam = fams.setdefault(name, {"type": None, "help": None, "samples": []})
            if fam["samples"]:
                raise ValueError(f"line {n}: {what} after samples of {name}")
            if what == "TYPE":
                if fam["type"] is not None or rest not in _SUFFIXES:
                    raise ValueError(f"line {n}: bad or repeated TYPE")
                fam["type"] = rest
            else:
                if fam["help"] is not None:
                    raise ValueError(f"line {n}: repeated HELP")
                fam["help"] = _unescape(rest, quote=False)
            current = name
            continue
        m = _SAMPLE.fullmatch(line)
        if not m:
            raise ValueError(f"line {n}: not a sample: {line!r}")
        name, lab, val = m.group(1), _labels(m.group(2)), _value(m.group(3))
        fam_name = current
        fam = fams.get(fam_name)
        if fam is None or fam["type"] is None:
            raise ValueError(f"line {n}: sample {name} before its TYPE")
        if not any(name == fam_name + s for s in _SUFFIXES[fam["type"]]):
            raise ValueError(f"line {n}: sample {name} does not belong to {fam['type']} {fam_name}")
        key = (name, tuple(sorted(lab.items())))
        if key in seen_series:
            raise ValueError(f"line {n}: duplicate series {key}")
        seen_series.add(key)
        fam["samples"].append((name, lab, val))
    for name, fam in fams.items():
        if fam["type"] == "histogram":
            _check_histogram(name, fam["samples"])
    return fams


def _check_histogram(name: str, samples: list) -> None:
    groups: dict = {}
    for s, lab, v in samples:
        base = tuple(sorted((k, x) for k, x in lab.items() if k != "le"))
        groups.setdefault(base, {"b": [], "count": None, "sum": None})
        g = groups[base]
        if s.endswith("_bucket"):
            g["b"].append((_value(lab["le"]), v))
        else:
            g[s.rsplit("_", 1)[1]] = v
    for base, g in groups.items():
        les = [le for le, _ in g["b"]]
        counts = [c for _, c in g["b"]]
        if les != sorted(les) or len(set(les)) != len(les) or not les or les[-1] != math.inf:
            raise ValueError(f"{name}{base}: buckets not ascending or no +Inf")
        if counts != sorted(counts) or counts[-1] != g["count"] or g["sum"] is None:
            raise ValueError(f"{name}{base}: bucket counts not cumulative or +Inf != _count")


def test_the_parser_rejects_what_the_format_forbids():
    good = "# TYPE cuzk_x gauge\ncuzk_x 1\n"
    assert parse_exposition(good)["cuzk_x"]["samples"] == [("cuzk_x", {}, 1.0)]
    for bad in ("cuzk_x 1\n", "# TYPE cuzk_x gauge\ncuzk_y 1\n", good + good, "# TYPE cuzk_x gauge\ncuzk_x 1",
                '# TYPE cuzk_x gauge\ncuzk_x{a="\\q"} 1\n', '# TYPE cuzk_x gauge\ncuzk_x{a="1",a="2"} 1\n',
                "# TYPE cuzk_h histogram\ncuzk_h_bucket{le=\"1.0\"} 2\ncuzk_h_sum 1\ncuzk_h_count 2\n",
                "# TYPE cuzk_x gauge\ncuzk_x one\n", "# random comment\n"):
        with pytest.raises(ValueError):
            parse_exposition(bad)


# ---------------------------------------------------------------------------- the builder
def test_module_doctests():
    for mod in (prometheus, status_http):
        assert doctest.testmod(mod).failed == 0, mod.__name__


def test_builder_output_parses_and_groups_families():
    m = MetricsText()
    h = Histogram([0.1, 1.0])
    for v in (0.05, 0.1, 0.5, 3.0):
        h.observe(v)
    m.counter("proofs", "Proofs.", 2, labels={"circuit": "a"})
    m.gauge("queue", "Queued.", 1.5)
    m.counter("proofs_total", "Proofs.", 5, labels={"circuit": "b"})  # same family, added later
    m.histogram("prove_seconds", "Prove.", h.snapshot(), labels={"circuit": "a"})
    m.summary("stage_seconds", "Stages.", sum=2.5, count=4, labels={"stage": "gpu"})
    m.gauge("weird", "Not a number.", float("nan"))
    m.gauge("big", "Infinite.", float("-inf"))
    fams = parse_exposition(m.render())
    assert list(fams) == ["cuzk_proofs_total", "cuzk_queue", "cuzk_prove_seconds", "cuzk_stage_seconds",
                          "cuzk_weird", "cuzk_big"]
    assert [v for _, _, v in fams["cuzk_proofs_total"]["samples"]] == [2, 5]
    buckets = [(lab["le"], v) for s, lab, v in fams["cuzk_prove_seconds"]["samples"] if s.endswith("_bucket")]
    assert buckets == [("0.1", 2), ("1.0", 3), ("+Inf", 4)]  # le is inclusive
    assert math.isnan(fams["cuzk_weird"]["samples"][0][2]) and fams["cuzk_big"]["samples"][0][2] == -math.inf
    assert MetricsText().render() == ""


_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)


@given(value=_text, help=_text, number=st.one_of(st.integers(0, 2**70), st.floats(allow_nan=False)))
def test_label_values_and_help_round_trip_through_the_parser(value, help, number):
    m = MetricsText()
    m.gauge("g", help, number, labels={"v": value, "w": "x"})
    fam = parse_exposition(m.render())["cuzk_g"]
    assert fam["help"] == help
    (_, labels, got), = fam["samples"]
    assert labels == {"v": value, "w": "x"}
    assert got == float(number)  # ints and floats come back exactly as Python rounds them


def test_builder_refuses_what_would_not_parse():
    m = MetricsText()
    m.gauge("x", "X.", 1, labels={"a": "1"})
    for call in (lambda: m.gauge("x", "X.", 2, labels={"a": "1"}),            # same series twice
                 lambda: m.gauge("x_total", "X.", 1) or m.counter("x", "X.", 1),  # x_total became a gauge
                 lambda: m.gauge("x", "X.", 1, labels={"__a": "1"}),
                 lambda: m.gauge("x", "X.", 1, labels={"1a": "1"}),
                 lambda: m.gauge("bad-name", "B.", 1),
                 lambda: m.gauge("", "B.", 1),
                 lambda: m.gauge("y", "Y.", "many"),
                 lambda: m.counter("c", "C.", -1),
                 lambda: m.histogram("h", "H.", Histogram().snapshot(), labels={"le": "1"}),
                 lambda: m.histogram("h2", "H.", HistogramSnapshot(((1.0, 3), (2.0, 2)), 1.0, 3)),
                 lambda: m.histogram("h3", "H.", HistogramSnapshot(((1.0, 3),), 1.0, 2)),
                 lambda: m.summary("s", "S.", sum=1, count=1, labels={"quantile": "0.5"})):
        with pytest.raises(InputError):
            call()
    m.counter("x2", "X.", 1)
    fams = parse_exposition(m.render())  # nothing of the refused calls was recorded
    assert list(fams) == ["cuzk_x", "cuzk_x_total", "cuzk_x2_total"] and len(fams["cuzk_x"]["samples"]) == 1
    with pytest.raises(InputError):
        Histogram([1.0, 1.0])
    with pytest.raises(InputError):
        Histogram([1.0, float("inf")])


def test_histogram_counts_every_observation_from_many_threads():
    h = Histogram([1.0, 2.0, 3.0])

    def work(k):
        for i in range(2000):
            h.observe((i + k) % 5)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    snap = h.snapshot()
    assert snap.count == 8000 and snap.sum == 4 * sum(i % 5 for i in range(2000))
    assert snap.buckets == ((1.0, 3200), (2.0, 4800), (3.0, 6400))


def test_pipeline_metrics_render_as_the_pipeline_does_with_labels():
    pm = PipelineMetrics({"submitted": 4, "done": 3, "failed": 1, "cancelled": 0},
                         {"queued": 1, "concurrency": 2, "memory_reserved_bytes": 4096},
                         {"synth": (4, 2.0), "gpu": (3, 0.75)})
    m = MetricsText()
    add_pipeline_metrics(m, pm, labels={"circuit": 'po"rep'})
    add_pipeline_metrics(m, pm, labels={"circuit": "post"})
    mine = parse_exposition(m.render())
    theirs = parse_exposition(pm.to_prometheus())
    strip = lambda fams: {(s, tuple(sorted((k, v) for k, v in lab.items() if k != "circuit")), v)  # noqa: E731
                          for f in fams.values() for s, lab, v in f["samples"]}
    assert strip(mine) == strip(theirs)  # same names and values, ours labelled per circuit
    assert {lab["circuit"] for f in mine.values() for _, lab, _ in f["samples"]} == {'po"rep', "post"}
    odd = MetricsText()  # gauges that are not numbers (a budget of None) are left out, not rendered as "None"
    add_pipeline_metrics(odd, PipelineMetrics({}, {"memory_budget": None, "note": "x", "ok": 1}, {}))
    assert list(parse_exposition(odd.render())) == ["cuzk_pipeline_ok"]


# ---------------------------------------------------------------------------- the HTTP endpoint
def _get(url: str):
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as r:
            return r.status, r.headers["Content-Type"], r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"], e.read().decode()


def test_status_and_metrics_are_served_and_errors_do_not_kill_the_server():
    calls = {"n": 0}

    def status():
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("secret detail")
        return {"jobs": (1, 2), "ratio": float("nan"), "h": HistogramSnapshot((), 0.0, 0)}

    m = MetricsText()
    m.counter("proofs", "Proofs.", 1)
    srv = serve_status(status, m.render)
    try:
        host, port = srv.address
        assert host == "127.0.0.1" and port > 0 and srv.url == f"http://127.0.0.1:{port}"
        code, ctype, body = _get(srv.url + "/status?pretty=1")
        assert (code, ctype) == (200, "application/json")
        assert json.loads(body) == {"jobs": [1, 2], "ratio": None, "h": {"buckets": [], "sum": 0.0, "count": 0}}
        code, ctype, body = _get(srv.url + "/status")
        assert code == 500 and "RuntimeError" in body and "secret" not in body
        code, ctype, body = _get(srv.url + "/metrics")
        assert code == 200 and ctype.startswith("text/plain; version=0.0.4")
        assert parse_exposition(body)["cuzk_proofs_total"]["samples"] == [("cuzk_proofs_total", {}, 1)]
        assert _get(srv.url + "/")[0] == 404 and _get(srv.url + "/statusx")[0] == 404
        req = urllib.request.Request(srv.url + "/status", data=b"x", method="POST")
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(req, timeout=TIMEOUT)
        assert info.value.code == 405
        assert _get(srv.url + "/status")[0] == 200  # still serving after the 500
    finally:
        srv.close()
    srv.close()  # idempotent
    assert not [t for t in threading.enumerate() if t.name == "cuzk-http-status"]
    with pytest.raises(OSError):
        socket.create_connection((host, port), timeout=TIMEOUT).close()


def test_bad_callbacks_and_arguments():
    with serve_status(dict, lambda: b"bytes") as srv:
        assert _get(srv.url + "/metrics")[0] == 500
        assert _get(srv.url + "/status")[:2] == (200, "application/json")
    for kw in (dict(port=-1), dict(port=70000), dict(port=True)):
        with pytest.raises(InputError):
            serve_status(dict, str, **kw)
    with pytest.raises(InputError):
        serve_status(None, str)
    with serve_status(dict, str) as a:
        with pytest.raises(OSError):  # the port is taken
            serve_status(dict, str, port=a.address[1])


def test_to_jsonable_handles_what_status_dicts_hold():
    import enum

    import numpy as np

    class Color(enum.Enum):
        RED = 1

    loop: list = []
    loop.append(loop)
    out = to_jsonable({1: Color.RED, "a": np.arange(3), "b": np.float64(2.5), "c": object(),
                       "d": loop, "e": float("inf")})
    json.dumps(out, allow_nan=False)
    assert out["1"] == "RED" and out["a"] == [0, 1, 2] and out["b"] == 2.5 and out["e"] is None
    assert out["c"].startswith("<object") and "nested too deeply" in json.dumps(out["d"])


# ---------------------------------------------------------------------------- hostile clients
def _wait_for(cond, what: str, limit: float = TIMEOUT) -> None:
    end = __import__("time").monotonic() + limit
    while not cond():
        if __import__("time").monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        __import__("time").sleep(0.01)


def _threads_named(name: str) -> list:
    return [t for t in threading.enumerate() if t.name == name and t.is_alive()]


def test_a_client_reset_mid_reply_is_logged_not_printed(capfd, caplog):
    import logging
    import struct

    big = {"x": "y" * (8 << 20)}  # larger than the socket buffers: the reply is still being written
    with caplog.at_level(logging.DEBUG, logger="cuzk.engine.http"):
        with serve_status(lambda: big, str) as srv:
            for _ in range(3):
                s = socket.create_connection(srv.address, timeout=TIMEOUT)
                s.sendall(b"GET /status HTTP/1.1\r\nHost: x\r\n\r\n")
                s.recv(100)  # the reply has started
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.close()  # RST
            _wait_for(lambda: srv.open_connections == 0, "the handlers to end")
            assert _get(srv.url + "/metrics")[0] == 200  # still serving
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception occurred" not in err, err[-2000:]
    assert any("ended" in r.getMessage() for r in caplog.records if r.name == "cuzk.engine.http")


def test_connections_beyond_the_cap_get_a_503_and_idle_ones_stay_bounded():
    with serve_status(dict, str, max_connections=2) as srv:
        idle = [socket.create_connection(srv.address, timeout=TIMEOUT) for _ in range(2)]
        _wait_for(lambda: srv.open_connections == 2, "two served connections")
        extra = [socket.create_connection(srv.address, timeout=TIMEOUT) for _ in range(20)]
        for s in extra:
            s.sendall(b"GET /status HTTP/1.1\r\nHost: x\r\n\r\n")
            reply = b""
            while chunk := s.recv(4096):
                reply += chunk
            s.close()
            assert reply.startswith(b"HTTP/1.1 503 ") and b"Retry-After: 1" in reply and b"cap" in reply
        assert srv.refused == 20 and srv.open_connections == 2
        assert len(_threads_named("cuzk-http-conn")) <= 2
        for s in idle:
            s.close()
        _wait_for(lambda: srv.open_connections == 0, "the idle connections to end")
        assert _get(srv.url + "/status")[0] == 200  # room again
    for kw in (dict(max_connections=0), dict(max_connections=1.5), dict(request_timeout=0),
               dict(timeout=float("inf"))):
        with pytest.raises(InputError):
            serve_status(dict, str, **kw)


def test_a_slow_loris_client_is_cut_after_the_request_timeout():
    import time

    with serve_status(dict, str, timeout=5, request_timeout=0.5) as srv:
        s = socket.create_connection(srv.address, timeout=TIMEOUT)
        _wait_for(lambda: srv.open_connections == 1, "the connection to be served")
        start, cut = time.monotonic(), False
        for c in b"GET /status HTTP/1.1\r\nX-Slow: " + b"a" * 200:  # one byte every 50 ms: never idle 5 s
            try:
                s.sendall(bytes([c]))
            except OSError:
                cut = True
                break
            time.sleep(0.05)
            if srv.open_connections == 0:
                cut = True
                break
        s.close()
        assert cut, "the server kept a connection that sent a byte now and then for 10 s"
        assert time.monotonic() - start < 8  # cut well before the client was done
        _wait_for(lambda: srv.open_connections == 0, "the handler to end")
        assert _get(srv.url + "/status")[0] == 200


def test_close_stops_every_thread_it_started():
    srv = serve_status(dict, str)
    idle = [socket.create_connection(srv.address, timeout=TIMEOUT) for _ in range(3)]
    _wait_for(lambda: srv.open_connections == 3, "three served connections")
    srv.close()
    assert not _threads_named("cuzk-http-conn") and not _threads_named("cuzk-http-status")
    for s in idle:
        assert s.recv(10) == b""  # closed by the server
        s.close()


def test_engine_serve_status_takes_a_hosts_own_status_and_metrics():
    # cuzk serve wraps the engine and serves its own figures beside the engine's on the same port
    import cuzk

    class Square:
        def synthesize(self, x):
            return x * x

    class Echo:
        def prove(self, w):
            return w

    with cuzk.Engine(device="cpu", memory_budget=None) as engine:
        engine.register("sq", Square(), Echo())
        with pytest.raises(InputError, match="metrics must be callable"):
            engine.serve_status(metrics="text")
        host, port = engine.serve_status(status=lambda: {"daemon": 1, **engine.status()},
                                         metrics=lambda: engine.metrics() + "cuzk_extra 1\n")
        doc = json.load(urllib.request.urlopen(f"http://{host}:{port}/status", timeout=10))
        text = urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=10).read().decode()
    assert doc["daemon"] == 1 and "sq" in doc["circuits"]
    assert text.endswith("cuzk_extra 1\n") and 'cuzk_jobs_submitted_total{circuit="sq"}' in text
