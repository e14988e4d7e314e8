"""The real window draws Chinese on a system without a Chinese font (issue 38, item 2): after a live
switch to 简体中文 (the window was built in English, so the font was never loaded at start), and in an
English window showing a profile named in Chinese (user data, as CC Switch imports it).

Each case runs in a child process whose fontconfig lists one Latin-only font of this machine (see
``test_cjk_font._latin_only_fontconfig``). The child builds the shell as ``kvswitch.ui.app`` does, reads
every text the window shows (labels, buttons, tabs, fields, combo entries, each item view's model) and
asks each widget's own font metrics, fallbacks included, whether it can draw every character.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_cjk_font import _latin_only_fontconfig, _run_child

NAME = "公司专用账号 (智谱 GLM …)"

CHILD = r"""
import json, re, sys, time, unicodedata
from PySide6.QtCore import QCoreApplication, QEvent, QModelIndex, Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import (QAbstractButton, QAbstractItemView, QApplication, QComboBox, QLabel, QLineEdit,
                               QTabBar)
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.core.settings import AppSettings
from kvswitch.core.store import ProfileStore
from kvswitch.ui import i18n
from kvswitch.ui.shell.shell import AppShell

mode, name = sys.argv[1], sys.argv[2]
app = QApplication([])
system_has_cjk = i18n.system_has_cjk_font()
paths = AppPaths.default()
ProfileStore(paths).add(Profile.model_validate({"name": name, "kind": "llama.cpp",
                                                "base_url": "http://127.0.0.1:8080"}))
i18n.install(app, "en")
shell = AppShell(paths, minimized=False, tray_available=False, deferred=True)  # as kvswitch.ui.app
ready = []
shell.ready.connect(lambda: ready.append(True))
if mode == "start":
    shell.ready.connect(lambda: i18n.ensure_cjk_font(app))  # exactly as kvswitch.ui.app connects it
shell.start()
deadline = time.monotonic() + 60
while not ready and time.monotonic() < deadline:
    app.processEvents()
    time.sleep(0.01)
waited = time.monotonic() - deadline + 60
loaded_at_start = i18n._LOADED_FONT[:]
if mode == "switch":  # Settings -> Language -> 简体中文 -> OK
    shell.window._on_settings_saved(AppSettings(language="en"), AppSettings(language="zh_CN"))
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
for _ in range(50):
    app.processEvents()
    time.sleep(0.01)
window = shell.window

def texts_of(widget):
    found = []
    if isinstance(widget, QLabel):
        found.append(re.sub(r"<[^>]*>", "", widget.text()))
    if isinstance(widget, QAbstractButton):
        found.append(widget.text())
    if isinstance(widget, QLineEdit):
        found += [widget.text(), widget.placeholderText()]
    if isinstance(widget, QComboBox):
        found += [widget.itemText(i) for i in range(widget.count())]
    if isinstance(widget, QTabBar):
        found += [widget.tabText(i) for i in range(widget.count())]
    if isinstance(widget, QAbstractItemView) and widget.model() is not None:
        model = widget.model()
        roles = [Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole,
                 *range(Qt.ItemDataRole.UserRole, Qt.ItemDataRole.UserRole + 40)]
        try:
            columns = model.columnCount(QModelIndex())
        except TypeError:  # a list model: one column (its columnCount is private to Python)
            columns = 1
        for row in range(min(model.rowCount(QModelIndex()), 200)):
            for column in range(columns):
                for role in roles:
                    value = model.data(model.index(row, column), role)
                    found += [value] if isinstance(value, str) else []
    return [t for t in found if t]

shown, undrawable = [], set()
kinds = (QLabel, QAbstractButton, QLineEdit, QComboBox, QTabBar, QAbstractItemView)
for widget in [window, *(w for kind in kinds for w in window.findChildren(kind))]:
    metrics = QFontMetrics(widget.font())
    for text in texts_of(widget) + ([widget.windowTitle()] if widget is window else []):
        shown.append(text)
        for c in text:
            if ord(c) > 0x7F and not unicodedata.category(c).startswith(("C", "Z")) \
                    and not metrics.inFontUcs4(ord(c)):
                undrawable.add(c)
han = sorted({c for t in shown for c in t if 0x4E00 <= ord(c) <= 0x9FFF})
print(json.dumps({"system_has_cjk": system_has_cjk, "language": i18n.current(),
                  "loaded_at_start": loaded_at_start, "loaded": i18n._LOADED_FONT[:],
                  "name_shown": any(name in t for t in shown), "han": len(han), "texts": len(shown),
                  "ready": bool(ready), "waited": waited,
                  "undrawable": "".join(sorted(undrawable))}))
shell.shutdown()
"""


def _window_child(mode: str, tmp_path: Path) -> dict[str, Any]:
    # the child inherits the fake HOME of tests/conftest.py: its profile store is a temporary one
    return _run_child(CHILD, mode, NAME, FONTCONFIG_FILE=str(_latin_only_fontconfig(tmp_path)),
                      LANG="C.UTF-8", LANGUAGE="", LC_ALL="C.UTF-8")


def test_a_live_switch_to_chinese_draws_the_whole_window(tmp_path: Path) -> None:
    """The window was built in English and the start did not load the font (no ``ready`` hook here, so
    only the switch itself can): after Settings → Language → 简体中文, every character draws."""
    result = _window_child("switch", tmp_path)
    assert result["system_has_cjk"] is False
    assert result["loaded_at_start"] == []
    assert result["language"] == "zh_CN"
    assert result["han"] > 40  # the window really is in Chinese: the check below is not vacuous
    assert result["name_shown"] is True
    assert result["undrawable"] == ""  # before the fix: every hanzi of the window
    assert result["loaded"] == ["KV Switch Noto Sans SC"]


def test_an_english_window_draws_a_profile_named_in_chinese(tmp_path: Path) -> None:
    """English stays English, but user data in Chinese draws: the start loads the bundled font when the
    system has no CJK font at all, whatever the language."""
    result = _window_child("start", tmp_path)
    assert result["system_has_cjk"] is False
    assert result["language"] == "en"
    assert result["name_shown"] is True
    assert result["undrawable"] == ""  # before the fix: 公司专用账号智谱
    assert result["loaded_at_start"] == ["KV Switch Noto Sans SC"]
