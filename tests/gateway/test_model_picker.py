"""Gateway profiles' models in Claude Code's ``/model`` picker (``modelPicker``, written by ``kvswitch use``
into the real settings file of the temporary HOME), and the gateway's resolution of a picked id
(``gateway.model_routes``): the profile it names and that profile's real model id."""

from __future__ import annotations

import json
from pathlib import Path

from kvswitch.cli import main
from kvswitch.core.model_ids import picker_models
from kvswitch.core.paths import AppPaths, claude_config_dir
from kvswitch.core.store import ProfileStore
from kvswitch.gateway.relay import model_routes

USER_PICKER = {"options": [{"model": "opus", "label": "my own row"}]}


def _add(name: str, model: str, *extra: str) -> None:
    assert main(["profile", "add", name, "--kind", "llama.cpp", "--base-url", "http://127.0.0.1:18080",
                 "--model", model, "--context-window", "32768", "--target", "claude", *extra]) == 0


def _settings() -> dict[str, object]:
    return json.loads((claude_config_dir() / "settings.json").read_text())


def test_use_writes_every_gateway_profiles_models_and_undo_gives_the_users_back(fake_home: Path) -> None:
    settings = claude_config_dir() / "settings.json"
    settings.parent.mkdir(parents=True)
    original = json.dumps({"modelPicker": USER_PICKER, "theme": "dark"}, indent=2) + "\n"
    settings.write_text(original)
    _add("Local A", "qwen", "--via-gateway", "--haiku-model", "qwen-small")
    _add("b", "llama", "--via-gateway")
    _add("direct", "other")
    assert main(["use", "Local A"]) == 0
    picker = _settings()["modelPicker"]
    assert isinstance(picker, dict)
    assert picker["replaceBuiltInOptions"] is True
    rows = [(row["model"], row["label"]) for row in picker["options"]]
    assert rows == [("kvs-local-a-9843197d--qwen", "Local A: qwen"),
                    ("kvs-local-a-9843197d--qwen-small", "Local A: qwen-small"), ("kvs-b--llama", "b: llama")]
    assert _settings()["theme"] == "dark"
    assert main(["use", "direct"]) == 0  # a direct profile: no picker of KV Switch's, the user's is back
    assert _settings()["modelPicker"] == USER_PICKER
    assert main(["undo"]) == 0
    assert main(["undo"]) == 0
    assert settings.read_text() == original


def test_a_picked_id_names_its_profile_and_real_model(fake_home: Path) -> None:
    _add("A", "tiny", "--via-gateway")
    _add("B", "tiny-b", "--via-gateway", "--haiku-model", "tiny-small")
    _add("direct", "d")
    profiles = {p.name: p for p in ProfileStore(AppPaths.default()).profiles()}
    assert [row.id for row in picker_models(profiles.values())] == [
        "kvs-a-af3c7293--tiny", "kvs-b-5f34fe16--tiny-b", "kvs-b-5f34fe16--tiny-small"]
    row = model_routes.picked({"model": "kvs-b-5f34fe16--tiny-small"}, profiles)
    assert row is not None
    assert (row.profile, row.model) == ("B", "tiny-small")
    assert model_routes.upstream_model("kvs-b-5f34fe16--tiny-small", profiles["B"], profiles) == "tiny-small"
    # a fallback profile maps it as any other model
    assert model_routes.upstream_model("kvs-b-5f34fe16--tiny-small", profiles["A"], profiles) is None
    assert model_routes.picked({"model": "kvs-direct--d"}, profiles) is None  # not a gateway profile
    assert model_routes.picked({"model": "claude-sonnet"}, profiles) is None


def test_slugs_that_collide_get_distinct_ids_whatever_the_order(fake_home: Path) -> None:
    _add("My Box", "m", "--via-gateway")
    _add("my-box", "m", "--via-gateway")
    profiles = ProfileStore(AppPaths.default()).profiles()
    ids = [row.id for row in picker_models(profiles)]
    assert ids == ["kvs-my-box-5ba1fe86--m", "kvs-my-box--m"]
    assert [row.id for row in picker_models(reversed(profiles))] == ids[::-1]
