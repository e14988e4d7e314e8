"""ProfileStore order and copies: the list order in profiles.json is the user's order everywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvswitch.core.errors import ProfileError
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.core.store import ProfileStore


@pytest.fixture
def store(fake_home: Path) -> ProfileStore:
    store = ProfileStore(AppPaths.default())
    for name in ("a", "b", "c"):
        store.add(Profile.model_validate({"name": name, "kind": "ollama", "base_url": "http://127.0.0.1:11434",
                                          "api_key": f"sk-order-{name}-123456"}))
    return store


def file_order(store: ProfileStore) -> list[str]:
    return [p["name"] for p in json.loads(store.paths.profiles_file.read_text())["profiles"]]


def test_move_changes_the_order_in_the_file_and_in_a_second_store(store: ProfileStore) -> None:
    assert store.move("c", -1) == 1
    assert file_order(store) == ["a", "c", "b"]
    assert ProfileStore(store.paths).names() == ["a", "c", "b"]
    assert store.move("a", 10) == 2  # clamped at the end
    assert file_order(store) == ["c", "b", "a"]


def test_move_to_the_same_place_writes_nothing_and_notifies_nobody(store: ProfileStore) -> None:
    before = store.paths.profiles_file.stat().st_mtime_ns
    calls: list[int] = []
    store.subscribe(lambda: calls.append(1))
    assert store.move("a", -1) == 0
    assert calls == []
    assert store.paths.profiles_file.stat().st_mtime_ns == before


def test_duplicate_goes_right_after_the_original_with_a_free_name_and_the_key(store: ProfileStore) -> None:
    first = store.duplicate("a")
    second = store.duplicate("a")
    assert (first.name, second.name) == ("a copy", "a copy 2")
    assert file_order(store) == ["a", "a copy 2", "a copy", "b", "c"]
    assert store.get("a copy").key == "sk-order-a-123456"


def test_duplicate_refuses_a_taken_name_and_an_unknown_profile(store: ProfileStore) -> None:
    with pytest.raises(ProfileError, match="already exists"):
        store.duplicate("a", "B")
    with pytest.raises(ProfileError, match="no profile named 'zz'"):
        store.duplicate("zz")
    assert file_order(store) == ["a", "b", "c"]


def test_duplicate_of_a_64_character_name_stays_valid(store: ProfileStore) -> None:
    long = "x" * 64
    store.add(Profile.model_validate({"name": long, "kind": "ollama", "base_url": "http://127.0.0.1:11434"}))
    for _ in range(3):
        assert len(store.duplicate(long).name) <= 64
