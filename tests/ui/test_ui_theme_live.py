"""A live theme change reaches every part of the window (issue 38, item 8): the client filter's
buttons, drawn through a style sheet, follow the new palette instead of staying light."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QColor

from kvswitch.ui.profiles.client_filter import ClientFilter
from kvswitch.ui.widgets import appearance


def _lightness_of_button(qtbot: Any, switcher: ClientFilter, client: str | None) -> float:
    button = switcher.buttons[client]
    image = button.grab().toImage()
    # a pixel inside the button, off its text and its frame
    return QColor(image.pixel(3, image.height() // 2)).lightnessF()


def test_the_client_filter_follows_a_live_switch_to_dark(qtbot: Any, qapp: Any) -> None:
    appearance.apply_theme("light")
    try:
        switcher = ClientFilter()
        qtbot.addWidget(switcher)
        switcher.show()
        qtbot.waitExposed(switcher)
        assert _lightness_of_button(qtbot, switcher, "codex") > 0.7
        appearance.apply_theme("dark")
        qtbot.wait(20)
        assert _lightness_of_button(qtbot, switcher, "codex") < 0.35  # unchecked: the dark button colour
        highlight = qapp.palette().highlight().color()
        image = switcher.buttons[None].grab().toImage()
        assert QColor(image.pixel(3, image.height() // 2)).name() == highlight.name()  # checked: the accent
    finally:
        appearance.apply_theme("light")
