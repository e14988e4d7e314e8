"""Issue 39, item 1: what a local server hands the gateway besides its answers is input, not truth.

A real gateway (in-process on a free loopback port, or ``kvswitch gateway run`` where a signal must stop
it) in front of hostile loopback servers (aiohttp, their own thread): a ``/metrics`` page whose counters
jump by 4e18 or 2e9 or read NaN, a ``/props`` that claims 20,000,000 or 2^62 slots or is 100 MB long, a
server that answers 400 to ``id_slot``; and a followed server log replaced by a real FIFO, made a
symlink to ``/dev/zero`` or flooded with 57 MB of short lines. Before the fixes these stored
``in 4000000000000000000`` (and ``usage``/``sessions`` failed on it), logged a traceback per request,
held the event loop 5-8 s per request, answered aiohttp's bare 500, read the whole 100 MB, failed every
request with 400, and hung every request and the signals that stop the gateway. Now each costs the row
its numbers or the request its ``id_slot``, says so once, and a ticker on the gateway's own event loop
shows it never held more than 50 ms (``MAX_GAP_S``; ``Ticker`` says how scheduler noise is told apart).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from kvswitch.cli import main
from kvswitch.commands.server_notes import ServerLogNotes
from kvswitch.core.applog import log_file
from kvswitch.core.gateway_config import Routes, ensure_token, usage_db, write_routes
from kvswitch.core.models import LogSource, Profile
from kvswitch.core.paths import AppPaths
from kvswitch.core.store import ProfileStore
from kvswitch.gateway.relay.server import GatewayServer
from kvswitch.gateway.service import GatewayHandler
from kvswitch.usage.queries import query
from kvswitch.usage.schema import UsageRow
from support.gateway import gateway_process
from support.hostile_loopback import MAX_GAP_S, Handler, HostileServer, Ticker, measured
from support.net import free_port

pytestmark = pytest.mark.timeout(120)

SESSION = "hostile-session"
FORCED = ("slot update_slots: id  0 | task 7 | forcing full prompt re-processing due to lack of cache data "
          "(likely due to SWA or hybrid/recurrent memory, see https://github.com/ggml-org/llama.cpp/pull/13194)")

@pytest.fixture
def paths(fake_home: Path) -> AppPaths:
    return AppPaths.default()


@pytest.fixture
def servers() -> Iterator[Callable[[dict[str, Handler]], HostileServer]]:
    made: list[HostileServer] = []

    def start(routes: dict[str, Handler]) -> HostileServer:
        made.append(HostileServer(routes))
        return made[-1]

    yield start
    for server in made:
        server.close()


@pytest.fixture
def gateway(paths: AppPaths) -> Iterator[Callable[..., GatewayServer]]:
    """``start(notes=None)``: the real gateway in this process on a free loopback port."""
    started: list[GatewayServer] = []

    def start(notes: Any = None) -> GatewayServer:
        started.append(GatewayServer(GatewayHandler(paths, notes=notes), host="127.0.0.1", port=0).start())
        return started[-1]

    yield start
    for server in started:
        server.stop()


def _local(paths: AppPaths, url: str, **fields: Any) -> str:
    ProfileStore(paths).add(Profile(name="local", kind="llama.cpp", base_url=url, model="tiny", **fields))
    write_routes(paths, Routes(clients={"claude": "local", "codex": "local"}))
    return ensure_token(paths)


def _turn(turn: int) -> dict[str, Any]:
    """Turn ``turn`` of one conversation: each extends the one before it whole."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "say hi"}]
    for n in range(turn):
        messages += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": f"more {n}"}]
    return {"model": "tiny", "max_tokens": 8, "system": "You answer briefly. " * 40,
            "tools": [{"name": "Read", "input_schema": {"type": "object"}}], "messages": messages}


def _ask(url: str, token: str, turn: int, timeout: float = 10.0) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    answer = httpx.post(url + "/claude/v1/messages", json=_turn(turn), timeout=timeout,
                        headers={"x-api-key": token, "x-claude-code-session-id": SESSION,
                                 "user-agent": "claude-cli/2.1.332 (external, sdk-cli)"})
    return answer, time.monotonic() - started


def _rows(paths: AppPaths, count: int, timeout: float = 15.0) -> list[UsageRow]:
    deadline = time.monotonic() + timeout
    while True:
        rows = query(usage_db(paths))
        if len(rows) >= count or time.monotonic() > deadline:
            return rows
        time.sleep(0.05)  # the usage writer stores rows on its own thread


