"""Gateway profiles' models in Codex's model choice: ``kvswitch use`` writes the catalog file of full
model records and ``model_catalog_json`` in the real ``config.toml`` of a temporary HOME, merge-only (a
user's own keys in either file survive), a direct profile takes both back, and ``undo`` restores the
user's bytes. Codex's own acceptance of the records: tests/e2e/test_e2e_codex_model_picker.py."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from kvswitch.cli import main
from kvswitch.targets.codex_models import CATALOG_KEY

ORIGINAL_TOML = '# mine\napproval_policy = "never"\n\n[tui]\ntheme = "dark"\n'


def _add(name: str, model: str, *extra: str) -> None:
    assert main(["profile", "add", name, "--kind", "llama.cpp", "--base-url", "http://127.0.0.1:18080",
                 "--model", model, "--target", "codex", *extra]) == 0


def test_use_writes_the_catalog_merge_only_and_undo_gives_the_users_back(fake_home: Path) -> None:
    codex = fake_home / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(ORIGINAL_TOML)
    _add("Local A", "qwen", "--via-gateway", "--context-window", "32768")
    _add("b", "llama", "--via-gateway")
    _add("direct", "other")
    assert main(["use", "Local A"]) == 0
    config = tomllib.loads((codex / "config.toml").read_text())
    catalog = codex / "kvswitch-models.json"
    assert config[CATALOG_KEY] == str(catalog)
    assert config["approval_policy"] == "never"
    assert config["tui"] == {"theme": "dark"}
    models = json.loads(catalog.read_text())["models"]
    assert [(m["slug"], m["display_name"], m.get("context_window")) for m in models] == [
        ("kvs-local-a-9843197d--qwen", "Local A: qwen", 32768), ("kvs-b--llama", "b: llama", None)]
    for record in models:  # the keys Codex 0.169.0 / 0.171.0 refuse to start without
        assert {"supported_reasoning_levels", "shell_type", "visibility", "supported_in_api", "priority",
                "support_verbosity", "truncation_policy", "experimental_supported_tools",
                "base_instructions"} <= record.keys()

    data = json.loads(catalog.read_text())
    data["note"] = "the user's own key"
    catalog.write_text(json.dumps(data))
    assert main(["use", "b"]) == 0  # another gateway profile: the gateway's route, no file rewritten
    assert json.loads(catalog.read_text())["note"] == "the user's own key"
    assert main(["use", "direct"]) == 0  # a direct profile: KV Switch's catalog and its key are gone
    assert CATALOG_KEY not in tomllib.loads((codex / "config.toml").read_text())
    assert json.loads(catalog.read_text()) == {"note": "the user's own key"}
    assert main(["undo"]) == 0  # back to 'Local A': the catalog again
    assert CATALOG_KEY in tomllib.loads((codex / "config.toml").read_text())
    assert main(["undo"]) == 0
    assert (codex / "config.toml").read_text() == ORIGINAL_TOML


def test_saving_another_gateway_profile_refreshes_the_live_catalog(fake_home: Path) -> None:
    _add("cl", "qwen", "--via-gateway")
    assert main(["use", "cl"]) == 0
    catalog = fake_home / ".codex" / "kvswitch-models.json"
    _add("gw2", "llama")
    assert main(["profile", "edit", "gw2", "--via-gateway"]) == 0  # not live: the live one's catalog lists it
    assert _slugs(catalog) == ["kvs-cl--qwen", "kvs-gw2--llama"]
    assert main(["profile", "edit", "gw2", "--direct"]) == 0
    assert _slugs(catalog) == ["kvs-cl--qwen"]


def _slugs(catalog: Path) -> list[str]:
    return [m["slug"] for m in json.loads(catalog.read_text())["models"]]
