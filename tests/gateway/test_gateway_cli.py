"""Gateway mode from the command line, on real files in the temporary HOME: what applying writes into
Claude Code's and Codex's files (the gateway URL and the local token, never the key), a switch between
gateway profiles that rewrites nothing, undo back to the direct setup, status and doctor when no
gateway runs."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from kvswitch.cli import main
from kvswitch.core.gateway_config import ensure_token, read_routes, token_file
from kvswitch.core.paths import AppPaths
from kvswitch.core.store import ProfileStore
from kvswitch.gateway.control import remember_listen
from support.net import free_port

KEY = "sk-real-vendor-key-0123456789abcdef"


def _add(name: str, url: str, *extra: str) -> None:
    assert main(["profile", "add", name, "--kind", "llama.cpp", "--base-url", url, "--model", f"{name}-m",
                 "--api-key", KEY, "--target", "claude", "--target", "codex", "--target", "bash",
                 "--via-gateway", *extra]) == 0


def _client_files(home: Path) -> dict[str, bytes]:
    return {name: (home / name).read_bytes() for name in (".claude/settings.json", ".codex/config.toml",
                                                          ".bashrc")}


def test_gateway_profiles_write_once_and_switch_by_routing(
    fake_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = AppPaths.default()
    port = free_port()  # where the gateway would listen: nothing does (not the default 8788, which
    remember_listen(paths, "127.0.0.1", port)  # another program on the machine may hold)
    (fake_home / ".claude").mkdir()
    original = b'{\n  "env": {"ANTHROPIC_BASE_URL": "https://api.example.com"},\n  "theme": "dark"\n}\n'
    (fake_home / ".claude" / "settings.json").write_bytes(original)
    _add("b", "http://127.0.0.1:8082")
    _add("a", "http://127.0.0.1:8081", "--fallback", "b")
    assert main(["use", "a"]) == 0
    token = ensure_token(paths)
    assert stat.S_IMODE(token_file(paths).stat().st_mode) == 0o600
    files = _client_files(fake_home)
    settings = json.loads(files[".claude/settings.json"])
    assert settings["env"]["ANTHROPIC_BASE_URL"] == f"http://127.0.0.1:{port}/claude"
    assert settings["env"]["ANTHROPIC_AUTH_TOKEN"] == token
    assert settings["theme"] == "dark"
    assert f'base_url = "http://127.0.0.1:{port}/codex/v1"' in files[".codex/config.toml"].decode()
    assert f"KVSWITCH_API_KEY='{token}'" in files[".bashrc"].decode()
    assert not any(KEY.encode() in data for data in files.values())
    assert read_routes(paths).clients == {"claude": "a", "codex": "a"}

    capsys.readouterr()
    assert main(["use", "b"]) == 0
    assert "no file rewritten" in capsys.readouterr().out
    assert _client_files(fake_home) == files
    assert read_routes(paths).clients == {"claude": "b", "codex": "b"}
    assert main(["current", "--client", "claude"]) == 0
    assert capsys.readouterr().out.strip() == "b"
    assert ProfileStore(paths).active_name == "b"  # what the window marks in use and verify defaults to

    assert main(["gateway", "status", "--json"]) == 1  # nothing listens on that port
    status = json.loads(capsys.readouterr().out)
    assert status["running"] is False
    assert status["routes"] == {"claude": "b", "codex": "b"}
    assert main(["doctor"]) == 1
    assert "which is not running" in capsys.readouterr().out

    assert main(["use", "b", "--rewrite-files"]) == 0  # b's own model and env entries, written
    assert json.loads((fake_home / ".claude" / "settings.json").read_text())["model"] == "b-m"
    assert main(["undo"]) == 0
    assert main(["undo"]) == 0
    assert (fake_home / ".claude" / "settings.json").read_bytes() == original  # the direct setup again


def test_profile_flags_for_gateway_mode(capsys: pytest.CaptureFixture[str]) -> None:
    _add("b", "http://127.0.0.1:8082")
    _add("c", "http://127.0.0.1:8083")
    _add("a", "http://127.0.0.1:8081", "--fallback", "b", "--fallback", "c")
    assert main(["profile", "show", "a"]) == 0
    shown = capsys.readouterr().out
    assert "via gateway: yes" in shown
    assert "fallbacks: b, c" in shown
    assert main(["profile", "edit", "a", "--direct", "--fallback", ""]) == 0
    capsys.readouterr()
    assert main(["profile", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    entry = next(p for p in (listed if isinstance(listed, list) else listed["profiles"]) if p["name"] == "a")
    assert entry["via_gateway"] is False
    assert entry["fallbacks"] == []
    assert main(["profile", "edit", "a", "--fallback", "a"]) != 0  # its own fallback: refused


def test_a_gateway_switch_to_a_profile_with_other_client_env_writes_the_files(
    fake_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The client reads its env from its files (Claude Code's attribution switch): routing cannot
    apply it, so the switch writes them instead of keeping the previous profile's value."""
    remember_listen(AppPaths.default(), "127.0.0.1", free_port())
    _add("off", "http://127.0.0.1:8081", "--env", "CLAUDE_CODE_ATTRIBUTION_HEADER=0")
    _add("on", "http://127.0.0.1:8081", "--env", "CLAUDE_CODE_ATTRIBUTION_HEADER=1")
    assert main(["use", "off"]) == 0
    capsys.readouterr()
    assert main(["use", "on"]) == 0
    assert "no file rewritten" not in capsys.readouterr().out
    settings = json.loads((fake_home / ".claude" / "settings.json").read_text())
    assert settings["env"]["CLAUDE_CODE_ATTRIBUTION_HEADER"] == "1"
    assert read_routes(AppPaths.default()).clients == {"claude": "on", "codex": "on"}
    # back to a profile whose entries the files already have (only "on"'s extra one stays): routing only
    _add("lean", "http://127.0.0.1:8081")
    _add("rich", "http://127.0.0.1:8081", "--env", "KVSWITCH_TEST_EXTRA=1")
    assert main(["use", "rich"]) == 0
    capsys.readouterr()
    assert main(["use", "lean"]) == 0
    assert "no file rewritten" in capsys.readouterr().out