def _messages_answer(usage: dict[str, int]) -> Handler:
    async def answer(request: web.Request) -> web.StreamResponse:
        return web.json_response({"id": "msg_1", "type": "message", "role": "assistant", "model": "tiny",
                                  "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
                                  "usage": usage})

    return answer


# -- the counts fallback: a /metrics page is input ---------------------------------------------------
class Counters:
    """A llama-server ``/metrics`` page whose prompt counter moves by ``jump`` with every request
    (``None``: a page of NaN)."""

    def __init__(self, jump: float | None):
        self.jump, self.prompt = jump, 1000.0

    async def metrics(self, request: web.Request) -> web.StreamResponse:
        shown = "NaN" if self.jump is None else repr(self.prompt)
        return web.Response(text=f"llamacpp:prompt_tokens_total {shown}\n"
                                 "llamacpp:prompt_tokens_cached_total 0\n"
                                 "llamacpp:requests_processing 0\nllamacpp:requests_deferred 0\n")

    async def messages(self, request: web.Request) -> web.StreamResponse:
        self.prompt += self.jump or 0.0
        return await _messages_answer({"output_tokens": 1})(request)  # no prompt counts in the answer


@pytest.mark.parametrize("jump", [4e18, 2e9, None], ids=["jump-4e18", "jump-2e9", "nan"])
def test_a_counters_page_out_of_bounds_fills_no_row_and_says_so_once(
    paths: AppPaths, servers: Any, gateway: Any, jump: float | None,
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str],
) -> None:
    counters = Counters(jump)
    server = servers({"/metrics": counters.metrics, "/v1/messages": counters.messages})
    token = _local(paths, server.url)
    running = gateway()
    ticker = Ticker(running._loop)
    with caplog.at_level(logging.INFO, logger="kvswitch"):
        for turn in range(3):
            answer, _took = _ask(running.url, token, turn)
            assert answer.status_code == 200
        rows = _rows(paths, 3)
    gap = ticker.held()
    with capsys.disabled():
        measured(f"counts {jump}: event loop held at most {gap * 1000:.1f} ms")
    assert gap < MAX_GAP_S
    assert len(rows) == 3
    # the stored numbers are never the page's: not a count (4e18, NaN) or no one request's (2e9)
    assert [r.input_tokens for r in rows] == [None] * 3, [(r.input_tokens, r.notes) for r in rows]
    assert all("prompt counts not known" in (r.notes or "") for r in rows), [r.notes for r in rows]
    said = [r for r in caplog.records if r.name.startswith("kvswitch.gateway.truth.counts_fallback")]
    assert not [r for r in caplog.records if r.exc_info], "no traceback"
    assert 1 <= len(said) <= 3, [r.getMessage() for r in said]  # one short line a bad page at most
    assert all(len(r.getMessage()) < 300 for r in said)
    # and every reader of the store still reads it
    capsys.readouterr()
    assert main(["usage"]) == 0
    assert main(["sessions"]) == 0
    assert main(["usage", "--session", SESSION]) == 0
    shown = capsys.readouterr().out
    assert "000,000,000" not in shown
    assert "4000000000000000000" not in shown


# -- session slots: /props is input, and id_slot may be refused ----------------------------------------
def _chat_answer() -> Handler:
    async def answer(request: web.Request) -> web.StreamResponse:
        return web.json_response({"id": "c1", "object": "chat.completion", "model": "tiny", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 1, "total_tokens": 41}})

    return answer


def _props(total: object) -> Handler:
    async def props(request: web.Request) -> web.StreamResponse:
        return web.json_response({"total_slots": total, "default_generation_settings": {"n_ctx": 4096}})

    return props


@pytest.mark.parametrize("total", [20_000_000, 2**62], ids=["20M-slots", "2^62-slots"])
def test_an_absurd_slot_count_is_no_count_and_every_request_goes_through(
    paths: AppPaths, servers: Any, gateway: Any, total: int, caplog: pytest.LogCaptureFixture,
) -> None:
    server = servers({"/props": _props(total), "/v1/chat/completions": _chat_answer()})
    token = _local(paths, server.url, slot_affinity=True)
    running = gateway()
    ticker = Ticker(running._loop)
    with caplog.at_level(logging.WARNING, logger="kvswitch"):
        took = []
        for turn in range(3):
            answer, seconds = _ask(running.url, token, turn, timeout=30)
            assert answer.status_code == 200, answer.text[:300]
            took.append(seconds)
        rows = _rows(paths, 3)
    gap = ticker.held()
    measured(f"total_slots {total}: event loop held at most {gap * 1000:.1f} ms; requests {took}")
    assert gap < MAX_GAP_S, (gap, took)
    assert max(took) < 1.0, took
    assert len(rows) == 3
    assert all(r.status == 200 for r in rows)
    assert all(b"id_slot" not in body for body in server.seen)  # no slot named from a count that is none
    said = [r.getMessage() for r in caplog.records if r.name == "kvswitch.gateway.truth.slots"]
    assert len(said) == 1, said  # said once
    assert str(total) in said[0]


