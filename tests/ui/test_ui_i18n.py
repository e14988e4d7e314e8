"""Languages: Simplified Chinese from the shipped .qm, chosen by env, setting or system locale."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from kvswitch.ui import i18n
from support.require import component_missing

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
    from kvswitch.ui.shell.main_window import MainWindow

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


def test_no_source_string_is_missing_from_the_ts_file(tmp_path: Path) -> None:
    """``pyside6-lupdate`` over the sources, into a copy: a string added to the code and not to the .ts
    file (or changed since) comes out as unfinished there."""
    import shutil
    import subprocess
    import sys

    lupdate = Path(sys.executable).with_name("pyside6-lupdate")
    if not lupdate.exists():
        component_missing("pyside6-lupdate is not installed beside this interpreter (PySide6 brings it)")
    copy = tmp_path / "kvswitch_zh_CN.ts"
    shutil.copy(I18N / "kvswitch_zh_CN.ts", copy)
    sources = sorted(str(p) for p in I18N.parent.rglob("*.py"))
    subprocess.run([str(lupdate), "-no-obsolete", *sources, "-ts", str(copy)], check=True,
                   capture_output=True, timeout=120)
    text = copy.read_text(encoding="utf-8")
    unfinished = re.findall(r"<source>([^<]*)</source>\s*(?:<[^>]+>[^<]*</[^>]+>\s*)*"
                            r"<translation type=\"unfinished\"", text)
    assert unfinished == []


def test_one_word_for_token() -> None:
    """The glossary: "token" stays "token" (令牌 is a credential, 新建 is "create")."""
    ts = (I18N / "kvswitch_zh_CN.ts").read_text(encoding="utf-8")
    assert "令牌" not in ts
    events = ts[ts.index("<name>CacheEventsModel</name>"):]
    events = events[:events.index("</context>")]
    new_column = re.search(r"<source>New</source>\s*<translation>([^<]*)</translation>", events)
    assert new_column is not None
    assert new_column.group(1) == "新 token"


def test_a_language_change_applies_without_a_restart(qtbot: Any, paths: Any,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings saved with Chinese: the window is rebuilt in it at once, the profile and tray kept."""
    from tests.ui.uihelpers import make_profile

    from kvswitch.core.settings import AppSettings
    from kvswitch.ui.shell.shell import AppShell

    monkeypatch.setattr(QApplication, "quit", staticmethod(lambda: None))
    shell = AppShell(paths, None, tray_available=True)
    qtbot.addWidget(shell.window)
    try:
        shell.controller.store.add(make_profile("local"))
        shell.start()
        first = shell.window
        assert first.verify_action.text() == "Verify cache"
        first._on_settings_saved(AppSettings(language="en"), AppSettings(language="zh_CN"))
        assert shell.window is not first
        qtbot.addWidget(shell.window)
        assert i18n.current() == "zh_CN"
        assert shell.window.verify_action.text() == "验证缓存"
        assert shell.window.model.rowCount() == 1  # the same store: nothing was lost
        shell.tray.rebuild_menu(vendors=False)
        assert shell.tray.show_action.text() == "显示窗口"
    finally:
        shell.shutdown()
        i18n.install(QApplication.instance(), "en")
