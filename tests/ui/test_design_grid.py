"""The design pass (issue 38): one 8 px grid with a 4 px half step, and one accent colour.

The grid is checked on the source, where a stray ``setSpacing(6)`` or ``padding: 3px`` is written, and on
the palette the app really builds, where a second link hue would show.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from kvswitch.ui.widgets import spacing

UI = Path(__file__).resolve().parents[2] / "app" / "kvswitch" / "ui"
LAYOUT_CALLS = {"setContentsMargins", "setSpacing", "setHorizontalSpacing", "setVerticalSpacing",
                "addSpacing"}
#: padding and margin in a style sheet, in pixels (``margin-left: -24px`` in rich text is a list's indent)
STYLE_PIXELS = re.compile(r"(?:padding|margin)(?:-\w+)?\s*:\s*((?:-?\d+px\s*)+)")


def _layout_numbers() -> list[tuple[str, int, int]]:
    found = []
    for path in sorted(UI.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in LAYOUT_CALLS):
                found.extend((path.name, node.lineno, arg.value) for arg in node.args
                             if isinstance(arg, ast.Constant) and isinstance(arg.value, int))
    return found


def _style_numbers() -> list[tuple[str, int]]:
    found = []
    for path in sorted(UI.rglob("*.py")):
        for match in STYLE_PIXELS.finditer(path.read_text(encoding="utf-8")):
            found.extend((path.name, int(word.removesuffix("px"))) for word in match.group(1).split())
    return found


def test_every_margin_and_spacing_in_the_window_is_on_the_grid() -> None:
    numbers = _layout_numbers()
    assert len(numbers) > 20  # the scan sees the layouts (most now name spacing.UNIT and friends)
    off = [(name, line, value) for name, line, value in numbers if value % spacing.HALF]
    assert not off, off
    style = [(name, value) for name, value in _style_numbers() if value >= 0]
    assert style
    assert not [(name, value) for name, value in style if value % spacing.HALF], style


def test_the_grid_names_are_the_grid() -> None:
    assert spacing.UNIT == 8
    assert spacing.HALF * 2 == spacing.UNIT
    assert spacing.EDGE % spacing.UNIT == 0
    assert spacing.PAGE % spacing.UNIT == 0


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_one_accent_colour_in_the_built_palette(qapp: object, scheme: str) -> None:
    from PySide6.QtGui import QColor, QPalette  # noqa: PLC0415

    from kvswitch.ui.widgets import appearance  # noqa: PLC0415

    pal = appearance.build_palette(scheme)
    accent = QColor(appearance.ACCENT[scheme])
    highlight = pal.color(QPalette.ColorRole.Highlight)
    link = pal.color(QPalette.ColorRole.Link)
    assert highlight == accent
    assert pal.color(QPalette.ColorRole.LinkVisited) == link  # no second hue once a link is followed
    assert abs(link.hslHue() - accent.hslHue()) <= 3  # the accent's hue, lightened or darkened to read
    base = pal.color(QPalette.ColorRole.Base)
    assert appearance.contrast(link, base) >= appearance.MIN_CONTRAST
