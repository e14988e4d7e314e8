"""Profiles drawn as wide cards: the vendor's logo, name, a badge per client running it now, vendor or host
and model with the endpoint, the last verdict and the gateway's hit rate, and one-click Use.

*Live* is the loud state (a tinted card with a coloured edge and filled client pills); the selection is a
quiet outline, so the card being edited never outshines the one in use.

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
    QRectF,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QFont, QFontMetrics, QMouseEvent, QPainter, QPalette, QPen
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from kvswitch.ui.i18n import current
from kvswitch.ui.profiles.card_badges import (
    Badge,
    badge_label,
    badges,
    endpoint_text,
    marks,
    usage_line,
    verdict_word,
)
from kvswitch.ui.profiles.identity import Identity, card_detail, identity
from kvswitch.ui.profiles.profile_model import IsActiveRole, LiveRole, ProfileRole, UsageRole, VerifyRole
from kvswitch.ui.widgets import appearance, theme
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
    word = verdict_word(entry.verdict)
    return f"{word} · {age}" if age else word


def card_lines(index: _Index) -> tuple[str, str, str]:
    """Name, ``<vendor> · <API> · model`` (or ``host · model``) and the verdict line of a row (the last
    verify, then the gateway's hit rate when requests went through it)."""
    profile = index.data(ProfileRole)
    name = str(index.data(Qt.ItemDataRole.DisplayRole))
    if profile is None:
        return name, "", ""
    model = profile.model or QApplication.translate("ProfileCard", "default model")
    entry = index.data(VerifyRole)
    usage = usage_line(index.data(UsageRole))
    verdict = verdict_line(entry) if entry is not None or not usage else ""
    third = " · ".join(part for part in (verdict, usage) if part)
    return name, card_detail(profile.base_url, profile.kind.value, model, current()), third


def card_badges(index: _Index) -> list[Badge]:
    """The clients running the row's profile now, as its pills read."""
    return badges(index.data(LiveRole) or [])


def card_marks(index: _Index) -> list[Badge]:
    """The row's quiet pills after the live ones: the clients it is for, not running it now, and the
    gateway when it goes through it (every card says which client it is for)."""
    profile = index.data(ProfileRole)
    if profile is None:
        return []
    return marks(profile.targets, profile.via_gateway, index.data(LiveRole) or [])


def card_endpoint(index: _Index) -> str:
    """The endpoint a vendor's card shows at the right of its second line (a local card's line has it)."""
    profile = index.data(ProfileRole)
    if profile is None:
        return ""
    detail = card_detail(profile.base_url, profile.kind.value, "", current())
    host = endpoint_text(profile.base_url)
    return "" if detail.startswith(host.split("/")[0]) else host


def shows_use(index: _Index) -> bool:
    """A card has its Use button unless every client running it matches it (a differing one re-applies)."""
    return not index.data(IsActiveRole) or any(b.differs for b in card_badges(index))


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


LIVE_TINT_ALPHA = 40


def card_background(pal: QPalette, active: bool) -> QColor:
    """The colour a card's text sits on: the list's base, tinted with the live colour on a live card."""
    base = pal.color(QPalette.ColorRole.Base)
    if not active:
        return base
    live = theme.state_color(theme.CacheState.HIT, pal)
    a = LIVE_TINT_ALPHA / 255

    def mix(ours: float, theirs: float) -> float:
        return ours * (1 - a) + theirs * a

    return QColor.fromRgbF(mix(base.redF(), live.redF()), mix(base.greenF(), live.greenF()),
                           mix(base.blueF(), live.blueF()))


class ProfileCardDelegate(QStyledItemDelegate):
    """Paints a row of ``ProfileListModel`` as a three-line card, with a "Use" button unless it is live
    everywhere it is applied.

    Signals:
        use_requested(str): the card's "Use" button was clicked (the profile's name).
    """

    use_requested = Signal(str)

    def editorEvent(self, event: QEvent, model: QAbstractItemModel, option: QStyleOptionViewItem,
                    index: _Index) -> bool:
        """A click on "Use" applies the card's profile (one click, as CC Switch's "Enable")."""
        if (event.type() in (QEvent.Type.MouseButtonRelease, QEvent.Type.MouseButtonDblClick)
                and isinstance(event, QMouseEvent) and event.button() == Qt.MouseButton.LeftButton
                and shows_use(index)
                and use_button_rect(option.rect, option.font).contains(event.position().toPoint())):
            if event.type() == QEvent.Type.MouseButtonRelease:
                self.use_requested.emit(str(index.data(Qt.ItemDataRole.DisplayRole)))
            return True
        return super().editorEvent(event, model, option, index)

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        line = line_height(option.font)
        # the width is the list's (no sideways scrolling): a card fills the view however wide it is
        return QSize(260, max(GLYPH, 3 * line + 4 + BUTTON_ROOM) + 2 * PAD + 4)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        self.initStyleOption(option, index)
        pal = option.palette
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        active = bool(index.data(IsActiveRole))
        name, detail, verdict = card_lines(index)
        profile = index.data(ProfileRole)
        kind = profile.kind.value if profile is not None else ""
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        self._paint_frame(painter, option.rect, pal, selected, active)
        rect = option.rect.adjusted(PAD, PAD, -PAD, -PAD)
        glyph = QRect(rect.left(), rect.top(), GLYPH, GLYPH)
        small = QFont(option.font)
        small.setBold(True)
        self._paint_glyph(painter, glyph, index, kind, pal, small)
        text_color = pal.color(QPalette.ColorRole.Text)
        plain = QFont(option.font)
        plain.setBold(False)  # the model makes the active row's font bold; only its name should be
        rows = card_text_rects(option.rect, plain, not shows_use(index))
        title = QRect(rows[0])
        right = title.right()
        for badge in reversed([*card_badges(index), *card_marks(index)]):  # right to left, live leftmost
            pill = self._paint_badge(painter, badge, right, title, small, pal)
            right = pill.left() - 4
        title.setRight(right)
        bold = QFont(option.font)
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(text_color)
        elided = QFontMetrics(bold).elidedText(name, Qt.TextElideMode.ElideRight, max(0, title.width()))
        painter.drawText(title, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, elided)
        if shows_use(index):
            self._paint_use_button(painter, use_button_rect(option.rect, plain), plain, pal)
        painter.setFont(plain)
        background = card_background(pal, active)
        muted = readable(theme.muted_color(pal), background)
        metrics = QFontMetrics(plain)
        endpoint = card_endpoint(index)
        second = QRect(rows[1])
        room = second.width() - metrics.horizontalAdvance(detail) - 24
        if endpoint and metrics.horizontalAdvance(endpoint) < room:
            painter.setPen(muted)
            painter.drawText(second, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, endpoint)
            second.setRight(second.right() - metrics.horizontalAdvance(endpoint) - 16)
        painter.setPen(muted)
        painter.drawText(second, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                         metrics.elidedText(detail, Qt.TextElideMode.ElideRight, second.width()))
        entry = index.data(VerifyRole)
        color = theme.state_color(theme.as_state(entry.verdict), pal) if entry is not None else muted
        painter.setPen(readable(color, background))
        painter.drawText(rows[2], Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                         metrics.elidedText(verdict, Qt.TextElideMode.ElideRight, rows[2].width()))
        painter.restore()

    @staticmethod
    def _paint_frame(painter: QPainter, card: QRect, pal: QPalette, selected: bool, active: bool) -> None:
        """A live card is tinted with a coloured left edge (loud); a selected one is outlined in the
        highlight (quiet); every card has an outline at 3:1 against the list (WCAG 1.4.11: a card is a
        clickable component, and a fill alone, 1.3:1 on the dark list, does not show where it ends)."""
        frame = card.adjusted(2, 2, -2, -2)
        outline = QRectF(frame).adjusted(0.5, 0.5, -0.5, -0.5)  # a 1 px line on whole pixels
        live = theme.state_color(theme.CacheState.HIT, pal)
        painter.setPen(Qt.PenStyle.NoPen)
        if active:
            painter.setBrush(card_background(pal, True))
            painter.drawRoundedRect(frame, 8, 8)
            painter.setBrush(live)
            painter.drawRoundedRect(QRect(frame.left(), frame.top() + 6, 4, frame.height() - 12), 2, 2)
        base = pal.color(QPalette.ColorRole.Base)
        pen = QPen(appearance.border_color(pal, base), 1.0)
        if selected:
            highlight = pal.color(QPalette.ColorRole.Highlight)
            pen = QPen(readable(highlight, base, appearance.MIN_BORDER_CONTRAST), 1.5)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(outline, 8, 8)
        painter.setPen(Qt.PenStyle.NoPen)

    @staticmethod
    def _paint_glyph(painter: QPainter, glyph: QRect, index: _Index, kind: str, pal: QPalette,
                     small: QFont) -> None:
        from kvswitch.ui.widgets import icons  # noqa: PLC0415

        who = card_identity(index)
        logo = icons.logo_icon(who.logo, ink="#1c1e22") if who is not None else None  # on a light tile
        painter.setPen(Qt.PenStyle.NoPen)
        if logo is not None:  # the vendor's (or server's) own logo on a light tile, as CC Switch shows it
            painter.setBrush(QColor("#ffffff"))
            painter.drawRoundedRect(glyph, 8, 8)
            logo.paint(painter, glyph.adjusted(5, 5, -5, -5))
            return
        # the vendor's own monogram when the collection has no logo, else the kind's two letters, on a
        # rounded tile like a logo's (a custom kind's plain dot read as a broken image)
        painter.setBrush(glyph_color(kind, pal))
        painter.drawRoundedRect(glyph, 8, 8)
        painter.setPen(pal.color(QPalette.ColorRole.Base))
        painter.setFont(small)
        letters = (who.monogram if who is not None else "") or kind_badge(kind)
        if letters == "•":
            letters = (str(index.data(Qt.ItemDataRole.DisplayRole)) or "?")[:1].upper()
        painter.drawText(glyph, Qt.AlignmentFlag.AlignCenter, letters)

    @staticmethod
    def _paint_badge(painter: QPainter, badge: Badge, right: int, title: QRect, font: QFont,
                     pal: QPalette) -> QRect:
        """A pill ending at ``right``: filled for a live client, outlined amber when it differs, outlined
        and muted for what the profile is for (a client not running it, the gateway)."""
        text = badge_label(badge)
        width = QFontMetrics(font).horizontalAdvance(text) + 14
        pill = QRect(right - width + 1, title.top(), width, title.height())
        radius = pill.height() / 2
        if badge.quiet:
            base = pal.color(QPalette.ColorRole.Base)
            painter.setPen(QPen(appearance.border_color(pal, base), 1.0))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(QRectF(pill).adjusted(0.5, 0.5, -0.5, -0.5), radius, radius)
            painter.setPen(readable(theme.muted_color(pal), base))
        elif badge.differs:
            amber = theme.state_color(theme.CacheState.PARTIAL, pal)
            pen = painter.pen()
            pen.setStyle(Qt.PenStyle.SolidLine)
            pen.setColor(amber)
            pen.setWidthF(1.5)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(pill.adjusted(1, 1, -1, -1), radius, radius)
            painter.setPen(readable(amber, pal.color(QPalette.ColorRole.Base)))
        else:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(theme.state_color(theme.CacheState.HIT, pal))
            painter.drawRoundedRect(pill, radius, radius)
            painter.setPen(pal.color(QPalette.ColorRole.Base))
        painter.setFont(font)
        painter.drawText(pill, Qt.AlignmentFlag.AlignCenter, text)
        return pill

    @staticmethod
    def _paint_use_button(painter: QPainter, button: QRect, font: QFont, pal: QPalette) -> None:
        """A rounded button in the highlight colour: the card's one action."""
        fill, ink = QPalette.ColorRole.Highlight, QPalette.ColorRole.HighlightedText
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(pal.color(fill))
        radius = button.height() / 2
        painter.drawRoundedRect(button, radius, radius)
        bold = QFont(font)
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(pal.color(ink))
        painter.drawText(button, Qt.AlignmentFlag.AlignCenter, QApplication.translate("ProfileCard", "Use"))
