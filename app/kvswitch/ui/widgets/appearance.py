"""The app's look in one place: the Fusion style, a light and a dark palette, and the contrast rule.

Asking the platform for a colour scheme (``QStyleHints.setColorScheme``) does nothing on a bare X11 or
Wayland desktop, offscreen, or with most Qt platform themes: the window stays light. So KV Switch uses
Fusion everywhere and sets its own palette for the scheme it wants — the one chosen in Settings, or
for "System" the one the OS reports (followed when it changes). Every text colour role is chosen to
reach WCAG's 4.5:1 against the background it is drawn on; ``readable`` pulls any derived colour (a
verdict colour, a muted line) to that contrast.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QApplication,
    QProxyStyle,
    QStyle,
    QStyleFactory,
    QStyleOption,
    QStyleOptionComplex,
    QWidget,
)

log = logging.getLogger("kvswitch.ui.widgets.appearance")

#: WCAG 2 AA for body text
MIN_CONTRAST = 4.5

_R = QPalette.ColorRole
#: the one accent colour per scheme: the selection, the primary button, the chosen client and the links
#: (links take its hue, pulled to 4.5:1 on the page by ``readable``); every other colour is a neutral
#: grey or a verdict's green, amber or red
ACCENT = {"light": "#2160c4", "dark": "#2f6bd0"}
LIGHT = {
    _R.Window: "#f4f5f7", _R.WindowText: "#1c1e22", _R.Base: "#ffffff", _R.AlternateBase: "#eef0f3",
    _R.Text: "#1c1e22", _R.Button: "#e9ebef", _R.ButtonText: "#1c1e22", _R.BrightText: "#ffffff",
    _R.Highlight: ACCENT["light"], _R.HighlightedText: "#ffffff",
    _R.ToolTipBase: "#ffffff", _R.ToolTipText: "#1c1e22", _R.PlaceholderText: "#5f6671",
    _R.Light: "#ffffff", _R.Midlight: "#e2e4e8", _R.Mid: "#b9bdc4", _R.Dark: "#8d929b", _R.Shadow: "#5a5e66",
}
DARK = {
    _R.Window: "#1e2024", _R.WindowText: "#e7e9ec", _R.Base: "#16181b", _R.AlternateBase: "#23262b",
    _R.Text: "#e7e9ec", _R.Button: "#2b2f35", _R.ButtonText: "#e7e9ec", _R.BrightText: "#ffffff",
    _R.Highlight: ACCENT["dark"], _R.HighlightedText: "#ffffff",
    _R.ToolTipBase: "#2b2f35", _R.ToolTipText: "#e7e9ec", _R.PlaceholderText: "#a3a9b3",
    _R.Light: "#3a3f46", _R.Midlight: "#31353b", _R.Mid: "#4a5059", _R.Dark: "#101214", _R.Shadow: "#000000",
}
#: disabled texts: visibly inactive, still legible (WCAG exempts inactive controls from 4.5:1)
DISABLED_TEXT = {"light": "#80868f", "dark": "#7c838d"}


def luminance(color: QColor) -> float:
    """WCAG relative luminance of an sRGB colour (0 black … 1 white)."""
    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4
    return (0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF())
            + 0.0722 * channel(color.blueF()))


def contrast(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio of two colours (1 … 21)."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def readable(color: QColor, background: QColor, minimum: float = MIN_CONTRAST) -> QColor:
    """``color`` with its hue kept, darkened or lightened just enough to reach ``minimum`` on
    ``background``."""
    result = QColor(color)
    towards_light = luminance(background) < 0.18
    for _ in range(40):
        if contrast(result, background) >= minimum:
            return result
        hue, saturation, lightness = result.hslHueF(), result.hslSaturationF(), result.lightnessF()
        lightness = min(1.0, lightness + 0.03) if towards_light else max(0.0, lightness - 0.03)
        result = QColor.fromHslF(max(hue, 0.0), saturation, lightness, result.alphaF())
    return result


def build_palette(scheme: str) -> QPalette:
    """The light or dark palette (``scheme`` is ``light`` or ``dark``)."""
    colors = DARK if scheme == "dark" else LIGHT
    pal = QPalette()
    for role, value in colors.items():
        pal.setColor(QPalette.ColorGroup.All, role, QColor(value))
    link = QColor(ACCENT["dark" if scheme == "dark" else "light"])
    for surface in (_R.Base, _R.Window, _R.AlternateBase, _R.Button, _R.Light, _R.Midlight):
        link = readable(link, QColor(colors[surface]))  # a link reads on every surface it is put on
    pal.setColor(QPalette.ColorGroup.All, _R.Link, link)
    pal.setColor(QPalette.ColorGroup.All, _R.LinkVisited, link)  # no second hue for a link once followed
    disabled = QColor(DISABLED_TEXT["dark" if scheme == "dark" else "light"])
    for role in (_R.WindowText, _R.Text, _R.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, disabled)
    return pal


def system_scheme() -> str:
    """What the OS asks for; ``light`` when it says nothing."""
    hints = QGuiApplication.styleHints()
    if hints is not None and hints.colorScheme() == Qt.ColorScheme.Dark:
        return "dark"
    return "light"


def effective_scheme(choice: str) -> str:
    return choice if choice in ("light", "dark") else system_scheme()


_state: dict[str, str] = {}


def apply_theme(choice: str, app: QApplication | None = None) -> str:
    """Fusion and the palette for ``choice`` (``light``, ``dark`` or ``system``); returns the scheme used.

    The platform is asked too (window decorations follow it where it listens); the palette is set
    either way, so the result never depends on whether it did.
    """
    app = app or QApplication.instance()  # type: ignore[assignment]
    if not isinstance(app, QApplication):
        return "light"
    if not isinstance(app.style(), BorderStyle):
        app.setStyle(BorderStyle())
    hints = QGuiApplication.styleHints()
    schemes = {"light": Qt.ColorScheme.Light, "dark": Qt.ColorScheme.Dark}
    requested = schemes.get(choice, Qt.ColorScheme.Unknown)
    if hints is not None and hasattr(hints, "setColorScheme"):
        if _state.get("choice") != choice:
            hints.setColorScheme(requested)
        if "following" not in _state:
            hints.colorSchemeChanged.connect(_on_hints_color_scheme_changed)
            _state["following"] = "1"
    scheme = effective_scheme(choice)
    _state["choice"] = choice
    _state["scheme"] = scheme
    app.setPalette(build_palette(scheme))
    restyle_all()
    log.info("theme %s: %s palette", choice, scheme)
    return scheme


def current_scheme() -> str:
    return _state.get("scheme", "light")


def _on_hints_color_scheme_changed(_scheme: Qt.ColorScheme) -> None:
    """The OS switched light/dark: follow it when the setting is "System"."""
    if _state.get("choice", "system") == "system":
        scheme = system_scheme()
        app = QApplication.instance()
        if isinstance(app, QApplication) and scheme != _state.get("scheme"):
            _state["scheme"] = scheme
            app.setPalette(build_palette(scheme))
            restyle_all()


def style_primary(button: QWidget) -> None:
    """The one action a form is for (Save, Use), in the highlight colour; follows the palette."""
    button.setProperty("primary", True)
    _restyle_primary(button)


def _restyle_primary(button: QWidget) -> None:
    """Fusion draws a button as a gradient lighter than its Button colour (white on it fell to 2.2:1),
    so the primary one gets a flat fill in the palette's own highlight colours."""
    app_pal = QGuiApplication.palette()
    fill = app_pal.color(QPalette.ColorRole.Highlight)
    text = app_pal.color(QPalette.ColorRole.HighlightedText)
    button.setStyleSheet(
        f"QPushButton {{ background: {fill.name()}; color: {text.name()}; font-weight: bold;"
        f" border: 1px solid {fill.darker(125).name()}; border-radius: 4px; padding: 4px 16px; }}"
        f" QPushButton:hover {{ background: {fill.lighter(110).name()}; }}"
        f" QPushButton:disabled {{ background: {app_pal.color(QPalette.ColorRole.Button).name()};"
        f" color: {app_pal.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText).name()}; }}")


