"""Vendor identity in the real window: every catalog vendor picked in the gallery and saved shows its own
name, API and logo on its card, in the editor and in the tray; imports from real Claude Code and CC Switch
files in the temp HOME are named and typed from the catalog."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from kvswitch.core.catalog import vendors
from kvswitch.servers.vendor_match import PROTOCOL_LABELS
from kvswitch.ui.profiles.profile_card import card_identity, card_lines
from kvswitch.ui.shell.shell import AppShell
from kvswitch.ui.widgets import icons

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cc-switch-3.20"
CATALOG = vendors()
#: what a vendor profile was labelled before: a kind name that says nothing about the vendor
GENERIC = ("OpenAI-compatible gateway", "Custom", "gateway")


def no_servers() -> list[Any]:
    return []


@pytest.fixture
def shell(qtbot: Any, paths: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(QApplication, "quit", staticmethod(lambda: None))
    app_shell = AppShell(paths, None, tray_available=True)
    qtbot.addWidget(app_shell.window)
    app_shell.window.show()
    yield app_shell
    app_shell.shutdown()


def add_from_gallery(qtbot: Any, window: Any, title: str) -> str:
    """Pick ``title`` in the gallery, add a key, save; the saved profile's name."""
    gallery = window.open_gallery(detector=no_servers)
    with qtbot.waitSignal(gallery.detection_finished, timeout=10000):
        pass
    assert gallery.select_title(title)
    gallery.buttons.accepted.emit()
    qtbot.keyClicks(window.editor.key_edit, "sk-test-key-0123456789")
    with qtbot.waitSignal(window.model.rowsInserted, timeout=3000):
        window.editor.save_button.click()
    name = window.selected_name()
    assert name is not None
    return name


@pytest.mark.parametrize("entry", CATALOG, ids=[entry.id for entry in CATALOG])
def test_every_vendor_preset_shows_its_name_api_and_logo(qtbot: Any, shell: Any, entry: Any) -> None:
    window, tray = shell.window, shell.tray
    name = add_from_gallery(qtbot, window, entry.display_name("en"))
    index = window.model.index(window.model.row_of(name))
    api = PROTOCOL_LABELS[entry.claude_protocol]

    # the card: "<vendor> · <API> · <model>" and the vendor's own logo (or, where the collection has
    # none, the vendor's own letters), never a kind's
    detail = card_lines(index)[1]
    assert detail.startswith(f"{entry.display_name('en')} · {api}")
    assert not any(word in detail for word in GENERIC)
    who = card_identity(index)
    assert who is not None
    assert who.vendor_id == entry.id
    if entry.id in icons.VENDORS_WITHOUT_LOGO:
        assert who.logo is None
        assert who.monogram == "".join(c for c in entry.display_name("en") if c.isalnum())[:2].title()
    else:
        assert who.logo == icons.VENDOR_LOGOS[entry.id]
        logo = icons.logo_icon(who.logo, 34)
        assert logo is not None  # the SVG is installed and renders
        image = logo.pixmap(34, 34).toImage()
        assert any(image.pixelColor(x, y).alpha() > 0 for x in range(0, image.width(), 2)
                   for y in range(0, image.height(), 2))

    # the editor: the kind combo names a cloud API (not an "OpenAI-compatible gateway"), the hint line
    # names vendor and API
    editor = window.editor
    assert editor.kind_combo.currentText() not in GENERIC
    assert editor.key_hint.isVisibleTo(window)
    assert f"{entry.display_name('en')} · {api}" in editor.key_hint.text.text()

    # the tray: the vendor's logo and name
    tray.menu.aboutToShow.emit()
    action = tray.profile_actions[name]
    assert entry.display_name("en") in action.toolTip()
    assert api in action.toolTip()
    assert entry.id in icons.VENDORS_WITHOUT_LOGO or not action.icon().isNull()


def test_zh_cn_cards_name_the_vendor_in_chinese(qtbot: Any, qapp: Any, window: Any, store: Any) -> None:
    from kvswitch.ui import i18n

    name = add_from_gallery(qtbot, window, "DeepSeek")
    assert i18n.install(qapp, "zh_CN") == "zh_CN"
    try:
        line = card_lines(window.model.index(window.model.row_of(name)))[1]
        assert line.startswith("深度求索 DeepSeek · Anthropic API · ")
    finally:
        i18n.install(qapp, "en")


