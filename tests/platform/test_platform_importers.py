"""Importing Claude Code settings and CC Switch providers (real SQLite database and JSON files)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from kvswitch.core.errors import ConfigParseError, FileAccessError
from kvswitch.platform.importers import import_cc_switch, import_claude


def test_import_claude_settings(fake_home: Path) -> None:
    path = fake_home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(
        json.dumps(
            {
                "model": "opus",
                "env": {
                    "ANTHROPIC_BASE_URL": "http://127.0.0.1:11434",
                    "ANTHROPIC_AUTH_TOKEN": "ollama",
                    "ANTHROPIC_DEFAULT_HAIKU_MODEL": "small",
                    "API_TIMEOUT_MS": 600000,
                    "CLAUDE_CODE_ATTRIBUTION_HEADER": "0",
                },
            }
        )
    )
    profile = import_claude(name="mine")
    assert profile.kind == "ollama"
    assert profile.key == "ollama"
    assert profile.model == "opus"
    assert profile.models.haiku == "small"
    assert profile.env == {"API_TIMEOUT_MS": "600000", "CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}


def test_import_claude_missing_or_broken(fake_home: Path) -> None:
    with pytest.raises(FileAccessError, match="not found"):
        import_claude()
    path = fake_home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text("{oops")
    with pytest.raises(ConfigParseError, match=r"settings.json:1:2"):
        import_claude()


def make_db(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE providers (id TEXT, app_type TEXT, name TEXT, settings_config TEXT, "
        "website_url TEXT, is_current INTEGER, sort_index INTEGER, PRIMARY KEY (id, app_type))"
    )
    rows = [
        (
            "1",
            "claude",
            "Kimi",
            {
                "env": {
                    "ANTHROPIC_BASE_URL": "https://api.moonshot.cn/anthropic",
                    "ANTHROPIC_AUTH_TOKEN": "sk-kimi-123456789",
                    "ANTHROPIC_MODEL": "k2",
                }
            },
            1,
        ),
        (
            "2",
            "codex",
            "Kimi",
            {
                "auth": {"OPENAI_API_KEY": "sk-codex-123456789"},
                "config": 'model_provider = "kimi"\nmodel = "k2"\n\n[model_providers.kimi]\n'
                'name = "Kimi"\nbase_url = "https://api.moonshot.cn/v1"\n'
                'wire_api = "responses"\n',
            },
            0,
        ),
        ("3", "gemini", "G", {"env": {"GEMINI_API_KEY": "x"}}, 0),
        ("4", "claude", "Local", {"env": {"ANTHROPIC_BASE_URL": "http://localhost:8080"}}, 0),
    ]
    for pid, app, name, settings, current in rows:
        conn.execute(
            "INSERT INTO providers VALUES (?, ?, ?, ?, '', ?, ?)",
            (pid, app, name, json.dumps(settings), current, int(pid)),
        )
    conn.commit()
    conn.close()


def test_import_cc_switch_database(fake_home: Path) -> None:
    folder = fake_home / ".cc-switch"
    folder.mkdir()
    make_db(folder / "cc-switch.db")
    profiles = import_cc_switch()
    assert [p.name for p in profiles] == ["Kimi", "Kimi (codex)", "Local"]
    kimi, codex, local = profiles
    assert kimi.base_url == "https://api.moonshot.cn/anthropic"
    assert kimi.model == "k2"
    assert kimi.targets == ["claude"]
    assert codex.targets == ["codex"]
    assert codex.key == "sk-codex-123456789"
    assert codex.base_url == "https://api.moonshot.cn/v1"
    assert local.kind == "llama.cpp"


def test_import_cc_switch_old_config_json(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps(
            {
                "version": 2,
                "claude": {
                    "current": "a",
                    "providers": {
                        "a": {
                            "id": "a",
                            "name": "Relay",
                            "settingsConfig": {
                                "env": {
                                    "ANTHROPIC_BASE_URL": "https://relay.example",
                                    "ANTHROPIC_AUTH_TOKEN": "sk-relay-123456",
                                }
                            },
                        }
                    },
                },
            }
        )
    )
    profiles = import_cc_switch(path)
    assert [(p.name, p.base_url, p.key) for p in profiles] == [
        ("Relay", "https://relay.example", "sk-relay-123456")
    ]


def test_import_cc_switch_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "cc-switch.db"
    path.write_text("not sqlite")
    with pytest.raises(ConfigParseError, match="not a readable SQLite database|no 'providers' table"):
        import_cc_switch(path)
