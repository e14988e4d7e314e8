"""Every card says which clients its profile is for and whether it goes through the gateway (issue 38,
item 6): three llama.cpp profiles for three clients no longer look the same when none of them is live.

Live clients keep the loud filled pill; the clients a profile is written for that do not run it now,
and the gateway, are quiet outlined pills, in the UI language. Real window, real files in a temporary
HOME (the Claude card goes live by a real apply).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from tests.ui.uihelpers import make_profile

from kvswitch.ui import i18n
from kvswitch.ui.profiles.profile_card import card_badges, card_marks

SAFE = {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}


def _three_llama(store: Any) -> None:
    store.add(make_profile("for-claude", env=SAFE, targets=["claude"]))
    store.add(make_profile("for-codex", targets=["codex"]))
    store.add(make_profile("for-many", env=SAFE, targets=["claude", "opencode", "bash"], via_gateway=True))


def _marks(window: Any, name: str) -> list[str]:
    return [mark.text for mark in card_marks(window.model.index(window.model.row_of(name)))]


def test_cards_that_are_not_live_name_their_clients_and_the_gateway(qtbot: Any, store: Any,
                                                                   window: Any) -> None:
    _three_llama(store)
    assert _marks(window, "for-claude") == ["Claude Code"]
    assert _marks(window, "for-codex") == ["Codex"]
    assert _marks(window, "for-many") == ["Claude Code", "OpenCode", "bash", "Gateway"]
    assert all(mark.quiet for r in range(3) for mark in card_marks(window.model.index(r)))
    many = window.model.index(window.model.row_of("for-many"))
    assert "Its clients go through the KV Switch gateway" in many.data(Qt.ItemDataRole.ToolTipRole)
    assert "Written for OpenCode" in many.data(Qt.ItemDataRole.AccessibleTextRole)
    assert not window.list_view.grab().isNull()  # the pills paint


def test_a_live_client_is_its_filled_pill_and_not_repeated_as_a_quiet_one(qtbot: Any, store: Any,
                                                                         window: Any) -> None:
    _three_llama(store)
    controller = window.controller
    with qtbot.waitSignal(controller.live_clients_changed, timeout=10_000):
        assert window.apply_profile("for-claude", review=False)
    qtbot.waitUntil(lambda: bool(controller.live_for("for-claude")), timeout=10_000)
    claude = window.model.index(window.model.row_of("for-claude"))
    assert [badge.text for badge in card_badges(claude)] == ["Claude Code"]
    assert _marks(window, "for-claude") == []
    assert _marks(window, "for-many") == ["Claude Code", "OpenCode", "bash", "Gateway"]  # not live


@pytest.fixture
def chinese(qapp: Any) -> Iterator[None]:
    i18n.install(qapp, "zh_CN")
    yield
    i18n.install(qapp, "en")


def test_the_marks_are_said_in_chinese(qtbot: Any, store: Any, chinese: None, controller: Any) -> None:
    from kvswitch.ui.shell.main_window import MainWindow

    _three_llama(store)
    window = MainWindow(controller)
    qtbot.addWidget(window)
    assert _marks(window, "for-many")[-1] == QApplication.translate("ProfileCard", "Gateway") != "Gateway"
    many = window.model.index(window.model.row_of("for-many"))
    assert "KV Switch gateway" not in many.data(Qt.ItemDataRole.ToolTipRole)
    window.log_panel.stop()