def test_a_props_page_is_read_at_most_1_mb(paths: AppPaths, servers: Any, gateway: Any) -> None:
    """A 100 MB ``/props`` (a valid object, its slot count first): read streamed and left at 1 MB, so the
    count in it is not used; before, every byte was read and parsed on the event loop."""
    sent = [0]

    async def props(request: web.Request) -> web.StreamResponse:
        out = web.StreamResponse(headers={"Content-Type": "application/json"})
        await out.prepare(request)
        chunk = b" " * (1 << 20)
        await out.write(b'{"total_slots": 2, "padding": "')
        with_errors = (ConnectionError, OSError, RuntimeError)
        try:
            for _ in range(100):
                await out.write(chunk)
                sent[0] += len(chunk)
            await out.write(b'"}')
        except with_errors:
            return out
        await out.write_eof()
        return out

    server = servers({"/props": props, "/v1/chat/completions": _chat_answer()})
    token = _local(paths, server.url, slot_affinity=True)
    running = gateway()
    ticker = Ticker(running._loop)
    answer, took = _ask(running.url, token, 0, timeout=30)
    assert answer.status_code == 200
    gap = ticker.held()
    measured(f"100 MB /props: event loop held at most {gap * 1000:.1f} ms; request {took:.2f} s")
    assert gap < MAX_GAP_S
    assert took < 3.0
    time.sleep(0.3)  # the server notices the closed connection
    measured(f"100 MB /props: {sent[0] / (1 << 20):.0f} MB sent before the gateway closed the connection")
    assert sent[0] < 16 << 20, sent[0]  # 1 MB read, plus what the sockets' buffers held
    assert b"id_slot" not in server.seen[0]


def test_a_server_that_refuses_id_slot_gets_the_request_without_it(
    paths: AppPaths, servers: Any, gateway: Any, caplog: pytest.LogCaptureFixture,
) -> None:
    chat = _chat_answer()

    async def refusing(request: web.Request) -> web.StreamResponse:
        if b'"id_slot"' in await request.read():
            return web.json_response({"error": {"code": 400, "message": "Invalid parameter: id_slot",
                                                "type": "invalid_request_error"}}, status=400)
        return await chat(request)

    server = servers({"/props": _props(2), "/v1/chat/completions": refusing})
    token = _local(paths, server.url, slot_affinity=True)
    running = gateway()
    with caplog.at_level(logging.WARNING, logger="kvswitch"):
        for turn in range(3):
            answer, _took = _ask(running.url, token, turn)
            assert answer.status_code == 200, answer.text[:300]
    # the first request with its id_slot, once more without; then no id_slot for this server
    assert [b'"id_slot"' in body for body in server.seen] == [True, False, False, False], server.seen
    rows = _rows(paths, 3)
    assert [r.status for r in rows] == [200, 200, 200]
    said = [r.getMessage() for r in caplog.records if r.name == "kvswitch.gateway.truth.slots"]
    assert len(said) == 1, said
    assert "refused id_slot" in said[0]


# -- the followed server log: a FIFO, /dev/zero, a flood ------------------------------------------------
def _follow(paths: AppPaths, log: Path, server: HostileServer) -> str:
    return _local(paths, server.url, log=LogSource(kind="file", path=str(log)))


def _reprocessed_server(servers: Any, says_in: Path | None = None) -> HostileServer:
    """A local server whose every answer says it processed the whole prompt again (no cached tokens): a
    continued turn is judged re-processed, and the gateway asks the log reader what the server said.
    With ``says_in``, it also says why in that log as it processes each request (as llama-server does)."""
    answer = _messages_answer({"input_tokens": 900, "output_tokens": 1, "cache_read_input_tokens": 0})

    async def messages(request: web.Request) -> web.StreamResponse:
        if says_in is not None:
            with says_in.open("a") as handle:
                handle.write(FORCED + "\n")
        return await answer(request)

    return servers({"/v1/messages": messages})


