"""Hostile input to ``kvswitch mcp``: malformed client files and pastes, a server named ``../x``, 10,000
servers, a 50 MB ``~/.claude.json``. Each must end in a clear error (the file and line named, exit code
of the error kind, never a traceback) or a result in bounded time, and nothing may be lost: a refused
change writes nothing anywhere.

The real ``kvswitch`` runs as a subprocess on real files in the test's temporary HOME.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(300)


def run(env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kvswitch", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        input=stdin,
    )


def digests(root: Path) -> dict[str, str]:
    """Every file under ``root`` (the whole temporary HOME) by content, to prove nothing was written."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "apply.lock" not in p.name and not p.name.endswith(".lock")
    }


def refused(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode in (1, 2), (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    return done.stderr


def test_malformed_claude_json_names_file_and_line_and_writes_nothing(
    fake_home: Path, child_env: dict[str, str]
) -> None:
    state = fake_home / ".claude.json"
    state.write_text('{\n  "numStartups": 3,\n  "projects": {,\n}\n')
    before = digests(fake_home)
    error = refused(run(child_env, "mcp", "add", "srv", "--client", "claude", "--", "echo", "hi"))
    assert f"{state}:3:" in error, error
    assert digests(fake_home) == before


def test_malformed_codex_toml_names_file_and_line_and_writes_nothing(
    fake_home: Path, child_env: dict[str, str]
) -> None:
    config = fake_home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "gpt-5.5"\n\n[mcp_servers.x\ncommand = "y"\n')
    (fake_home / ".claude.json").write_text('{"numStartups": 1}\n')
    before = digests(fake_home)
    error = refused(
        run(child_env, "mcp", "add", "srv", "--client", "claude", "--client", "codex", "--", "echo")
    )
    assert f"{config}:3" in error, error
    assert digests(fake_home) == before  # not even ~/.claude.json, which parsed: all or nothing


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('{"mcpServers": {\n  "a": {"command": "x"},\n  "b": {"command": "y",}\n}}', 3),
        ('[mcp_servers.a]\ncommand = "x"\n\n[mcp_servers.b]\ncommand = \n', 5),
    ],
)
def test_malformed_paste_names_its_line_and_imports_nothing(
    fake_home: Path, child_env: dict[str, str], text: str, line: int
) -> None:
    before = digests(fake_home)
    error = refused(run(child_env, "mcp", "import", "paste", stdin=text))
    assert f"stdin:{line}" in error, error
    assert digests(fake_home) == before


def test_server_named_dot_dot_slash_is_refused_everywhere(fake_home: Path, child_env: dict[str, str]) -> None:
    before = digests(fake_home)
    error = refused(run(child_env, "mcp", "add", "../x", "--client", "claude", "--", "echo"))
    assert "'../x' is not allowed" in error, error
    done = run(
        child_env,
        "mcp",
        "import",
        "paste",
        stdin='{"mcpServers": {"../x": {"command": "a"}, "..": {"command": "b"}, "a/b": {"command": "c"}}}',
    )
    assert done.returncode == 1, done
    assert "Traceback" not in done.stderr
    assert done.stderr.count("not imported") == 3, done.stderr
    assert digests(fake_home) == before
    assert not (fake_home.parent / "x").exists()


def test_ten_thousand_servers_in_bounded_time(fake_home: Path, child_env: dict[str, str]) -> None:
    """10,000 pasted servers import, are enabled in Claude Code's file and taken back, each in seconds."""
    servers = {
        f"s{n:05d}": {"command": "echo", "args": [str(n)], "env": {"TOKEN": f"secret-{n:05d}"}}
        for n in range(10_000)
    }
    state = fake_home / ".claude.json"
    state.write_text('{"numStartups": 5}\n')
    original = state.read_bytes()
    started = time.monotonic()
    done = run(child_env, "mcp", "import", "paste", stdin=json.dumps({"mcpServers": servers}))
    assert done.returncode == 0, done.stderr
    imported = time.monotonic() - started
    names = list(servers)
    started = time.monotonic()
    done = run(child_env, "mcp", "enable", *names, "--client", "claude")
    assert done.returncode == 0, done.stderr
    enabled = time.monotonic() - started
    written = json.loads(state.read_text())
    assert len(written["mcpServers"]) == 10_000
    assert written["numStartups"] == 5
    listing = run(child_env, "mcp", "list")
    assert "secret-00042" not in listing.stdout + listing.stderr
    started = time.monotonic()
    assert run(child_env, "undo").returncode == 0
    undone = time.monotonic() - started
    assert state.read_bytes() == original
    assert imported < 60, imported
    assert enabled < 120, enabled
    assert undone < 60, undone


def test_fifty_megabyte_claude_json(fake_home: Path, child_env: dict[str, str]) -> None:
    """A heavy user's ``~/.claude.json`` (50 MB of project history): the server is added in bounded time,
    every other byte is kept, and undo puts the file back byte for byte."""
    history = [{"display": "x" * 200, "pastedContents": {}} for _ in range(100)]
    projects = {f"/home/u/src/project-{n}": {"allowedTools": [], "history": history} for n in range(2200)}
    state = fake_home / ".claude.json"
    state.write_text(json.dumps({"numStartups": 900, "projects": projects}, indent=2))
    original = state.read_bytes()
    assert len(original) > 50_000_000
    started = time.monotonic()
    done = run(
        child_env,
        "mcp",
        "add",
        "srv",
        "--env",
        "TOKEN=tok-abcdefgh",
        "--client",
        "claude",
        "--",
        "echo",
        "hi",
    )
    assert done.returncode == 0, done.stderr
    took = time.monotonic() - started
    after = state.read_bytes()
    head = original.rstrip(b"}\n")
    assert after.startswith(head), "a byte before the new member changed"
    written = json.loads(after)
    assert written["mcpServers"]["srv"]["command"] == "echo"
    assert written["projects"] == projects
    assert (state.stat().st_mode & 0o777) == 0o600  # it holds a secret value now
    dry = run(child_env, "mcp", "add", "two", "--client", "claude", "--dry-run", "--", "echo")
    assert "only its MCP servers are shown" in dry.stdout, dry.stdout[:500]
    assert len(dry.stdout) < 10_000
    assert "tok-abcdefgh" not in dry.stdout
    assert run(child_env, "undo").returncode == 0
    assert state.read_bytes() == original
    assert took < 60, took
