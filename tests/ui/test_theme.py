"""The app's own look, read from rendered pixels: the dark setting gives a dark window where the platform
ignores the colour-scheme request (offscreen does), and every text on screen reaches 4.5:1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel, QWidget
from tests.ui.uihelpers import make_profile

from kvswitch.ui.shell.shell import AppShell
from kvswitch.ui.widgets import appearance

SAFE = {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}


def _settings_with_theme(paths: Any, theme: str) -> None:
    from kvswitch.core.settings import AppSettings, save_settings

    save_settings(paths, AppSettings(theme=theme))  # type: ignore[arg-type]


@pytest.fixture
def started(qtbot: Any, paths: Any, monkeypatch: pytest.MonkeyPatch, request: Any) -> Iterator[AppShell]:
    """The app as started with a saved theme (the parameter), with an active profile and another."""
    monkeypatch.setattr(QApplication, "quit", staticmethod(lambda: None))
    _settings_with_theme(paths, request.param)
    from kvswitch.core.store import ProfileStore

    store = ProfileStore(paths)
    store.add(make_profile("local llama", model="qwen3-8b", env=SAFE))
    store.add(make_profile("second box", base_url="http://127.0.0.1:8082", model="gemma-3", env=SAFE))
    shell = AppShell(paths, None, tray_available=False)
    qtbot.addWidget(shell.window)
    shell.window.resize(1100, 720)
    shell.start()
    qtbot.waitExposed(shell.window)
    with qtbot.waitSignal(shell.controller.profile_applied, timeout=5000):
        shell.window.apply_profile("local llama")
    yield shell
    shell.shutdown()


def _image(widget: QWidget) -> QImage:
    return widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)


def mean_luminance(image: QImage) -> float:
    step = 4
    values = [appearance.luminance(image.pixelColor(x, y))
              for y in range(0, image.height(), step) for x in range(0, image.width(), step)]
    return sum(values) / len(values)


def text_contrast(image: QImage, rect: QRect) -> float:
    """Contrast of the text in ``rect`` against its background, from the pixels only: the background is
    the most common colour, the text the pixel farthest from it (a glyph's stem reaches the pen)."""
    rect = rect.intersected(image.rect())
    colours = Counter(image.pixel(x, y) for y in range(rect.top(), rect.bottom() + 1)
                      for x in range(rect.left(), rect.right() + 1))
    background = QColor.fromRgb(colours.most_common(1)[0][0])
    return max(appearance.contrast(QColor.fromRgb(rgb), background) for rgb in colours)


def _text_regions(window: Any) -> list[tuple[str, QRect]]:
    """Every visible, enabled label and button with text, and each line of text on the cards."""
    regions = []
    for widget in window.findChildren(QWidget):
        if not widget.isVisible() or not widget.isEnabled() or widget.window() is not window:
            continue
        text = widget.text() if isinstance(widget, QLabel | QAbstractButton) else ""
        if not text.strip() or widget.width() < 4 or widget.height() < 4:
            continue
        visible = widget.visibleRegion().boundingRect()  # the part not scrolled away or covered
        if visible.width() < 4 or visible.height() < 4:
            continue
        top_left = widget.mapTo(window, visible.topLeft())
        region = QRect(top_left, visible.size())
        if isinstance(widget, QAbstractButton) and region.width() > 8 and region.height() > 8:
            region = region.adjusted(2, 2, -2, -2)  # inside the frame: its edge is not the text's background
        regions.append((f"{type(widget).__name__} {text[:40]!r}", region))
    from kvswitch.ui.profiles.profile_card import card_text_rects
    from kvswitch.ui.profiles.profile_model import IsActiveRole

    view = window.list_view
    for row in range(window.model.rowCount()):
        index = window.model.index(row)
        card = view.visualRect(index)
        for number, rect in enumerate(card_text_rects(card, view.font(), bool(index.data(IsActiveRole)))):
            top_left = view.viewport().mapTo(window, rect.topLeft())
            regions.append((f"card {row} line {number}", QRect(top_left, rect.size())))
    return regions


@pytest.mark.parametrize("started", ["dark"], indirect=True)
def test_the_dark_setting_renders_a_dark_window_offscreen(started: AppShell) -> None:
    assert appearance.current_scheme() == "dark"
    assert mean_luminance(_image(started.window)) < 0.3


@pytest.mark.parametrize("started", ["light"], indirect=True)
def test_the_light_setting_renders_a_light_window(started: AppShell) -> None:
    assert mean_luminance(_image(started.window)) > 0.6


@pytest.mark.parametrize("started", ["light", "dark"], indirect=True)
def test_every_text_on_screen_reaches_4_5_to_1(started: AppShell) -> None:
    window = started.window
    image = _image(window)
    regions = _text_regions(window)
    assert len(regions) > 10  # labels, buttons, the cards' lines
    low = [(name, round(text_contrast(image, rect), 2)) for name, rect in regions
           if text_contrast(image, rect) < appearance.MIN_CONTRAST]
    assert low == [], low


def test_readable_reaches_the_ratio_and_keeps_the_hue() -> None:
    amber_on_white = appearance.readable(QColor("#c18812"), QColor("#fbfbfb"))
    assert appearance.contrast(QColor("#c18812"), QColor("#fbfbfb")) < 3.0  # the measurement
    assert appearance.contrast(amber_on_white, QColor("#fbfbfb")) >= 4.5
    assert abs(amber_on_white.hslHue() - QColor("#c18812").hslHue()) <= 3
    assert appearance.contrast(QColor("#bebebe"), QColor("#ffffff")) < 2.0


def _border_contrast(image: QImage, rect: QRect, around: QColor) -> float:
    """The control's edge against what surrounds it: the best contrast along each side's middle third,
    the weakest side counted (an edge must show all the way round)."""
    sides = []
    mid_x = range(rect.left() + rect.width() // 3, rect.right() - rect.width() // 3)
    mid_y = range(rect.top() + rect.height() // 3, rect.bottom() - rect.height() // 3)
    for points in ([(x, rect.top() + d) for x in mid_x for d in (0, 1)],
                   [(x, rect.bottom() - d) for x in mid_x for d in (0, 1)],
                   [(rect.left() + d, y) for y in mid_y for d in (0, 1)],
                   [(rect.right() - d, y) for y in mid_y for d in (0, 1)]):
        inside = [image.pixelColor(x, y) for x, y in points if image.rect().contains(x, y)]
        sides.append(max((appearance.contrast(c, around) for c in inside), default=0.0))
    return min(sides)


@pytest.mark.parametrize("started", ["light", "dark"], indirect=True)
def test_control_borders_reach_3_to_1_against_the_window(started: AppShell) -> None:
    """WCAG 1.4.11: the edge of every visible line edit, combo box and (framed) push button."""
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QComboBox, QLineEdit, QPushButton

    window = started.window
    window.show_editor()
    QApplication.processEvents()
    image = _image(window)
    around = window.palette().color(QPalette.ColorRole.Window)
    checked, low = 0, []
    for widget in window.findChildren(QWidget):
        if not isinstance(widget, QLineEdit | QComboBox | QPushButton) or not widget.isVisible():
            continue
        if isinstance(widget, QPushButton) and (widget.isFlat() or widget.styleSheet()):
            continue  # a link-styled button has no frame; a primary one is its own filled shape
        if isinstance(widget, QLineEdit) and isinstance(widget.parent(), QComboBox):
            continue
        visible = widget.visibleRegion().boundingRect()
        if visible.size() != widget.size() or widget.width() < 12:
            continue  # scrolled partly out of view
        rect = QRect(widget.mapTo(window, widget.rect().topLeft()), widget.size())
        checked += 1
        value = _border_contrast(image, rect, around)
        if value < 3.0:
            low.append((type(widget).__name__, widget.objectName() or widget.text()[:20]
                        if hasattr(widget, "text") else "", round(value, 2)))
    assert checked >= 5
    assert low == [], low


def _indicator_rect(box: Any) -> QRect:
    """Where the style draws a check box's square (its text is not part of the boundary)."""
    from PySide6.QtWidgets import QStyle, QStyleOptionButton

    option = QStyleOptionButton()
    option.initFrom(box)
    return box.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, option, box)


@pytest.mark.parametrize("started", ["light", "dark"], indirect=True)
def test_check_box_squares_reach_3_to_1_against_the_window(started: AppShell) -> None:
    """WCAG 1.4.11 for the editor's check boxes (allow risky variables, the clients to write)."""
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QCheckBox

    window = started.window
    window.show_editor()
    QApplication.processEvents()
    image = _image(window)
    around = window.palette().color(QPalette.ColorRole.Window)
    checked, low = 0, []
    for box in window.findChildren(QCheckBox):
        if not box.isVisible() or box.visibleRegion().boundingRect().size() != box.size():
            continue
        square = _indicator_rect(box)
        rect = QRect(box.mapTo(window, square.topLeft()), square.size())
        checked += 1
        value = _border_contrast(image, rect, around)
        if value < 3.0:
            low.append((box.text()[:30], round(value, 2)))
    assert checked >= 2
    assert low == [], low


@pytest.mark.parametrize("started", ["light", "dark"], indirect=True)
def test_profile_cards_reach_3_to_1_against_the_list(started: AppShell) -> None:
    """WCAG 1.4.11 for the cards: each card's outline, the live one's and the others', against the
    list's background (a card is a clickable component; its edge must show where it ends)."""
    from PySide6.QtGui import QPalette

    window = started.window
    view = window.list_view
    around = view.viewport().palette().color(QPalette.ColorRole.Base)
    low = []
    for selected in (None, 1):  # none selected, then the second (its outline is the highlight)
        view.clearSelection()
        if selected is not None:
            view.setCurrentIndex(window.model.index(selected))
        QApplication.processEvents()
        image = _image(window)
        for row in range(window.model.rowCount()):
            card = view.visualRect(window.model.index(row)).adjusted(2, 2, -2, -2)
            rect = QRect(view.viewport().mapTo(window, card.topLeft()), card.size())
            value = _border_contrast(image, rect, around)
            if value < 3.0:
                low.append((selected, row, round(value, 2)))
    assert window.model.rowCount() == 2
    assert low == [], low


@pytest.mark.parametrize("started", ["dark"], indirect=True)
def test_no_light_strip_at_the_dark_windows_bottom_edge(started: AppShell) -> None:
    image = _image(started.window)
    bottom = [appearance.luminance(image.pixelColor(x, image.height() - 1 - d))
              for x in range(0, image.width(), 8) for d in range(3)]
    assert max(bottom) < 0.3


#: the real window in the dark theme, grabbed at the scale Qt was started with (QT_SCALE_FACTOR must be
#: set before the application exists, so each scale is its own process)
EDGE_CHILD = r"""
import json
from PySide6.QtGui import QImage, QPalette
from PySide6.QtWidgets import QApplication
from kvswitch.core.paths import AppPaths
from kvswitch.core.settings import AppSettings, save_settings

app = QApplication([])
paths = AppPaths.default()
save_settings(paths, AppSettings(theme="dark"))
from kvswitch.ui.shell.shell import AppShell
from kvswitch.ui.widgets import appearance

shell = AppShell(paths, None, tray_available=False)
shell.window.resize(900, 600)
shell.start()
shell.window.show()
rows, columns = {}, {}
for tab in range(shell.window.tabs.count()):  # every tab: each one's page reaches the bottom edge
    shell.window.tabs.setCurrentIndex(tab)
    for _ in range(50):
        app.processEvents()
    image = shell.window.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    for d in range(6):
        y = image.height() - 1 - d
        row = max(appearance.luminance(image.pixelColor(x, y)) for x in range(image.width()))
        rows[str(d)] = max(rows.get(str(d), 0.0), row)
    for d in range(4):
        column = max(appearance.luminance(image.pixelColor(image.width() - 1 - d, y))
                     for y in range(image.height() // 2, image.height()))
        columns[str(d)] = max(columns.get(str(d), 0.0), column)
window = appearance.luminance(shell.window.palette().color(QPalette.ColorRole.Window))
print(json.dumps({"size": [image.width(), image.height()], "ratio": image.devicePixelRatio(),
                  "tabs": shell.window.tabs.count(), "window": window, "rows": rows, "columns": columns}))
shell.shutdown()
"""


@pytest.mark.parametrize("scale", ["1", "2"])
def test_the_dark_windows_bottom_rows_are_dark_at_100_and_200_percent(tmp_path: Path, scale: str) -> None:
    """The reported light strip: every pixel of the bottom six rows (and the lower right edge, where a
    size grip would be) of the real window, dark theme, on every tab, stays dark (under 0.2 luminance;
    the window is 0.01, the lightest border Fusion draws here 0.15)."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "KVSWITCH_"))}
    env.update(HOME=str(home), QT_QPA_PLATFORM="offscreen", QT_SCALE_FACTOR=scale,
               KVSWITCH_NO_ERROR_DIALOGS="1")
    done = subprocess.run([sys.executable, "-c", EDGE_CHILD], capture_output=True, text=True, timeout=180,
                          env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["ratio"] == float(scale)
    assert result["size"][1] >= 600 * int(scale)  # device pixels: the 200% grab is twice as tall
    assert result["window"] < 0.05  # the dark theme's window
    assert result["tabs"] >= 4  # profiles, cache log, verify, usage
    light = {f"row {d}": round(v, 3) for d, v in result["rows"].items() if v >= 0.2}
    light |= {f"column {d}": round(v, 3) for d, v in result["columns"].items() if v >= 0.2}
    assert light == {}, light
