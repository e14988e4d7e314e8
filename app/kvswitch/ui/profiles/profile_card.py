"""Profiles drawn as cards: the vendor's logo, name, an "active" badge, vendor or host and model, the last
verdict.

A delegate rather than item widgets: the list stays one model (filtering, keyboard, accessibility work
as for any list) and a hundred profiles cost a hundred paints, not a hundred widget trees. The texts a
card shows come from ``card_lines`` so tests read what the user reads.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QFont, QFontMetrics, QIcon, QMouseEvent, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from kvswitch.ui.i18n import current
from kvswitch.ui.profiles.identity import Identity, card_detail, identity
from kvswitch.ui.profiles.profile_model import IsActiveRole, ProfileRole, VerifyRole
from kvswitch.ui.widgets import theme
from kvswitch.ui.widgets.appearance import readable


def kind_badge(kind: str) -> str:
    """The kind's two letters, as its server module declares them; an unknown kind gets a dot.

    The server registry loads on the first card paint, which comes after the window's first paint
    (the column is built then): the frame never waits for the engines.
    """
    from kvswitch import servers  # noqa: PLC0415

    server = servers.find(kind)
    return server.badge if server is not None else "•"


GLYPH = 34
PAD = 8
#: below the three lines, so the "Use" button stays under the second one, whose line runs full width
BUTTON_ROOM = 4

_Index = QModelIndex | QPersistentModelIndex


def line_height(font: QFont) -> int:
    """A card line's height: Chinese text is drawn in a CJK fallback font taller than the UI font."""
    metrics = QFontMetrics(font)
    return max(metrics.height(), metrics.boundingRect("国Ag").height())


