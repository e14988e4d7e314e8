"""Hostile servers on loopback: endless bodies, endless streams, one byte a second, escape sequences.

Each case checks what a user would suffer: wall time (within the timeout plus a margin for a loaded
2-core machine), memory (tracemalloc peak), a message that names the limit, and exit status 4.
"""

from __future__ import annotations

import json
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from verify_stubs import Reply, StubServer

from kvswitch.cli import main
from kvswitch.core.models import Profile
from kvswitch.verify import run_verify
from kvswitch.verify.result import VerifyResult
from support.hostile_servers import EVIL, RAW_CONTROLS, HostileServer

MARGIN = 2.5  # seconds past the timeout a loaded CI machine may need to notice and unwind
MEMORY_CAP = 96 << 20


@pytest.fixture
def hostile(request: pytest.FixtureRequest) -> Iterator[Callable[..., HostileServer]]:
    servers: list[HostileServer] = []

    def make(mode: str, only: str | None = None) -> HostileServer:
        servers.append(HostileServer(mode, only))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


def _profile(url: str) -> Profile:
    return Profile(name="t", kind="custom", base_url=url, targets=["codex"])


def _measured(call: Callable[[], Any]) -> tuple[Any, float, int]:
    tracemalloc.start()
    started = time.monotonic()
    try:
        value = call()
    finally:
        elapsed = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return value, elapsed, peak


def _verify(url: str, timeout: float) -> tuple[VerifyResult, float, int]:
    result, elapsed, peak = _measured(lambda: run_verify(_profile(url), timeout=timeout, claude_replay=False))
    assert isinstance(result, VerifyResult)
    return result, elapsed, peak


def test_endless_body_stops_at_the_byte_cap(hostile: Callable[..., HostileServer]) -> None:
    server = hostile("endless_body")
    result, elapsed, peak = _verify(server.url, 10)
    assert result.verdict == "ERROR"
    assert result.exit_code == 4
    assert "sent more than 8 MB" in result.message
    assert "inference server" in (result.diagnosis or "")
    assert elapsed < 10 + MARGIN
    assert peak < MEMORY_CAP


def test_endless_sse_stream_stops_at_the_event_cap(hostile: Callable[..., HostileServer]) -> None:
    server = hostile("endless_sse", only="POST")
    result, elapsed, peak = _verify(server.url, 10)
    assert result.verdict == "ERROR"
    assert "more than 20000 events" in result.message
    assert elapsed < 10 + MARGIN
    assert peak < MEMORY_CAP


def test_a_line_that_never_ends_is_cut(hostile: Callable[..., HostileServer]) -> None:
    server = hostile("endless_line", only="POST")
    result, elapsed, peak = _verify(server.url, 10)
    assert result.verdict == "ERROR"
    assert "sent a line longer than 1 MB" in result.message
    assert elapsed < 10 + MARGIN
    assert peak < MEMORY_CAP


@pytest.mark.parametrize(("mode", "only"),
                         [("slow_body", None), ("slow_body", "POST"), ("slow_headers", None)])
def test_one_byte_a_second_ends_at_the_whole_run_deadline(
    hostile: Callable[..., HostileServer], mode: str, only: str | None
) -> None:
    """The deadline covers the whole run: the detection GETs and the request share the 3 s."""
    server = hostile(mode, only)
    result, elapsed, _ = _verify(server.url, 3)
    assert result.verdict == "ERROR"
    assert "no complete answer within the 3 s timeout" in result.message
    assert 2.5 < elapsed < 3 + MARGIN


def test_cli_on_an_endless_server_exits_4_quickly(
    hostile: Callable[..., HostileServer], capsys: pytest.CaptureFixture[str]
) -> None:
    server = hostile("endless_body")
    code, elapsed, peak = _measured(lambda: main(["verify", "--base-url", server.url, "--timeout", "10"]))
    out = capsys.readouterr().out
    assert code == 4
    assert out.startswith("ad hoc: ERROR: ")
    assert "sent more than 8 MB" in out
    assert elapsed < 10 + MARGIN
    assert peak < MEMORY_CAP


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "0", "-1", "1e9", "abc", ""])
def test_only_finite_positive_timeouts_are_accepted(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["verify", "--base-url", "http://127.0.0.1:9", "--timeout", value])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "--timeout" in err
    assert "Traceback" not in err


def test_port_zero_and_bad_counts_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--base-url", "http://127.0.0.1:0"]) == 2
    assert "port must be a number from 1 to 65535" in capsys.readouterr().err
    for count in ("0", "-3", "x"):
        with pytest.raises(SystemExit) as exited:
            main(["record", "--upstream", "http://127.0.0.1:9", "--max-requests", count])
        assert exited.value.code == 2
    assert main(["record", "--upstream", "http://127.0.0.1:9", "--listen", "127.0.0.1:²"]) == 2
    assert "expected HOST:PORT" in capsys.readouterr().err


def test_run_verify_refuses_a_timeout_that_never_ends() -> None:
    from kvswitch.core.errors import UsageError  # noqa: PLC0415

    for value in (float("inf"), float("nan"), 0.0):
        with pytest.raises(UsageError, match="timeout"):
            run_verify(_profile("http://127.0.0.1:9"), timeout=value)


def _no_raw_controls(text: str) -> None:
    for char in RAW_CONTROLS:
        assert char not in text, f"{char!r} reached the output"


def test_escapes_in_an_error_body_never_reach_the_output(
    stub: StubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.routes["POST /v1/chat/completions"] = [Reply.json({"error": {"message": f"boom {EVIL}"}}, 500)]
    assert main(["verify", "--base-url", stub.url, "--timeout", "5", "--no-claude-replay"]) == 4
    human = capsys.readouterr().out
    assert "boom" in human
    assert "red" in human
    assert "link" in human
    _no_raw_controls(human)
    assert main(["verify", "--base-url", stub.url, "--timeout", "5", "--no-claude-replay", "--json"]) == 4
    data = json.loads(capsys.readouterr().out)
    assert "boom" in data["message"]
    _no_raw_controls(data["message"])


def test_escapes_in_a_model_name_never_reach_the_output(
    stub: StubServer, responses_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.routes["GET /v1/models"] = [Reply.json({"data": [{"id": f"evil{EVIL}", "owned_by": "llamacpp"}]})]
    stub.routes["POST /v1/chat/completions"] = [
        Reply(200, (responses_dir / "resp_chat_first.json").read_bytes()),
        Reply(200, (responses_dir / "resp_chat_hit.json").read_bytes()),
    ]
    args = ["verify", "--base-url", stub.url, "--timeout", "10", "--no-claude-replay"]
    assert main(args) == 0
    human = capsys.readouterr().out
    assert "(model evil" in human
    _no_raw_controls(human)
    sent = stub.posts("/v1/chat/completions")[0]["model"]
    assert sent == f"evil{EVIL}"  # the server gets its own name back unchanged; only display is cleaned
    stub.routes["POST /v1/chat/completions"] = [
        Reply(200, (responses_dir / "resp_chat_first.json").read_bytes()),
        Reply(200, (responses_dir / "resp_chat_hit.json").read_bytes()),
    ]
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["model"].startswith("evil")
    _no_raw_controls(json.dumps(data, ensure_ascii=False))
