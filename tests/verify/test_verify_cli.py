"""``kvswitch verify | diagnose | record | ps`` through the real dispatcher (kvswitch.cli.main)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import httpx
import pytest
from verify_stubs import Reply, StubServer

from kvswitch.cli import main
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.core.store import ProfileStore
from support.net import free_port

CAPTURES = "claude-code-2.1.332"


def _chat_stub(stub: StubServer, responses_dir: Path) -> None:
    stub.routes["POST /v1/chat/completions"] = [
        Reply(200, (responses_dir / "resp_chat_first.json").read_bytes()),
        Reply(200, (responses_dir / "resp_chat_hit.json").read_bytes()),
    ]


def test_verify_base_url_json_and_exit_codes(
    stub: StubServer, responses_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _chat_stub(stub, responses_dir)
    code = main(["verify", "--base-url", stub.url, "--json", "--no-claude-replay", "--timeout", "10"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["verdict"] == "HIT"
    assert out["cached_tokens"] == 1564
    assert out["decided_by"] == "timings.cache_n"

    code = main(["verify", "--base-url", f"http://127.0.0.1:{free_port()}", "--timeout", "3"])
    captured = capsys.readouterr()
    assert code == 4
    assert captured.out.startswith("ad hoc: ERROR: ")
    assert "connection refused" in captured.out


def test_verify_named_and_active_profile(
    stub: StubServer, responses_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = ProfileStore(AppPaths.default())
    store.add(Profile(name="local", kind="llama.cpp", base_url=stub.url, targets=["codex"]))
    _chat_stub(stub, responses_dir)
    code = main(["verify", "local", "--timeout", "10"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("local: HIT: the server reused 1564 of 1601 prompt tokens")
    assert "timings.cache_n = 1564 of 1601 prompt tokens (decided)" in out

    code = main(["verify"])  # nothing active yet
    err = capsys.readouterr().err
    assert code == 2
    assert "none is active" in err

    code = main(["verify", "nope"])
    assert code == 2
    assert "no profile named 'nope'" in capsys.readouterr().err


def test_verify_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--base-url", "ftp://x"]) == 2
    assert "--base-url" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["verify", "--timeout", "-1"])


def test_diagnose_exit_codes_and_json(fixtures_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = fixtures_dir / CAPTURES / "request_attribution_default_1.json"
    b = fixtures_dir / CAPTURES / "request_attribution_default_3.json"
    assert main(["diagnose", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "First divergence: system[0]" in out
    assert "Fix: set CLAUDE_CODE_ATTRIBUTION_HEADER=0" in out
    assert main(["diagnose", str(a), str(a), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["identical"] is True
    assert main(["diagnose", str(a), "/no/such/file.json"]) == 2
    assert "no such file" in capsys.readouterr().err


def _record_in_background(*args: str) -> tuple[int, threading.Thread, list[int]]:
    """``kvswitch record --listen 127.0.0.1:PORT ARGS`` on a thread: (port, thread, [exit code when done])."""
    port = free_port()
    result: list[int] = []
    argv = ["record", "--listen", f"127.0.0.1:{port}", *args]
    thread = threading.Thread(target=lambda: result.append(main(argv)))
    thread.start()
    return port, thread, result


def test_record_command_end_to_end(
    stub: StubServer, tmp_path: Path, fixtures_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.routes["POST /v1/messages"] = [
        Reply.json({"usage": {"input_tokens": 3, "cache_read_input_tokens": 9}})
    ]
    caps = tmp_path / "caps"
    port, thread, result = _record_in_background(
        "--upstream", stub.url, "--captures", str(caps), "--max-requests", "2"
    )
    deadline = time.monotonic() + 10
    bodies = [
        json.loads((fixtures_dir / CAPTURES / f"request_attribution_0_{n}.json").read_text())["body"]
        for n in (1, 3)
    ]
    sent = 0
    while sent < 2 and time.monotonic() < deadline:
        try:
            httpx.post(
                f"http://127.0.0.1:{port}/v1/messages?beta=true",
                json=bodies[sent],
                headers={"authorization": "Bearer sk-very-secret-token-xyz"},
                timeout=5,
            )
            sent += 1
        except httpx.ConnectError:
            time.sleep(0.05)
    thread.join(timeout=10)
    assert result == [0]
    out = capsys.readouterr().out
    assert f"Recording on http://127.0.0.1:{port} -> {stub.url}" in out
    assert "#2 POST /v1/messages?beta=true" in out
    assert "vs #1: first divergence messages[0].content[1]" in out
    assert "Stopped after 2 request(s)." in out
    assert sorted(p.name for p in caps.iterdir()) == ["request_0001.json", "request_0002.json"]
    assert "sk-very-secret" not in (caps / "request_0001.json").read_text()


def test_record_needs_one_upstream(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["record"]) == 2
    assert "exactly one of --upstream" in capsys.readouterr().err
    assert main(["record", "--listen", "0.0.0.0:0", "--upstream", "http://127.0.0.1:1"]) == 2
    assert "--allow-remote" in capsys.readouterr().err


def test_ps_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["ps", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code in (0, 1)
    assert data["profile"] is None
    assert isinstance(data["processes"], list)


def test_record_upstream_from_a_profile(
    stub: StubServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ProfileStore(AppPaths.default()).add(Profile(name="box", kind="llama.cpp", base_url=stub.url))
    stub.routes["GET /health"] = [Reply.json({"status": "ok"})]
    port, thread, result = _record_in_background(
        "--profile", "box", "--captures", str(tmp_path / "c"), "--max-requests", "1"
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).json() == {"status": "ok"}
            break
        except httpx.ConnectError:
            time.sleep(0.05)
    thread.join(timeout=10)
    assert result == [0]
    assert f"-> {stub.url}" in capsys.readouterr().out