def restyle_all() -> None:
    """After a palette change: the primary buttons' fills are made from the palette at the time."""
    for widget in QApplication.allWidgets():
        if widget.property("primary"):
            _restyle_primary(widget)


def style_link_button(button: QWidget) -> None:
    """A flat button that reads as a link ("Undo", "Review changes") in the palette's link colour."""
    pal = button.palette()
    pal.setColor(QPalette.ColorRole.ButtonText, QGuiApplication.palette().color(QPalette.ColorRole.Link))
    button.setPalette(pal)
    font = button.font()
    font.setUnderline(True)
    button.setFont(font)


# -- control borders -------------------------------------------------------------------------------
#
# Control borders that can be seen: Fusion with its frames redrawn at 3:1 against the window.
#
# Fusion draws the outline of a line edit, a button, a combo box or a check box in the window colour made
# a little darker; on the dark palette that is near-black on near-black (about 1.3:1), so the controls had
# no visible edge, and WCAG 1.4.11 asks for 3:1 for the boundary of a control. This proxy lets Fusion draw
# everything, then strokes the same rounded rectangle again in ``border_color``: the palette's ``Dark``
# (light scheme) or ``Light`` (dark scheme) role, adjusted until it reaches 3:1 against ``Window``.

#: WCAG 2 AA for the boundary of a user-interface component
MIN_BORDER_CONTRAST = 3.0
_FRAMED = (QStyle.PrimitiveElement.PE_FrameLineEdit, QStyle.PrimitiveElement.PE_PanelButtonCommand,
           QStyle.PrimitiveElement.PE_IndicatorCheckBox)