def test_a_claude_code_deepseek_setup_imports_as_deepseek_then_deepseek_2(qtbot: Any, window: Any,
                                                                        store: Any,
                                                                        fake_home: Path) -> None:
    (fake_home / ".claude").mkdir()
    shutil.copy(FIXTURES / "claude-settings-deepseek.json", fake_home / ".claude" / "settings.json")
    page = window.profile_page
    assert page is not None
    assert page.showing_welcome
    qtbot.mouseClick(page.welcome.import_claude_button, Qt.MouseButton.LeftButton)
    window._import("claude")  # a second import of the same setup (menu File → Import)
    assert [p.name for p in store.profiles()] == ["deepseek", "deepseek-2"]
    for profile in store.profiles():
        assert profile.kind.value == "openai-compatible"  # as a DeepSeek profile from the gallery
        assert profile.base_url == "https://api.deepseek.com/anthropic"
        assert profile.key == "sk-ds-fixture-0123456789"
        index = window.model.index(window.model.row_of(profile.name))
        assert card_lines(index)[1] == "DeepSeek · Anthropic API · deepseek-chat"
        who = card_identity(index)
        assert who is not None
        assert who.logo == "deepseek-color"
    assert not page.showing_welcome  # there are profiles now: the form shows


def test_cc_switch_providers_keep_their_names_and_get_the_vendors_kind_and_logo(qtbot: Any, window: Any,
                                                                               store: Any,
                                                                               fake_home: Path) -> None:
    folder = fake_home / ".cc-switch"
    folder.mkdir()
    conn = sqlite3.connect(folder / "cc-switch.db")
    conn.executescript((FIXTURES / "providers.sql").read_text(encoding="utf-8"))
    conn.close()
    window.profile_page.welcome.import_cc_switch_button.click()
    shown = {p.name: (p.kind.value, card_lines(window.model.index(window.model.row_of(p.name)))[1],
                      card_identity(window.model.index(window.model.row_of(p.name))))
             for p in store.profiles()}
    assert list(shown) == ["Claude Official", "DeepSeek", "DeepSeek (codex)", "Kimi k2", "火山方舟 Coding",
                           "My relay"]  # CC Switch's own order (sort_index)
    assert shown["Claude Official"][0] == "anthropic"
    assert shown["Claude Official"][1].startswith("Anthropic · Anthropic API")
    assert shown["DeepSeek"][:2] == ("openai-compatible", "DeepSeek · Anthropic API · deepseek-chat")
    assert shown["Kimi k2"][1] == "Moonshot Kimi · Anthropic API · kimi-k2-turbo-preview"
    assert shown["Kimi k2"][2].logo == "kimi"
    # three plans share Volcengine Ark's host; the path names the Coding Plan
    assert shown["火山方舟 Coding"][1].startswith("Volcengine Ark Coding Plan · Anthropic API")
    assert shown["火山方舟 Coding"][2].logo == "volcengine-color"
    # the Codex provider at DeepSeek's OpenAI URL: the same vendor, its chat API
    assert shown["DeepSeek (codex)"][1] == "DeepSeek · OpenAI Chat API · deepseek-chat"
    # a relay no catalog lists stays what the URL says: custom, shown by its host
    kind, line, who = shown["My relay"]
    assert kind == "custom"
    assert line == "relay.example.net · default model"
    assert who.vendor_id is None
    assert window.message_bar.text.startswith("Imported 6 profile(s)")


def test_the_tray_names_the_vendor_when_the_profile_name_does_not(qtbot: Any, shell: Any) -> None:
    from uihelpers import make_profile

    store = shell.controller.store
    store.add(make_profile("work", kind="openai-compatible", base_url="https://api.deepseek.com/anthropic",
                           api_key="sk-test-key-0123456789"))
    store.add(make_profile("deepseek fast", kind="openai-compatible",
                           base_url="https://api.deepseek.com/anthropic", api_key="sk-test-key-0123456789"))
    store.add(make_profile("local"))
    tray = shell.tray
    tray.menu.aboutToShow.emit()
    assert tray.profile_actions["work"].text() == "work  (DeepSeek)"
    assert tray.profile_actions["deepseek fast"].text() == "deepseek fast"  # its name says it already
    assert tray.profile_actions["local"].text() == "local"
    assert not tray.profile_actions["work"].icon().isNull()
    assert tray.profile_actions["work"].toolTip() == "DeepSeek · Anthropic API · https://api.deepseek.com/anthropic"
