"""ProfileStore: 0600 file, schema migration, reload on outside change, subscribers, duplicates."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kvswitch.core.errors import ConfigParseError, ProfileError
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.core.store import SCHEMA_VERSION, ProfileStore


@pytest.fixture
def paths(fake_home: Path) -> AppPaths:
    return AppPaths.default()


def profile(name: str, **extra: object) -> Profile:
    return Profile.model_validate(
        {
            "name": name,
            "kind": "ollama",
            "base_url": "http://127.0.0.1:11434",
            "api_key": "sk-store-123456789",
            **extra,
        }
    )


def test_add_persists_keys_in_a_private_file(paths: AppPaths) -> None:
    store = ProfileStore(paths)
    store.add(profile("a"))
    assert paths.profiles_file.stat().st_mode & 0o777 == 0o600
    data = json.loads(paths.profiles_file.read_text())
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["profiles"][0]["api_key"] == "sk-store-123456789"
    assert ProfileStore(paths).get("a").key == "sk-store-123456789"


def test_duplicates_and_missing_names(paths: AppPaths) -> None:
    store = ProfileStore(paths)
    store.add(profile("Local"))
    with pytest.raises(ProfileError, match="already exists"):
        store.add(profile("local"))
    store.add(profile("other"))
    with pytest.raises(ProfileError, match="already exists"):
        store.update("other", profile("LOCAL"))
    with pytest.raises(ProfileError, match="no profile named 'x'.*Local, other"):
        store.get("x")


def test_update_rename_and_remove_notify(paths: AppPaths) -> None:
    store = ProfileStore(paths)
    calls: list[int] = []
    unsubscribe = store.subscribe(lambda: calls.append(1))
    store.add(profile("a"))
    store.update("a", profile("b", model="m"))
    assert store.names() == ["b"]
    assert store.get("b").model == "m"
    store.remove("b")
    assert calls == [1, 1, 1]
    unsubscribe()
    store.add(profile("c"))
    assert calls == [1, 1, 1]


def test_reloads_when_another_process_writes(paths: AppPaths) -> None:
    gui = ProfileStore(paths)
    calls: list[int] = []
    gui.subscribe(lambda: calls.append(1))
    assert gui.profiles() == []
    ProfileStore(paths).add(profile("from-cli"))
    assert [p.name for p in gui.profiles()] == ["from-cli"]
    assert calls == [1]
    gui.profiles()
    assert calls == [1], "no change, no notification"
    from kvswitch.targets.engine import Engine

    Engine(paths, env=os.environ).apply(gui.get("from-cli"))
    assert gui.active_name == "from-cli"
    gui.refresh()
    assert calls == [1, 1], "an apply by another process changes the active marker"


def test_schema_1_is_migrated_and_kept(paths: AppPaths) -> None:
    paths.config_dir.mkdir(parents=True)
    paths.profiles_file.write_text(
        json.dumps(
            {
                "schema_version": 1,
                "profiles": {
                    "old": {
                        "kind": "llama.cpp",
                        "base_url": "http://127.0.0.1:8080",
                        "key": "sk-old-1234567890",
                    }
                },
            }
        )
    )
    store = ProfileStore(paths)
    assert store.get("old").key == "sk-old-1234567890"
    assert (paths.config_dir / "profiles.json.schema1.bak").exists()
    store.add(profile("new"))
    assert json.loads(paths.profiles_file.read_text())["schema_version"] == SCHEMA_VERSION


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"schema_version": 2, "profiles": [', "profiles.json:1:"),
        ('{"schema_version": 99, "profiles": []}', "newer KV Switch"),
        ('{"schema_version": 2, "profiles": [{"name": "x", "base_url": "ftp://h"}]}', "invalid base URL"),
    ],
)
def test_damaged_file_is_reported_not_overwritten(paths: AppPaths, content: str, message: str) -> None:
    paths.config_dir.mkdir(parents=True)
    paths.profiles_file.write_text(content)
    store = ProfileStore(paths)
    with pytest.raises(ConfigParseError, match=message):
        store.profiles()
    with pytest.raises(ConfigParseError):
        store.add(profile("a"))
    assert paths.profiles_file.read_text() == content


def test_active_name_follows_the_ledger_and_renames(paths: AppPaths) -> None:
    from kvswitch.targets.engine import Engine

    store = ProfileStore(paths)
    store.add(profile("a"))
    assert store.active_name is None
    Engine(paths, env=os.environ).apply(store.get("a"))
    assert store.active_name == "a"
    store.add(profile("b", model="other"))
    Engine(paths, env=os.environ).apply(store.get("b"))
    store.update("a", profile("renamed"))
    Engine(paths, env=os.environ).undo()
    assert store.active_name == "renamed", "undo goes back to the profile under its new name"
