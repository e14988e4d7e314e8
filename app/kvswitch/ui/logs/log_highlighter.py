"""Colours log lines by what the classifier says they are (hit / partial / miss / timing / errors).

Formats come from the palette (Frescobaldi's ``logformats()`` idea), so the same code is readable in
light and dark mode. Lines the worker already classified are looked up instead of classified twice.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from PySide6.QtGui import QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument

from kvswitch.ui.widgets import theme

KNOWN_CAP = 20000


class LogHighlighter(QSyntaxHighlighter):
    def __init__(self, document: QTextDocument, kind_hint: str | None = None):
        super().__init__(document)
        self.kind_hint = kind_hint
        self._known: OrderedDict[str, Any] = OrderedDict()
        self.refresh_formats()

    def refresh_formats(self) -> None:
        """Rebuild the formats from the current palette (called again when the palette changes)."""
        from kvswitch.logs import LineKind  # noqa: PLC0415

        def fmt(color: Any, bold: bool = False) -> QTextCharFormat:
            result = QTextCharFormat()
            result.setForeground(color)
            if bold:
                result.setFontWeight(QFont.Weight.Bold)
            return result

        self.line_formats = {
            LineKind.HIT: fmt(theme.state_color(theme.CacheState.HIT)),
            LineKind.PARTIAL: fmt(theme.state_color(theme.CacheState.PARTIAL)),
            LineKind.MISS: fmt(theme.state_color(theme.CacheState.MISS)),
            LineKind.TIMING: fmt(theme.timing_color()),
            LineKind.ERROR: fmt(theme.state_color(theme.CacheState.MISS)),
            LineKind.WARNING: fmt(theme.state_color(theme.CacheState.PARTIAL)),
        }
        self.span_formats = {kind: fmt(f.foreground().color(), True) for kind, f in self.line_formats.items()}
        self.rehighlight()

    def remember(self, lines: list[Any]) -> None:
        """Pre-classified lines about to be inserted (bounded; oldest forgotten)."""
        for line in lines:
            self._known[line.text] = line
        while len(self._known) > KNOWN_CAP:
            self._known.popitem(last=False)

    def classified(self, text: str) -> Any:
        found = self._known.get(text)
        if found is not None:
            return found
        from kvswitch.logs import classify_line  # noqa: PLC0415

        return classify_line(text, self.kind_hint)

    def highlightBlock(self, text: str) -> None:
        if not text:
            return
        line = self.classified(text)
        line_format = self.line_formats.get(line.kind)
        if line_format is not None:
            self.setFormat(0, len(text), line_format)
        for start, end, kind in line.spans:
            span_format = self.span_formats.get(kind)
            if span_format is not None and 0 <= start < end:
                self.setFormat(start, min(end, len(text)) - start, span_format)
