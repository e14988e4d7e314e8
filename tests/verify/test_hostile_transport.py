"""The shared bounded readers (core.http, core.text) under the recorder and the port probe, against
hostile loopback servers; plus the helpers' own edge cases."""

from __future__ import annotations

import socket
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from verify_stubs import Reply, StubServer

from kvswitch.core.http import (
    Deadline,
    DeadlineExceeded,
    ResponseTooLarge,
    check_timeout,
    iter_lines_bounded,
    read_bounded,
)
from kvswitch.core.text import printable, printable_data
from kvswitch.platform.probe import identify
from kvswitch.verify.recorder import MAX_REQUEST_BODY, Recorder
from support.hostile_servers import HostileServer

MARGIN = 2.5


@pytest.fixture
def endless() -> Iterator[HostileServer]:
    server = HostileServer("endless_body")
    yield server
    server.close()


@pytest.fixture
def drip() -> Iterator[HostileServer]:
    server = HostileServer("slow_body")
    yield server
    server.close()


@pytest.fixture
def header_drip() -> Iterator[HostileServer]:
    server = HostileServer("slow_headers")
    yield server
    server.close()


# -- the helpers -------------------------------------------------------------------------------
@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan"), 0, -1, 1e9, True, "3"])
def test_check_timeout_refuses_what_could_never_end(value: object) -> None:
    with pytest.raises(ValueError, match="timeout"):
        check_timeout(value)  # type: ignore[arg-type]


def test_read_bounded_names_the_cap_and_the_deadline() -> None:
    assert read_bounded([b"ab", b"cd"], 4) == b"abcd"
    with pytest.raises(ResponseTooLarge, match="the server sent more than 4 bytes"):
        read_bounded([b"ab", b"cd", b"e"], 4)
    now = [0.0]
    deadline = Deadline(2, "http://x", clock=lambda: now[0])

    def ticking() -> Iterator[bytes]:
        while True:
            now[0] += 1.0
            yield b"."

    with pytest.raises(DeadlineExceeded, match="http://x: no complete answer within the 2 s timeout"):
        read_bounded(ticking(), 1 << 20, deadline)


def test_lines_are_split_across_chunks_and_an_endless_line_is_cut() -> None:
    assert list(iter_lines_bounded([b"a\r\nb", b"c\n", b"\nd"], 10)) == [b"a", b"bc", b"", b"d"]
    with pytest.raises(ResponseTooLarge, match="sent a line longer than 10 bytes"):
        list(iter_lines_bounded(iter(lambda: b"xxxx", None), 10))


def test_printable_strips_escapes_controls_and_bidi_but_keeps_text() -> None:
    assert printable("\x1b[1;31mred\x1b[0m") == "red"
    assert printable("a\x1b]0;title\x07b\x1b]8;;http://x\x1b\\c") == "abc"
    assert printable("over\rwrite\x00\x7f\x85\x9b2J") == "overwrite"  # 0x9b 2 J: 8-bit CSI clear
    assert printable("\u202eevil\u2066x\u2069") == "evilx"
    assert printable("l1\n\tl2") == "l1\n\tl2"
    assert printable("l1\n\tl2", multiline=False) == "l1  l2"
    assert printable("naïve 模型 🙂 — ok") == "naïve 模型 🙂 — ok"
    assert printable_data({"id\x1b[m": ["a\x1b[2Jb", 3, None]}) == {"id": ["ab", 3, None]}


# -- port probing ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["endless", "drip", "header_drip"])
def test_port_probe_gives_up_on_a_hostile_port_in_bounded_time(
    kind: str, request: pytest.FixtureRequest
) -> None:
    server: HostileServer = request.getfixturevalue(kind)
    tracemalloc.start()
    started = time.monotonic()
    try:
        assert identify("127.0.0.1", server.port, timeout=0.5) is None
        elapsed = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert elapsed < 0.5 * 5 + MARGIN  # the port's whole budget, whatever it sends
    assert peak < 32 << 20