_FRAMED_COMPLEX = (QStyle.ComplexControl.CC_ComboBox, QStyle.ComplexControl.CC_SpinBox)


def border_color(pal: QPalette, behind: QColor | None = None) -> QColor:
    """The frame colour for this palette: 3:1 against what is behind the control (the window, unless
    told otherwise: the profile cards sit on the list's base)."""
    window = behind if behind is not None else pal.color(QPalette.ColorRole.Window)
    dark = window.lightnessF() < 0.5
    start = pal.color(QPalette.ColorRole.Light if dark else QPalette.ColorRole.Dark)
    return readable(start, window, MIN_BORDER_CONTRAST)


class BorderStyle(QProxyStyle):
    """Fusion, with control frames stroked in ``border_color``."""

    def __init__(self) -> None:
        super().__init__(QStyleFactory.create("Fusion"))
        self.setObjectName("fusion")

    def name(self) -> str:  # the app and its tests ask for Fusion by name
        return "Fusion"

    def drawPrimitive(self, element: QStyle.PrimitiveElement, option: QStyleOption, painter: QPainter,
                      widget: QWidget | None = None) -> None:
        super().drawPrimitive(element, option, painter, widget)
        if element in _FRAMED and option.rect.width() > 4 and _drawn_frame(widget):
            self._stroke(painter, option)

    def drawComplexControl(self, control: QStyle.ComplexControl, option: QStyleOptionComplex,
                           painter: QPainter, widget: QWidget | None = None) -> None:
        super().drawComplexControl(control, option, painter, widget)
        if control in _FRAMED_COMPLEX and getattr(option, "frame", True) and option.rect.width() > 4:
            self._stroke(painter, option)

    @staticmethod
    def _stroke(painter: QPainter, option: QStyleOption) -> None:
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(border_color(option.palette), 1.0))
        painter.setBrush(QColor(0, 0, 0, 0))
        painter.drawRoundedRect(QRectF(option.rect).adjusted(0.5, 0.5, -0.5, -0.5), 2.5, 2.5)
        painter.restore()


def _drawn_frame(widget: QWidget | None) -> bool:
    """A flat button (links in the message bar, tool buttons raised on hover) keeps no frame."""
    flat = getattr(widget, "isFlat", None)
    return not (callable(flat) and flat())
