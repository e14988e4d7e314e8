"""Issue 39, item 1 (the server's log): a followed server log is input, not truth.

A real gateway (in-process on a free loopback port, or ``kvswitch gateway run`` where a signal must stop
it) in front of a hostile loopback server whose log is replaced by a real FIFO, made a symlink to
``/dev/zero`` or flooded with 57 MB of short lines. Before the fixes these hung every request and the
signals that stop the gateway, or read without end; now each is named once and a ticker on the
gateway's own event loop shows it never held more than 50 ms (``MAX_GAP_S``). The server's pages
(``/metrics``, ``/props``, ``id_slot``) are ``test_gateway_server_inputs.py``.
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

from kvswitch.commands.server_notes import ServerLogNotes
from kvswitch.core.applog import log_file
from kvswitch.core.models import LogSource
from kvswitch.core.paths import AppPaths
from support.gateway import gateway_process
from support.hostile_gateway import (  # noqa: F401 - the fixtures
    ask,
    gateway_fixture,
    local_profile,
    messages_answer,
    servers_fixture,
    usage_rows,
)
from support.hostile_loopback import MAX_GAP_S, HostileServer, Ticker, measured
from support.net import free_port

pytestmark = pytest.mark.timeout(120)

FORCED = ("slot update_slots: id  0 | task 7 | forcing full prompt re-processing due to lack of cache data "
          "(likely due to SWA or hybrid/recurrent memory, see https://github.com/ggml-org/llama.cpp/pull/13194)")


@pytest.fixture
def paths(fake_home: Path) -> AppPaths:
    return AppPaths.default()


# -- the followed server log: a FIFO, /dev/zero, a flood ------------------------------------------------
def _follow(paths: AppPaths, log: Path, server: HostileServer) -> str:
    return local_profile(paths, server.url, log=LogSource(kind="file", path=str(log)))


def _reprocessed_server(servers: Any, says_in: Path | None = None) -> HostileServer:
    """A local server whose every answer says it processed the whole prompt again (no cached tokens): a
    continued turn is judged re-processed, and the gateway asks the log reader what the server said.
    With ``says_in``, it also says why in that log as it processes each request (as llama-server does)."""
    answer = messages_answer({"input_tokens": 900, "output_tokens": 1, "cache_read_input_tokens": 0})

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
        assert ask(url, token, 0)[0].status_code == 200
        time.sleep(0.5)  # the reader opened the log at its end
        log.unlink()
        os.mkfifo(log)
        time.sleep(0.5)  # the reader found the log replaced, and looked at what is there now
        took = []
        for turn in range(1, 4):
            try:
                answer, seconds = ask(url, token, turn, timeout=5)
            except httpx.TimeoutException:
                proc.kill()
                pytest.fail(f"turn {turn} hung on the FIFO")
            assert answer.status_code == 200
            took.append(seconds)
        measured(f"FIFO: requests {took}")
        assert max(took) < 1.0, took
        rows = usage_rows(paths, 4)
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
            assert ask(running.url, token, turn)[0].status_code == 200
        gap = ticker.held()
    measured(f"/dev/zero: event loop held at most {gap * 1000:.1f} ms")
    assert gap < MAX_GAP_S
    rows = usage_rows(paths, 2)
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
    assert ask(running.url, token, 0)[0].status_code == 200
    burst = b"short ln\n" * ((57 << 20) // 9)  # 57 MB of 9-byte lines
    ticker = Ticker(running._loop)
    with log.open("ab") as handle:
        handle.write(burst)
    took = [ask(running.url, token, turn)[1] for turn in range(1, 6)]
    gap = ticker.held()
    measured(f"57 MB burst: event loop held at most {gap * 1000:.1f} ms; requests {took}")
    assert gap < MAX_GAP_S, (gap, took)
    assert max(took) < 1.0, took
    rows = usage_rows(paths, 6)
    assert [r.status for r in rows] == [200] * 6
    assert json.dumps([r.reason for r in rows])  # every row judged
