"""The controller's per-client API (``ui.control.controller_live``) on real files in the temporary HOME,
with a real ``AppController`` under offscreen Qt: what the window's badges, tray sections and message
bar are built from."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import local_profile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture
def controller(qtbot: Any, fake_home: Path) -> Iterator[Any]:
    from kvswitch.core.paths import AppPaths
    from kvswitch.core.store import ProfileStore
    from kvswitch.ui.control.controller import AppController

    paths = AppPaths.default()
    ctrl = AppController(paths, store=ProfileStore(paths))
    yield ctrl
    ctrl.shutdown()


def _two_profiles(controller: Any) -> None:
    controller.store.add(local_profile("cl", targets=["claude"], context_window=32768))
    controller.store.add(local_profile("cx", targets=["codex"], model="gpt-oss", context_window=32768,
                                       base_url="http://127.0.0.1:8081"))


def test_apply_names_only_the_client_written_and_emits_the_list(controller: Any, qtbot: Any) -> None:
    _two_profiles(controller)
    assert controller.apply("cl")
    assert controller.switch_message("cl") == "Switched Claude Code to “cl”: new sessions use it."
    with qtbot.waitSignal(controller.live_clients_changed) as emitted:
        assert controller.apply("cx")
    assert controller.switch_message("cx") == "Switched Codex to “cx”: new sessions use it."
    by_key = {c.key: c for c in emitted.args[0]}
    assert (by_key["claude:user"].profile, by_key["codex"].profile) == ("cl", "cx")


def test_save_writes_through_or_leaves_differs_then_one_call_applies(
    controller: Any, qtbot: Any, fake_home: Path
) -> None:
    _two_profiles(controller)
    controller.apply("cl")
    settings = fake_home / ".claude" / "settings.json"
    outcome = controller.save_profile("cl", local_profile("cl", targets=["claude"], context_window=32768,
                                                          model="qwen-coder"))
    assert outcome.written == ["Claude Code"]
    assert json.loads(settings.read_text())["model"] == "qwen-coder"
    assert controller.save_message(outcome) == "Saved “cl”. Written to Claude Code."
    kept = settings.read_bytes()
    outcome = controller.save_profile("cl", local_profile("cl", targets=["claude"], context_window=32768,
                                                          model="qwen-3"), write_through=False)
    assert outcome.differs == ["Claude Code"]
    assert settings.read_bytes() == kept
    live = {c.key: c for c in controller.live_clients()}["claude:user"]
    assert (live.profile, live.differs) == ("cl", True)
    again = controller.apply_to_clients("cl")
    assert again.written == ["Claude Code"]
    assert json.loads(settings.read_text())["model"] == "qwen-3"
    assert controller.undo()
    assert settings.read_bytes() == kept


def test_a_hand_edit_is_seen_by_the_watcher(controller: Any, qtbot: Any, fake_home: Path) -> None:
    _two_profiles(controller)
    controller.apply("cl")
    controller.watch_live_clients()
    settings = fake_home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["model"] = data["env"]["ANTHROPIC_MODEL"] = "by-hand"
    with qtbot.waitSignal(controller.live_clients_changed, timeout=5000) as emitted:
        tmp = settings.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(settings)
    live = {c.key: c for c in emitted.args[0]}["claude:user"]
    assert (live.profile, live.differs) == ("cl", True)