def age_text(when: str, now: dt.datetime | None = None) -> str:
    """``2 min ago`` / ``3 h ago`` / ``5 d ago`` for an ISO time; empty for an unreadable one."""
    try:
        moment = dt.datetime.fromisoformat(when)
    except ValueError:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    seconds = max(0, int(((now or dt.datetime.now(dt.UTC)) - moment).total_seconds()))
    if seconds < 60:
        return QApplication.translate("ProfileCard", "just now")
    units = ((QApplication.translate("ProfileCard", "%1 d ago"), 86400),
             (QApplication.translate("ProfileCard", "%1 h ago"), 3600),
             (QApplication.translate("ProfileCard", "%1 min ago"), 60))
    for unit, size in units:
        if seconds >= size:
            return unit.replace("%1", str(seconds // size))
    return ""


def verdict_line(entry: Any) -> str:
    """The last verify as a card shows it: ``HIT · 2 min ago`` or ``not verified yet``."""
    if entry is None:
        return QApplication.translate("ProfileCard", "not verified yet")
    age = age_text(str(getattr(entry, "time", "")))
    return f"{entry.verdict} · {age}" if age else str(entry.verdict)


def card_lines(index: _Index) -> tuple[str, str, str]:
    """Name, ``<vendor> · <API> · model`` (or ``host · model``) and the verdict line of a row."""
    profile = index.data(ProfileRole)
    name = str(index.data(Qt.ItemDataRole.DisplayRole))
    if profile is None:
        return name, "", ""
    model = profile.model or QApplication.translate("ProfileCard", "default model")
    return name, card_detail(profile.base_url, profile.kind.value, model, current()), verdict_line(
        index.data(VerifyRole))


def card_identity(index: _Index) -> Identity | None:
    """Who the row's profile talks to (vendor or kind), for its glyph; None for a row without a profile."""
    profile = index.data(ProfileRole)
    return identity(profile.base_url, profile.kind.value, current()) if profile is not None else None


def glyph_color(kind: str, pal: QPalette) -> QColor:
    """A stable hue per kind, toned to the palette so dark mode keeps the contrast."""
    from kvswitch import servers  # noqa: PLC0415

    names = sorted(server.name for server in servers.all())
    if kind not in names:
        return theme.muted_color(pal)
    hue = (names.index(kind) * 47) % 360
    color = QColor.fromHsl(hue, 120, 150 if theme.is_dark(pal) else 95)
    return readable(color, pal.color(QPalette.ColorRole.Base))  # its letters are drawn in Base


def card_text_rects(card: QRect, font: QFont, active: bool) -> list[QRect]:
    """Where a card's texts go: the name line (with the "active" badge), vendor or host and model, the
    verdict.

    The first two lines run the card's width (a vendor's line is long: ``<vendor> · <API> ·
    model``); the verdict stops before the "Use" button of an inactive card, which sits below the second
    line. Painting and the contrast test read the same rectangles.
    """
    rect = card.adjusted(PAD, PAD, -PAD, -PAD)
    left = rect.left() + GLYPH + PAD
    line = line_height(font)
    right = rect.right() if active else use_button_rect(card, font).left() - PAD
    rows = [QRect(left, rect.top() + number * (line + 2), rect.right() - left, line) for number in (0, 1)]
    rows.append(QRect(left, rect.top() + 2 * (line + 2), right - left, line))
    return rows


def use_button_rect(card: QRect, font: QFont) -> QRect:
    """Where a card's "Use" button is drawn (bottom right of the card), for painting and clicks."""
    metrics = QFontMetrics(font)
    text = QApplication.translate("ProfileCard", "Use")
    width = metrics.horizontalAdvance(text) + 28
    height = line_height(font) + 6
    inner = card.adjusted(PAD, PAD, -PAD, -PAD)
    return QRect(inner.right() - width + 1, inner.bottom() - height + 1, width, height)


class ProfileCardDelegate(QStyledItemDelegate):
    """Paints a row of ``ProfileListModel`` as a three-line card, with a "Use" button on the inactive ones.

    Signals:
        use_requested(str): the card's "Use" button was clicked (the profile's name).
    """

    use_requested = Signal(str)

    def editorEvent(self, event: QEvent, model: QAbstractItemModel, option: QStyleOptionViewItem,
                    index: _Index) -> bool:
        """A click on "Use" applies the card's profile (one click, as CC Switch's "Enable")."""
        if (event.type() in (QEvent.Type.MouseButtonRelease, QEvent.Type.MouseButtonDblClick)
                and isinstance(event, QMouseEvent) and event.button() == Qt.MouseButton.LeftButton
                and not index.data(IsActiveRole)
                and use_button_rect(option.rect, option.font).contains(event.position().toPoint())):
            if event.type() == QEvent.Type.MouseButtonRelease:
                self.use_requested.emit(str(index.data(Qt.ItemDataRole.DisplayRole)))
            return True
        return super().editorEvent(event, model, option, index)

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        line = line_height(option.font)
        return QSize(220, max(GLYPH, 3 * line + 4 + BUTTON_ROOM) + 2 * PAD)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        self.initStyleOption(option, index)
        option.text = ""
        option.icon = QIcon()
        style = option.widget.style() if option.widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, option, painter, option.widget)
        pal = option.palette
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        text_role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        name, detail, verdict = card_lines(index)
        profile = index.data(ProfileRole)
        kind = profile.kind.value if profile is not None else ""
        rect = option.rect.adjusted(PAD, PAD, -PAD, -PAD)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        glyph = QRect(rect.left(), rect.top(), GLYPH, GLYPH)
        small = QFont(option.font)
        small.setBold(True)
        from kvswitch.ui.widgets import icons  # noqa: PLC0415

        who = card_identity(index)
        logo = icons.logo_icon(who.logo, ink="#1c1e22") if who is not None else None  # on a light tile
        if logo is not None:  # the vendor's (or server's) own logo on a light tile, as CC Switch shows it
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor("#ffffff"))
            painter.drawRoundedRect(glyph, 8, 8)
            logo.paint(painter, glyph.adjusted(5, 5, -5, -5))
        else:  # the vendor's own monogram when the collection has no logo, else the kind's two letters
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(glyph_color(kind, pal))
            painter.drawEllipse(glyph)
            painter.setPen(pal.color(QPalette.ColorRole.Base))
            painter.setFont(small)
            letters = (who.monogram if who is not None else "") or kind_badge(kind)
            painter.drawText(glyph, Qt.AlignmentFlag.AlignCenter, letters)
        left = glyph.right() + PAD
        line = line_height(option.font)
        title = QRect(left, rect.top(), rect.right() - left, line)
        bold = QFont(option.font)
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(pal.color(text_role))
        if index.data(IsActiveRole):
            badge_text = QApplication.translate("ProfileCard", "active")
            metrics = QFontMetrics(small)
            width = metrics.horizontalAdvance(badge_text) + 10
            badge = QRect(title.right() - width, title.top(), width, line)
            painter.setBrush(theme.state_color(theme.CacheState.HIT, pal))
            painter.setPen(Qt.PenStyle.NoPen)
            painter.drawRoundedRect(badge, line / 2, line / 2)
            painter.setPen(pal.color(QPalette.ColorRole.Base))
            painter.setFont(small)
            painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, badge_text)
            title.setRight(badge.left() - 4)
            painter.setFont(bold)
            painter.setPen(pal.color(text_role))
        elided = QFontMetrics(bold).elidedText(name, Qt.TextElideMode.ElideRight, title.width())
        painter.drawText(title, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, elided)
        plain = QFont(option.font)
        plain.setBold(False)  # the model makes the active row's font bold; only its name should be
        active = bool(index.data(IsActiveRole))
        if not active:
            self._paint_use_button(painter, use_button_rect(option.rect, plain), plain, pal, selected)
        painter.setFont(plain)
        muted = pal.color(text_role) if selected else theme.muted_color(pal)
        rows = card_text_rects(option.rect, plain, active)
        for number, text in enumerate((detail, verdict), 1):
            row = rows[number]
            color = muted
            if number == 2 and index.data(VerifyRole) is not None and not selected:
                color = theme.state_color(theme.as_state(index.data(VerifyRole).verdict), pal)
            painter.setPen(color)
            shown = QFontMetrics(plain).elidedText(text, Qt.TextElideMode.ElideRight, row.width())
            painter.drawText(row, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, shown)
        painter.restore()

    @staticmethod
    def _paint_use_button(painter: QPainter, button: QRect, font: QFont, pal: QPalette,
                          selected: bool = False) -> None:
        """A rounded button in the highlight colour: the card's one action (inverted on a selected card,
        which is drawn in the highlight colour itself)."""
        fill, ink = QPalette.ColorRole.Highlight, QPalette.ColorRole.HighlightedText
        if selected:
            fill, ink = ink, fill
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(pal.color(fill))
        radius = button.height() / 2
        painter.drawRoundedRect(button, radius, radius)
        bold = QFont(font)
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(pal.color(ink))
        painter.drawText(button, Qt.AlignmentFlag.AlignCenter, QApplication.translate("ProfileCard", "Use"))
