"""Colours and icons derived from the palette, so dark mode needs no second colour table.

Verdict colours are blended towards the window text colour's contrast, which keeps red/amber/green
readable on both a light and a dark background (the Frescobaldi ``logformats()`` idea).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6 import QtCore
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QGuiApplication,
    QIcon,
    QPainter,
    QPainterPath,
    QPalette,
    QPen,
    QPixmap,
)

from kvswitch.core.errors import KvSwitchError
from kvswitch.core.resources import app_icon_path
from kvswitch.ui.cache_state import CacheState
from kvswitch.ui.widgets.appearance import readable

_BASE = {
    CacheState.HIT: QColor(26, 140, 58),
    CacheState.PARTIAL: QColor(196, 132, 10),
    CacheState.MISS: QColor(218, 54, 51),
    CacheState.UNKNOWN: QColor(128, 128, 128),
}


def as_state(value: object) -> CacheState:
    """Any verdict spelling (``hit``, ``HIT``, an enum) as a state; unknown values are UNKNOWN."""
    text = str(getattr(value, "value", value) or "").lower()
    try:
        return CacheState(text)
    except ValueError:
        return CacheState.UNKNOWN


def palette() -> QPalette:
    return QGuiApplication.palette()


def is_dark(pal: QPalette | None = None) -> bool:
    """Dark when the window background is darker than its text (the palette in force decides: the
    app sets its own, see ``appearance``, whatever the platform reports)."""
    pal = pal or palette()
    window = pal.color(QPalette.ColorRole.Window)
    return window.lightness() < pal.color(QPalette.ColorRole.WindowText).lightness()


def state_color(state: CacheState | str, pal: QPalette | None = None) -> QColor:
    """A verdict colour tuned for the current background (memoised per palette: tables ask per cell)."""
    pal = pal or palette()
    key = (as_state(state), _palette_key(pal))
    found = _COLOR_CACHE.get(key)
    if found is None:
        color = QColor(_BASE[key[0]])
        color = color.lighter(150) if is_dark(pal) else color.darker(130)
        # text in this colour sits on Base (tables, cards) or a tint of it: 4.5:1 against both
        background = _blend(key[0], pal, QColor(_BASE[key[0]]))
        found = readable(readable(color, pal.color(QPalette.ColorRole.Base)), background)
        if len(_COLOR_CACHE) > 256:
            _COLOR_CACHE.clear()
        _COLOR_CACHE[key] = found
    return QColor(found)


_COLOR_CACHE: dict[tuple[CacheState, tuple[int, int, int]], QColor] = {}
_TINT_CACHE: dict[tuple[CacheState, tuple[int, int, int]], QColor] = {}


def _palette_key(pal: QPalette) -> tuple[int, int, int]:
    """The colours a derived colour depends on (a palette's cacheKey is not unique across palettes)."""
    return (pal.color(QPalette.ColorRole.Base).rgb(), pal.color(QPalette.ColorRole.Window).rgb(),
            pal.color(QPalette.ColorRole.Text).rgb())


def _scheme() -> int:
    hints = QGuiApplication.styleHints()
    return int(hints.colorScheme().value) if hints is not None else 0


def timing_color(pal: QPalette | None = None) -> QColor:
    pal = pal or palette()
    link = pal.color(QPalette.ColorRole.Link)
    return link.lighter(140) if is_dark(pal) else link


def muted_color(pal: QPalette | None = None) -> QColor:
    """Secondary text (a card's host · model line, section headers): quieter than Text, still 4.5:1.

    (The palette's disabled text colour, used before, is #bebebe on white in Fusion: 1.9:1.)
    """
    pal = pal or palette()
    text, base = pal.color(QPalette.ColorRole.Text), pal.color(QPalette.ColorRole.Base)
    mixed = QColor(round(text.red() * 0.6 + base.red() * 0.4), round(text.green() * 0.6 + base.green() * 0.4),
                   round(text.blue() * 0.6 + base.blue() * 0.4))
    return readable(readable(mixed, base), pal.color(QPalette.ColorRole.Window))


def tinted_background(state: CacheState | str, pal: QPalette | None = None) -> QColor:
    """A faint row background for a verdict, blended into the base colour."""
    pal = pal or palette()
    key = (as_state(state), _palette_key(pal))
    found = _TINT_CACHE.get(key)
    if found is None:
        found = _blend(state, pal)
        if len(_TINT_CACHE) > 256:
            _TINT_CACHE.clear()
        _TINT_CACHE[key] = found
    return QColor(found)


def _blend(state: CacheState | str, pal: QPalette, tint: QColor | None = None) -> QColor:
    base = pal.color(QPalette.ColorRole.Base)
    tint = tint if tint is not None else state_color(state, pal)
    alpha = 0.22 if is_dark(pal) else 0.14
    return QColor(
        round(base.red() * (1 - alpha) + tint.red() * alpha),
        round(base.green() * (1 - alpha) + tint.green() * alpha),
        round(base.blue() * (1 - alpha) + tint.blue() * alpha),
    )


def _paint_base_icon(painter: QPainter, size: int) -> None:
    """The app mark drawn in code: a rounded square with a two-way switch arrow."""
    rect = QRectF(size * 0.06, size * 0.06, size * 0.88, size * 0.88)
    painter.setPen(QtCore.Qt.PenStyle.NoPen)
    painter.setBrush(QBrush(QColor(52, 88, 160)))
    painter.drawRoundedRect(rect, size * 0.2, size * 0.2)
    qt = QtCore.Qt
    pen = QPen(QColor(255, 255, 255), max(1.5, size * 0.09), qt.PenStyle.SolidLine, qt.PenCapStyle.RoundCap,
               qt.PenJoinStyle.RoundJoin)
    painter.setPen(pen)
    painter.setBrush(QtCore.Qt.BrushStyle.NoBrush)
    s = size
    for y, left_to_right in ((0.36, True), (0.64, False)):
        x0, x1 = (0.26, 0.74) if left_to_right else (0.74, 0.26)
        painter.drawLine(QPointF(s * x0, s * y), QPointF(s * x1, s * y))
        head = QPainterPath()
        dx = -0.11 if left_to_right else 0.11
        head.moveTo(s * (x1 + dx), s * (y - 0.09))
        head.lineTo(s * x1, s * y)
        head.lineTo(s * (x1 + dx), s * (y + 0.09))
        painter.drawPath(head)


def _painted_base(size: int) -> QPixmap:
    pixmap = QPixmap(size, size)
    pixmap.fill(QtCore.Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    _paint_base_icon(painter, size)
    painter.end()
    return pixmap


def _paint_badge(pixmap: QPixmap, state: CacheState) -> QPixmap:
    size = pixmap.width()
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    radius = size * 0.22
    center = QPointF(size - radius - 0.5, size - radius - 0.5)
    painter.setPen(QPen(QColor(255, 255, 255), max(1.0, size * 0.05)))
    painter.setBrush(QBrush(_BASE[state]))
    painter.drawEllipse(center, radius, radius)
    if state == CacheState.UNKNOWN and size >= 32:
        font = QFont()
        font.setBold(True)
        font.setPixelSize(int(radius * 1.5))
        painter.setFont(font)
        painter.drawText(QRectF(center.x() - radius, center.y() - radius, 2 * radius, 2 * radius),
                         QtCore.Qt.AlignmentFlag.AlignCenter, "?")
    painter.end()
    return pixmap


def _resource_pixmap(locate: Callable[[int], Path], size: int) -> QPixmap | None:
    """A bundled PNG when the package ships one, else None (the caller paints instead)."""
    try:
        path = locate(size)
    except (KvSwitchError, OSError, ValueError):  # ResourceNotFoundError when icons are not installed
        return None
    pixmap = QPixmap(str(path))
    return None if pixmap.isNull() else pixmap


_ICON_CACHE: dict[tuple[str, bool], QIcon] = {}


def app_icon() -> QIcon:
    """The application icon: bundled PNGs, or the same mark painted in code."""
    key = ("app", False)
    if key not in _ICON_CACHE:
        icon = QIcon()
        for size in (16, 24, 32, 48, 64, 128, 256):
            pixmap = _resource_pixmap(app_icon_path, size)
            icon.addPixmap(pixmap or _painted_base(size))
        _ICON_CACHE[key] = icon
    return _ICON_CACHE[key]


def state_icon(state: CacheState | str) -> QIcon:
    """The tray icon: KV Switch's own mark (the app icon, so the tray reads as KV Switch) with a state dot
    in the corner — hit, partial, miss — and no dot while the cache is not checked yet."""
    state = as_state(state)
    key = (f"tray-{state.value}", is_dark())
    if key in _ICON_CACHE:
        return _ICON_CACHE[key]
    icon = QIcon()
    for size in (16, 22, 32, 48):
        base = _resource_pixmap(app_icon_path, size) or _painted_base(size)
        if base.width() != size:
            base = base.scaled(size, size, QtCore.Qt.AspectRatioMode.KeepAspectRatio,
                               QtCore.Qt.TransformationMode.SmoothTransformation)
        icon.addPixmap(base if state == CacheState.UNKNOWN else _paint_badge(base, state))
    _ICON_CACHE[key] = icon
    return icon


def marker_icon(active: bool) -> QIcon:
    """A filled dot in the highlight colour for the active profile, an empty slot otherwise."""
    key = (f"marker-{active}", is_dark())
    if key in _ICON_CACHE:
        return _ICON_CACHE[key]
    pixmap = QPixmap(16, 16)
    pixmap.fill(QtCore.Qt.GlobalColor.transparent)
    if active:
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QtCore.Qt.PenStyle.NoPen)
        painter.setBrush(QBrush(palette().color(QPalette.ColorRole.Highlight)))
        painter.drawEllipse(QPointF(8, 8), 5, 5)
        painter.end()
    icon = QIcon(pixmap)
    _ICON_CACHE[key] = icon
    return icon