def test_port_probe_cleans_names_a_server_reports(stub: StubServer) -> None:
    stub.routes["GET /props"] = [Reply.json({"total_slots": 1, "build_info": "b1\x1b]0;x\x07"})]
    stub.routes["GET /v1/models"] = [Reply.json({"data": [{"id": "m\x1b[31m\u202eodel"}]})]
    found = identify("127.0.0.1", int(stub.url.rsplit(":", 1)[1]))
    assert found is not None
    assert found.version == "b1"
    assert found.models == ("model",)


# -- the recorder ------------------------------------------------------------------------------
def _read_until_cut(url: str) -> tuple[int, Exception | None]:
    """Bytes received through the recorder, and how the answer ended (``None``: complete)."""
    received = 0
    try:
        with httpx.stream("GET", url, timeout=10) as response:
            for chunk in response.iter_raw():
                received += len(chunk)
    except httpx.HTTPError as exc:
        return received, exc
    return received, None


def test_recorder_cuts_an_endless_upstream_at_its_size_cap(endless: HostileServer, tmp_path: Path) -> None:
    cap = 2 << 20
    with Recorder(endless.url, tmp_path / "caps", max_response_bytes=cap) as rec:
        started = time.monotonic()
        received, error = _read_until_cut(rec.url + "/v1/models")
        elapsed = time.monotonic() - started
    assert isinstance(error, httpx.RemoteProtocolError)  # cut, not a complete answer
    assert received <= cap
    assert elapsed < 10
    assert rec.captures
    assert rec.captures[0].status == 200
    assert len(rec.captures[0].response_sample) <= 4 << 20


def test_recorder_ends_an_answer_past_its_time_limit(drip: HostileServer, tmp_path: Path) -> None:
    with Recorder(drip.url, tmp_path / "caps", max_response_seconds=2) as rec:
        started = time.monotonic()
        _, error = _read_until_cut(rec.url + "/v1/models")
        elapsed = time.monotonic() - started
    assert isinstance(error, httpx.RemoteProtocolError)
    assert 1.5 < elapsed < 2 + MARGIN


def test_recorder_refuses_an_oversized_request_body_without_reading_it(
    stub: StubServer, tmp_path: Path
) -> None:
    head = f"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: {MAX_REQUEST_BODY + 1}\r\n\r\n"
    with (
        Recorder(stub.url, tmp_path / "caps") as rec,
        socket.create_connection(("127.0.0.1", rec.port)) as sock,
    ):
        sock.sendall(head.encode())
        sock.settimeout(5)
        answer = b""
        while piece := sock.recv(65536):  # the recorder closes the connection after its answer
            answer += piece
    assert answer.startswith(b"HTTP/1.1 413")
    assert b"the client sent more than 64 MB" in answer
    assert not stub.requests  # nothing was forwarded


def test_recorder_closes_a_client_that_sends_nothing(stub: StubServer, tmp_path: Path) -> None:
    with (
        Recorder(stub.url, tmp_path / "caps", client_idle_timeout=1) as rec,
        socket.create_connection(("127.0.0.1", rec.port)) as sock,
    ):
        sock.settimeout(10)
        started = time.monotonic()
        assert sock.recv(1024) == b""  # closed by the recorder, not by this test's own timeout
        elapsed = time.monotonic() - started
    assert 0.8 < elapsed < 1 + MARGIN


def test_recorder_ends_headers_that_drip_forever(header_drip: HostileServer, tmp_path: Path) -> None:
    with Recorder(header_drip.url, tmp_path / "caps", max_response_seconds=2) as rec:
        started = time.monotonic()
        response = httpx.get(rec.url + "/v1/models", timeout=10)
        elapsed = time.monotonic() - started
    assert response.status_code == 502
    assert "no complete answer within the 2 s timeout" in response.text
    assert 1.5 < elapsed < 2 + MARGIN
