"""``kvswitch current``, ``use``, ``profile edit`` and ``import`` per client: the real CLI as a subprocess
on real files in the temporary HOME (``targets.live``, ``targets.live_sync``)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tomllib
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "cc-switch-3.20"


def kvswitch(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(APP)}
    return subprocess.run([sys.executable, "-m", "kvswitch", *args], env=env, capture_output=True, text=True,
                          timeout=120)


def ok(*args: str) -> str:
    done = kvswitch(*args)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def add_local(name: str, port: int, model: str, *targets: str) -> None:
    options = [part for target in targets for part in ("--target", target)]
    ok("profile", "add", name, "--kind", "llama.cpp", "--base-url", f"http://127.0.0.1:{port}",
       "--model", model, "--context-window", "32768", *options)


def current() -> dict[str, dict[str, object]]:
    done = kvswitch("current", "--json")
    assert done.returncode in (0, 1, 3), done.stderr
    return {entry["key"]: entry for entry in json.loads(done.stdout)}


def test_claude_only_then_codex_only_names_both_per_client(fake_home: Path) -> None:
    add_local("cl", 18080, "qwen", "claude")
    add_local("cx", 18081, "gpt-oss", "codex")
    first = ok("use", "cl")
    assert "New Claude Code sessions use 'cl'" in first
    second = ok("use", "cx")
    assert "New Codex sessions use 'cx'" in second
    assert "Claude Code" not in second.split("\n", 1)[-1], "only the client written is named"
    found = current()
    assert (found["claude:user"]["profile"], found["claude:user"]["differs"]) == ("cl", False)
    assert (found["codex"]["profile"], found["codex"]["differs"]) == ("cx", False)
    assert found["opencode"]["profile"] is None
    assert found["claude:user"]["path"] == str(fake_home / ".claude" / "settings.json")
    text = ok("current")
    assert "Claude Code: cl\n" in text
    assert "Codex: cx\n" in text
    assert ok("current", "--client", "codex").strip() == "cx"


def test_nothing_applied_exits_1(fake_home: Path) -> None:
    done = kvswitch("current")
    assert done.returncode == 1
    assert "no client runs a KV Switch profile" in done.stderr


def test_saving_the_live_profile_writes_it_through_and_undo_restores(fake_home: Path) -> None:
    add_local("cl", 18080, "qwen", "claude")
    add_local("cx", 18081, "gpt-oss", "codex")
    ok("use", "cl")
    ok("use", "cx")
    settings = fake_home / ".claude" / "settings.json"
    codex = fake_home / ".codex" / "config.toml"
    before_settings, before_codex = settings.read_bytes(), codex.read_bytes()
    edited = ok("profile", "edit", "cl", "--model", "qwen-coder")
    assert "Wrote it to Claude Code" in edited
    data = json.loads(settings.read_text())
    assert (data["model"], data["env"]["ANTHROPIC_MODEL"]) == ("qwen-coder", "qwen-coder")
    assert codex.read_bytes() == before_codex, "a client running another profile is not touched"
    assert current()["claude:user"]["profile"] == "cl"
    ok("undo")
    assert settings.read_bytes() == before_settings
    assert tomllib.loads(codex.read_text())["model"] == "gpt-oss"


def test_saved_without_write_through_and_hand_edited_files_differ(fake_home: Path) -> None:
    add_local("cl", 18080, "qwen", "claude")
    add_local("cx", 18081, "gpt-oss", "codex")
    ok("use", "cl")
    ok("use", "cx")
    settings = fake_home / ".claude" / "settings.json"
    kept = settings.read_bytes()
    edited = ok("profile", "edit", "cl", "--model", "qwen-coder", "--no-write-through")
    assert "Claude Code still run the earlier version" in edited
    assert settings.read_bytes() == kept
    found = current()
    assert (found["claude:user"]["profile"], found["claude:user"]["differs"]) == ("cl", True)
    assert kvswitch("current").returncode == 3
    ok("use", "cl")  # the one call that applies it
    assert current()["claude:user"]["differs"] is False
    codex = fake_home / ".codex" / "config.toml"
    codex.write_text(codex.read_text().replace('model = "gpt-oss"', 'model = "by-hand"'))
    found = current()
    assert (found["codex"]["profile"], found["codex"]["differs"]) == ("cx", True)
    assert "model" in str(found["codex"]["detail"])


def test_the_write_through_setting_off_leaves_the_file(fake_home: Path) -> None:
    add_local("cl", 18080, "qwen", "claude")
    ok("use", "cl")
    config = fake_home / ".config" / "kvswitch" / "settings.json"
    config.write_text(json.dumps({"schema_version": 1, "write_through_live": False}))
    settings = fake_home / ".claude" / "settings.json"
    kept = settings.read_bytes()
    ok("profile", "edit", "cl", "--model", "other")
    assert settings.read_bytes() == kept
    assert current()["claude:user"]["differs"] is True


def _cc_switch_db(home: Path) -> Path:
    folder = home / ".cc-switch"
    folder.mkdir()
    db = folder / "cc-switch.db"
    with sqlite3.connect(db) as conn:
        conn.executescript((FIXTURES / "providers.sql").read_text(encoding="utf-8"))
    return db


def test_import_of_cc_switch_marks_its_current_provider_live(fake_home: Path) -> None:
    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes((FIXTURES / "claude-settings-deepseek.json").read_bytes())
    _cc_switch_db(fake_home)
    imported = ok("import", "cc-switch")
    assert "Claude Code runs 'DeepSeek' now" in imported
    found = current()
    assert (found["claude:user"]["profile"], found["claude:user"]["differs"]) == ("DeepSeek", False)
    assert found["codex"]["profile"] is None, "Codex's file is absent here: nothing is live there"
    assert settings.read_bytes() == (FIXTURES / "claude-settings-deepseek.json").read_bytes()


def test_import_of_todays_settings_is_live_at_once(fake_home: Path) -> None:
    settings = fake_home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes((FIXTURES / "claude-settings-deepseek.json").read_bytes())
    ok("import", "claude")
    assert ok("current", "--client", "claude").strip() == "deepseek"
