"""cuzk/serve/direct.py on a bare grpcio server: calls answered from any thread, refusals before
the request is read, the bound on calls, clients that go away, a call without a message, status
messages a client accepts, and a stop that leaves no thread behind; the methods it does not take
stay with grpcio's handlers."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

grpc = pytest.importorskip("grpc")

from cuzk.serve.direct import DirectCalls  # noqa: E402
from cuzk.serve.validate import status_text  # noqa: E402

ECHO, LATER, BOOM, PLAIN, LONG = "/t.S/Echo", "/t.S/Later", "/t.S/Boom", "/t.S/Plain", "/t.S/Long"


class Harness:
    def __init__(self, *, admit=None, max_calls=8):
        self.later: list = []  # calls the Later handler keeps, to answer from the test's thread
        self.gone = threading.Event()
        self.pool = ThreadPoolExecutor(4, thread_name_prefix="cuzk-serve-test")
        self.server = grpc.server(self.pool, options=[("grpc.so_reuseport", 0)], handlers=[
            grpc.method_handlers_generic_handler("t.S", {"Plain": grpc.unary_unary_rpc_method_handler(
                lambda req, ctx: b"plain:" + req)})])

        def later(raw, call):
            call.on_gone(self.gone.set)
            self.later.append((raw, call))

        def boom(raw, call):
            raise ValueError("the handler broke")

        handlers = {ECHO: lambda raw, call: call.reply(b"echo:" + raw), LATER: later, BOOM: boom,
                    LONG: lambda raw, call: call.abort("INVALID_ARGUMENT", "é" * 9000)}
        self.direct = DirectCalls.attach(self.server, handlers, self.pool, admit=admit, max_calls=max_calls)
        assert self.direct is not None, "this grpcio lacks the call API cuzk/serve/direct.py uses"
        port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()
        self.direct.start()
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")

    def rpc(self, method):
        return self.channel.unary_unary(method)

    def close(self):
        self.channel.close()
        stopped = self.server.stop(0).wait(10)
        self.direct.stop(stopped)
        self.pool.shutdown(wait=True)


@pytest.fixture
def h():
    harness = Harness()
    yield harness
    harness.close()


def _wait_for(cond, timeout=10.0):
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.005)


def test_a_call_is_answered_inline_or_later_from_another_thread(h):
    assert h.rpc(ECHO)(b"hi", timeout=10) == b"echo:hi"
    fut = h.rpc(LATER).future(b"x", timeout=10)
    _wait_for(lambda: h.later)
    raw, call = h.later[0]
    assert raw == b"x" and call.method == LATER and not fut.done()
    replier = threading.Thread(target=lambda: call.reply(b"from another thread"))
    replier.start()
    replier.join()
    assert fut.result() == b"from another thread"
    assert call.reply(b"twice") is False and call.abort("INTERNAL", "no") is False  # answered once
    _wait_for(lambda: h.direct.live == 0)
    assert not h.gone.is_set()  # answered: the client did not go away


def test_grpcio_handlers_serve_the_other_methods_on_the_same_port(h):
    assert h.rpc(PLAIN)(b"p", timeout=10) == b"plain:p"
    with pytest.raises(grpc.RpcError) as e:
        h.rpc("/t.S/Nope")(b"", timeout=10)
    assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_an_abort_carries_its_code_and_message_and_a_broken_handler_is_internal(h):
    fut = h.rpc(LATER).future(b"", timeout=10)
    _wait_for(lambda: h.later)
    assert h.later[0][1].abort("NOT_FOUND", "job_id: no job 'x'")
    with pytest.raises(grpc.RpcError) as e:
        fut.result()
    assert e.value.code() == grpc.StatusCode.NOT_FOUND and e.value.details() == "job_id: no job 'x'"
    with pytest.raises(grpc.RpcError) as e:
        h.rpc(BOOM)(b"", timeout=10)
    assert e.value.code() == grpc.StatusCode.INTERNAL and "the handler broke" in e.value.details()


def test_a_long_message_is_cut_to_what_the_client_accepts(h):
    # 8,000 "é" percent-encode to 48,000 bytes, over a client's 16 KiB metadata limit: it would
    # see RESOURCE_EXHAUSTED ("metadata size exceeds hard limit") instead of the status
    with pytest.raises(grpc.RpcError) as e:
        h.rpc(LONG)(b"", timeout=10)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and e.value.details() == "é" * 1333


@pytest.mark.parametrize("how", ["cancel", "deadline"])
def test_a_client_gone_before_the_answer_is_told_and_a_late_answer_goes_nowhere(h, how):
    fut = h.rpc(LATER).future(b"", timeout=0.3 if how == "deadline" else 10)
    _wait_for(lambda: h.later)
    if how == "cancel":
        fut.cancel()
    assert h.gone.wait(10)
    _wait_for(lambda: h.direct.live == 0)
    assert h.later[0][1].reply(b"too late") is False
    assert h.rpc(ECHO)(b"on", timeout=10) == b"echo:on"  # and it serves on


def test_a_call_without_its_message_is_refused():
    h = Harness()
    try:
        with pytest.raises(grpc.RpcError) as e:
            h.channel.stream_unary(ECHO)(iter(()), timeout=10)  # half-closes with no message
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "no message" in e.value.details()
    finally:
        h.close()


def test_a_refusal_comes_before_the_request_is_read():
    seen = []

    def admit(method, metadata):
        seen.append((method, dict(metadata)))
        return None if dict(metadata).get("authorization") == "Bearer ok" else ("UNAUTHENTICATED", "no token")

    h = Harness(admit=admit)
    try:
        with pytest.raises(grpc.RpcError) as e:
            h.rpc(ECHO)(b"x", timeout=10)
        assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED and e.value.details() == "no token"
        assert h.rpc(ECHO)(b"x", timeout=10, metadata=(("authorization", "Bearer ok"),)) == b"echo:x"
        assert [m for m, _ in seen] == [ECHO, ECHO]
    finally:
        h.close()


def test_calls_beyond_the_bound_are_refused_and_the_bound_frees_as_calls_end():
    h = Harness(max_calls=2)
    try:
        futs = [h.rpc(LATER).future(b"", timeout=10) for _ in range(2)]
        _wait_for(lambda: len(h.later) == 2)
        with pytest.raises(grpc.RpcError) as e:
            h.rpc(ECHO)(b"", timeout=10)
        assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "max_concurrent_rpcs" in e.value.details()
        for _, call in h.later:
            call.reply(b"done")
        assert [f.result() for f in futs] == [b"done", b"done"]
        _wait_for(lambda: h.direct.live == 0)
        assert h.rpc(ECHO)(b"again", timeout=10) == b"echo:again"
    finally:
        h.close()


def test_stop_ends_the_calls_thread_and_answers_after_it_go_nowhere():
    before = {t.name for t in threading.enumerate()}
    h = Harness()
    fut = h.rpc(LATER).future(b"", timeout=30)
    _wait_for(lambda: h.later)
    h.close()  # grpc's stop cancels the call in flight
    assert h.gone.is_set() and fut.exception(10) is not None
    assert h.later[0][1].reply(b"after the stop") is False
    assert not ({t.name for t in threading.enumerate() if t.is_alive()} - before)


def _encoded(text: str) -> int:
    # grpc-message's percent-encoding: printable ASCII but '%' as is, every other byte as %XX
    return sum(1 if 0x20 <= b <= 0x7E and b != 0x25 else 3 for b in text.encode("utf-8", "replace"))


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=3000), limit=st.integers(0, 9000))
@example(text="\N{GRINNING FACE}", limit=11)  # a 4-byte character: 12 bytes once encoded
def test_status_text_is_the_longest_prefix_within_the_bound(text, limit):
    cut = status_text(text, limit)
    assert text.startswith(cut) and _encoded(cut) <= limit
    assert cut == text or _encoded(text[: len(cut) + 1]) > limit
