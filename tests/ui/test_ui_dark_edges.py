"""No light strip along the window's edges in the dark theme (issue 38, item 8): a tab page's own tab
widget drew its pane frame (a 3:1 border, as controls get) flush with the window's bottom and sides, a
grey line around the dark window. Every tab of the real window is shown and its bottom edge read."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QColor

from kvswitch.ui.widgets import appearance


def test_no_tab_draws_a_light_line_along_the_bottom_edge_in_dark(qtbot: Any, window: Any, qapp: Any) -> None:
    appearance.apply_theme("dark")
    try:
        window.resize(1180, 760)
        window.build_tabs()
        background = qapp.palette().window().color().lightness()
        lines = {}
        for index in range(window.tabs.count()):
            window.tabs.setCurrentIndex(index)
            qtbot.wait(20)
            image = window.grab().toImage()
            bottom = [QColor(image.pixel(x, y)).lightness()  # the last six rows, every fifth pixel
                      for y in range(image.height() - 6, image.height()) for x in range(0, image.width(), 5)]
            lines[window.tabs.tabText(index)] = max(bottom) - background
        assert len(lines) >= 7  # Profiles … Prompts and skills
        assert all(excess <= 12 for excess in lines.values()), sorted(lines.items())
    finally:
        appearance.apply_theme("light")
