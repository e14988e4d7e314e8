"""Issue 39, item 1 (the server's pages): what a local server hands the gateway besides its answers is
input, not truth.

A real gateway (in-process on a free loopback port) in front of hostile loopback servers (aiohttp, their
own thread): a ``/metrics`` page whose counters jump by 4e18 or 2e9 or read NaN, a ``/props`` that
claims 20,000,000 or 2^62 slots or is 100 MB long, a server that answers 400 to ``id_slot``. Before the
fixes these stored ``in 4000000000000000000`` (and ``usage``/``sessions`` failed on it), logged a
traceback per request, held the event loop 5-8 s per request, answered aiohttp's bare 500, read the
whole 100 MB and failed every request with 400. Now each costs the row its numbers or the request its
``id_slot``, says so once, and a ticker on the gateway's own event loop shows it never held more than
50 ms (``MAX_GAP_S``; ``Ticker`` says how scheduler noise is told apart). The followed server log is
``test_gateway_server_log.py``.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from kvswitch.cli import main
from kvswitch.core.paths import AppPaths
from support.hostile_gateway import (  # noqa: F401 - the fixtures
    SESSION,
    ask,
    gateway_fixture,
    local_profile,
    messages_answer,
    servers_fixture,
    usage_rows,
)
from support.hostile_loopback import MAX_GAP_S, Handler, Ticker, measured

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def paths(fake_home: Path) -> AppPaths:
    return AppPaths.default()


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
        return await messages_answer({"output_tokens": 1})(request)  # no prompt counts in the answer


@pytest.mark.parametrize("jump", [4e18, 2e9, None], ids=["jump-4e18", "jump-2e9", "nan"])
def test_a_counters_page_out_of_bounds_fills_no_row_and_says_so_once(
    paths: AppPaths, servers: Any, gateway: Any, jump: float | None,
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str],
) -> None:
    counters = Counters(jump)
    server = servers({"/metrics": counters.metrics, "/v1/messages": counters.messages})
    token = local_profile(paths, server.url)
    running = gateway()
    ticker = Ticker(running._loop)
    with caplog.at_level(logging.INFO, logger="kvswitch"):
        for turn in range(3):
            answer, _took = ask(running.url, token, turn)
            assert answer.status_code == 200
        rows = usage_rows(paths, 3)
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
    token = local_profile(paths, server.url, slot_affinity=True)
    running = gateway()
    ticker = Ticker(running._loop)
    with caplog.at_level(logging.WARNING, logger="kvswitch"):
        took = []
        for turn in range(3):
            answer, seconds = ask(running.url, token, turn, timeout=30)
            assert answer.status_code == 200, answer.text[:300]
            took.append(seconds)
        rows = usage_rows(paths, 3)
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
    token = local_profile(paths, server.url, slot_affinity=True)
    running = gateway()
    ticker = Ticker(running._loop)
    answer, took = ask(running.url, token, 0, timeout=30)
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
    token = local_profile(paths, server.url, slot_affinity=True)
    running = gateway()
    with caplog.at_level(logging.WARNING, logger="kvswitch"):
        for turn in range(3):
            answer, _took = ask(running.url, token, turn)
            assert answer.status_code == 200, answer.text[:300]
    # the first request with its id_slot, once more without; then no id_slot for this server
    assert [b'"id_slot"' in body for body in server.seen] == [True, False, False, False], server.seen
    rows = usage_rows(paths, 3)
    assert [r.status for r in rows] == [200, 200, 200]
    said = [r.getMessage() for r in caplog.records if r.name == "kvswitch.gateway.truth.slots"]
    assert len(said) == 1, said
    assert "refused id_slot" in said[0]
