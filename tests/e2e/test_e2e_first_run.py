"""The README's quick start, run as a new user would: a fresh HOME, Claude Code 2.1.332 installed and never
logged in, a real llama-server, the profile without a key. ``claude -p`` must answer (exit 0), and must
not warn that it assumes a 1M-token context for a model it does not know.

Before the fix, this run printed ``Not logged in · Please run /login`` (exit 1) and the context warning.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from support.claude import claude_binary
from support.llama import REPO, llama_server

pytestmark = pytest.mark.real_server
CONTEXT_WARNING = "doesn't recognize the model"


def _kvswitch(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO / "app")}
    return subprocess.run(
        [sys.executable, "-m", "kvswitch", *args], env=env, capture_output=True, text=True, timeout=120
    )


def _claude(binary: Path, home: Path, project: Path) -> subprocess.CompletedProcess[str]:
    # nothing of the test runner's environment: no key, no login, only what KV Switch wrote
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"}
    return subprocess.run(
        [str(binary), "-p", "say hi"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_readme_quick_start_gives_a_working_claude(fake_home: Path, tmp_path: Path) -> None:
    binary = claude_binary()
    project = tmp_path / "project"
    project.mkdir()
    # the README's single-user server (-np 1: the whole -c is one slot); -n 8 keeps the tiny model's answers
    # short
    with llama_server(tmp_path / "server", "-n", "8", context=32768, parallel=1) as server:
        props = httpx.get(f"{server.url}/props", timeout=5).json()
        per_slot = props["default_generation_settings"]["n_ctx"]
        assert per_slot == 32768  # the server's own figure, the truth the profile must carry
        added = _kvswitch(
            fake_home, "profile", "add", "local", "--kind", "llama.cpp", "--base-url", server.url,
            "--model", "qwen", "--target", "claude", "--target", "bash",
        )
        assert added.returncode == 0, added.stderr
        assert f"context window: {per_slot} tokens" in added.stdout
        preview = _kvswitch(fake_home, "use", "local", "--dry-run")
        assert preview.returncode == 0, preview.stderr
        assert '"ANTHROPIC_AUTH_TOKEN": "kvswitch-local-no-key"' in preview.stdout
        assert "placeholder" in preview.stderr
        used = _kvswitch(fake_home, "use", "local")
        assert used.returncode == 0, used.stderr
        settings = json.loads((fake_home / ".claude" / "settings.json").read_text())
        assert settings["env"]["CLAUDE_CODE_MAX_CONTEXT_TOKENS"] == str(per_slot)
        answer = _claude(binary, fake_home, project)

    assert answer.returncode == 0, (answer.stdout[-2000:], answer.stderr[-2000:])
    assert answer.stdout.strip(), "claude -p printed no answer"
    assert "Not logged in" not in answer.stdout + answer.stderr
    assert CONTEXT_WARNING not in answer.stdout + answer.stderr


def test_per_slot_context_and_a_small_one_flagged(fake_home: Path, tmp_path: Path) -> None:
    """-np 2 halves what one request gets; Claude Code 2.1.332 refuses such a window, so the lint says so
    (measured: CLAUDE_CODE_MAX_CONTEXT_TOKENS=24576 -> 'Prompt is too long', exit 1, nothing sent)."""
    with llama_server(tmp_path / "server", context=16384, parallel=2) as server:
        per_slot = httpx.get(f"{server.url}/props", timeout=5).json()["default_generation_settings"]["n_ctx"]
        assert per_slot == 8192
        added = _kvswitch(
            fake_home, "profile", "add", "small", "--kind", "llama.cpp", "--base-url", server.url
        )
    assert added.returncode == 0, added.stderr
    assert "context window: 8192 tokens" in added.stdout
    assert "[context-too-small]" in added.stderr
    shown = _kvswitch(fake_home, "profile", "show", "small")
    assert "context_window: 8192" in shown.stdout


def test_a_server_that_is_down_is_no_error_and_use_reads_it_later(fake_home: Path, tmp_path: Path) -> None:
    from support.net import free_port  # noqa: PLC0415

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    added = _kvswitch(fake_home, "profile", "add", "later", "--kind", "llama.cpp", "--base-url", url)
    assert added.returncode == 0, added.stderr
    assert "context window" not in added.stdout
    down = _kvswitch(fake_home, "use", "later")
    assert down.returncode == 0, down.stderr
    settings = fake_home / ".claude" / "settings.json"
    assert "CLAUDE_CODE_MAX_CONTEXT_TOKENS" not in json.loads(settings.read_text())["env"]
    with llama_server(tmp_path / "server", context=32768, port=port):
        preview = _kvswitch(fake_home, "use", "later", "--dry-run")
        assert '"CLAUDE_CODE_MAX_CONTEXT_TOKENS": "32768"' in preview.stdout
        assert "context_window" not in _kvswitch(fake_home, "profile", "show", "later").stdout  # dry run
        used = _kvswitch(fake_home, "use", "later")
    assert used.returncode == 0, used.stderr
    assert "context window: 32768 tokens" in used.stdout
    assert json.loads(settings.read_text())["env"]["CLAUDE_CODE_MAX_CONTEXT_TOKENS"] == "32768"
    assert "context_window: 32768" in _kvswitch(fake_home, "profile", "show", "later").stdout
    given = _kvswitch(fake_home, "profile", "edit", "later", "--context-window", "65536")
    assert given.returncode == 0, given.stderr
    assert "context_window: 65536" in _kvswitch(fake_home, "profile", "show", "later").stdout
    bad = _kvswitch(fake_home, "profile", "edit", "later", "--context-window", "12")
    assert bad.returncode == 2
    assert "out of range" in bad.stderr