def test_a_log_replaced_by_a_fifo_holds_no_request_and_no_signal(
    fake_home: Path, paths: AppPaths, servers: Any, tmp_path: Path,
) -> None:
    """``kvswitch gateway run``: its followed log replaced by a FIFO no one writes. Before, the reader
    thread blocked in ``open()`` holding the lock the judgement takes on the event loop: every continued
    turn hung, and SIGTERM was never handled."""
    log = tmp_path / "server.log"
    log.write_text("started\n")
    token = _follow(paths, log, _reprocessed_server(servers))
    port = free_port()
    with gateway_process(fake_home, port, tmp_path / "gateway.log") as proc:
        url = f"http://127.0.0.1:{port}"
        assert _ask(url, token, 0)[0].status_code == 200
        time.sleep(0.5)  # the reader opened the log at its end
        log.unlink()
        os.mkfifo(log)
        time.sleep(0.5)  # the reader found the log replaced, and looked at what is there now
        took = []
        for turn in range(1, 4):
            try:
                answer, seconds = _ask(url, token, turn, timeout=5)
            except httpx.TimeoutException:
                proc.kill()
                pytest.fail(f"turn {turn} hung on the FIFO")
            assert answer.status_code == 200
            took.append(seconds)
        measured(f"FIFO: requests {took}")
        assert max(took) < 1.0, took
        rows = _rows(paths, 4)
        assert [r.status for r in rows] == [200] * 4
        assert any(r.reason in ("evicted", "unknown") for r in rows), [(r.verdict, r.reason) for r in rows]
        stopped = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail("SIGTERM was not handled within 10 s")
        measured(f"FIFO: SIGTERM handled in {time.monotonic() - stopped:.2f} s")
        assert time.monotonic() - stopped < 5
    said = log_file(paths).read_text()  # the gateway's own log
    assert "not a regular file (a FIFO)" in said, said[-2000:]


@pytest.fixture
def notes_reader(paths: AppPaths) -> Iterator[Callable[[], ServerLogNotes]]:
    made: list[ServerLogNotes] = []

    def start() -> ServerLogNotes:
        made.append(ServerLogNotes(paths).start())
        return made[-1]

    yield start
    for reader in made:
        stopped = time.monotonic()
        reader.notes.close()
        assert time.monotonic() - stopped < 3, "the log reader did not stop promptly"


def test_a_log_that_is_a_symlink_to_dev_zero_is_never_read_and_is_left_when_fixed(
    paths: AppPaths, servers: Any, gateway: Any, notes_reader: Any, tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Before, the reader opened ``/dev/zero`` and read it for good (never at an end, it never looked
    at the path again): a real log put back in its place was never followed."""
    log = tmp_path / "server.log"
    log.symlink_to("/dev/zero")
    token = _follow(paths, log, _reprocessed_server(servers, says_in=log))
    with caplog.at_level(logging.WARNING, logger="kvswitch"):
        reader = notes_reader()
        running = gateway(notes=reader.notes)
        ticker = Ticker(running._loop)
        reader.catch_up("local")
        time.sleep(0.3)  # a few passes over the device
        log.unlink()
        log.write_text("")  # the real log, back in place
        reader.catch_up("local")
        time.sleep(0.3)
        reader.catch_up("local")
        for turn in range(2):
            assert _ask(running.url, token, turn)[0].status_code == 200
        gap = ticker.held()
    measured(f"/dev/zero: event loop held at most {gap * 1000:.1f} ms")
    assert gap < MAX_GAP_S
    rows = _rows(paths, 2)
    said = [r.getMessage() for r in caplog.records if "server notes" in r.getMessage()]
    assert any("not a regular file (a device)" in line for line in said), said
    assert rows[1].reason == "server", [(r.reason, r.reason_detail) for r in rows]


def test_a_57_mb_burst_of_short_lines_holds_no_request(
    paths: AppPaths, servers: Any, gateway: Any, notes_reader: Any, tmp_path: Path,
) -> None:
    """Before, the judgement read the burst on the event loop (4 MB a read, each line classified):
    requests stalled ~5 s."""
    log = tmp_path / "server.log"
    log.write_text("started\n")
    token = _follow(paths, log, _reprocessed_server(servers))
    reader = notes_reader()
    running = gateway(notes=reader.notes)
    reader.catch_up("local")  # opened at its end
    assert _ask(running.url, token, 0)[0].status_code == 200
    burst = b"short ln\n" * ((57 << 20) // 9)  # 57 MB of 9-byte lines
    ticker = Ticker(running._loop)
    with log.open("ab") as handle:
        handle.write(burst)
    took = [_ask(running.url, token, turn)[1] for turn in range(1, 6)]
    gap = ticker.held()
    measured(f"57 MB burst: event loop held at most {gap * 1000:.1f} ms; requests {took}")
    assert gap < MAX_GAP_S, (gap, took)
    assert max(took) < 1.0, took
    rows = _rows(paths, 6)
    assert [r.status for r in rows] == [200] * 6
    assert json.dumps([r.reason for r in rows])  # every row judged
