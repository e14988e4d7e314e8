"""Languages: Simplified Chinese from the shipped .qm, chosen by env, setting or system locale."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from kvswitch.ui import i18n

I18N = Path(i18n.__file__).resolve().parent / "i18n"


@pytest.fixture
def chinese(qapp: Any) -> Iterator[str]:
    used = i18n.install(qapp, "zh_CN")
    yield used
    i18n.install(qapp, "en")


@pytest.mark.parametrize(("given", "expected"), [
    ("zh_CN.UTF-8", "zh_CN"), ("zh-Hans-CN", "zh_CN"), ("zh", "zh_CN"), ("en_GB", "en"), ("C", "en"),
    ("de_DE", None), ("", None), (None, None),
])
def test_normalize(given: str | None, expected: str | None) -> None:
    assert i18n.normalize(given) == expected


def test_env_overrides_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVSWITCH_LANG", "zh_CN")
    assert i18n.choose_language("en") == "zh_CN"
    monkeypatch.delenv("KVSWITCH_LANG")
    assert i18n.choose_language("zh") == "zh_CN"
    assert i18n.choose_language("en") == "en"


def test_window_speaks_chinese(qtbot: Any, chinese: str, controller: Any) -> None:
    from kvswitch.ui.main_window import MainWindow

    assert chinese == "zh_CN"
    window = MainWindow(controller)
    qtbot.addWidget(window)
    assert window.verify_action.text() == "验证缓存"
    assert window.tabs.tabText(1) == "缓存日志"
    assert window.editor.save_button.text() == "保存"
    assert window.verify_card.client_button.text() == "用 Claude Code 验证"
    assert window.verify_card.history.compare_button.text() == "比较所选"
    window.log_panel.stop()


def test_every_source_string_is_translated() -> None:
    ts = (I18N / "kvswitch_zh_CN.ts").read_text(encoding="utf-8")
    assert 'type="unfinished"' not in ts
    assert len(re.findall(r"<source>", ts)) >= 100
    assert (I18N / "kvswitch_zh_CN.qm").stat().st_mtime >= (I18N / "kvswitch_zh_CN.ts").stat().st_mtime - 1


def test_english_needs_no_translator(qapp: Any) -> None:
    assert i18n.install(qapp, "en") == "en"
    assert QApplication.translate("MainWindow", "Verify cache") == "Verify cache"
