"""Text hygiene shared by every reader: ANSI removal, undecodable bytes, runaway line lengths, and the
splitter that turns the bytes a reader gets into complete lines."""

from __future__ import annotations

import re

#: longest line kept; the rest of a longer line is dropped while reading, never held in memory
MAX_LINE_BYTES = 64 * 1024

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def strip_ansi(text: str) -> str:
    """Colour codes out, and other control characters (NUL, CR, BEL) too, so spans index what is shown."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    return _CONTROL.sub("", text) if _CONTROL.search(text) else text


def clean_line(line: str) -> str:
    """One line as the parsers read it: at most ``MAX_LINE_BYTES`` characters, no line ending, no
    colour or control codes (what ``LogAnalyzer.feed`` and the gateway's log reader both parse)."""
    return strip_ansi(line[:MAX_LINE_BYTES].rstrip("\r\n"))


def decode_line(raw: bytes) -> str:
    """Bytes of one line (without its newline) as text; invalid UTF-8 becomes U+FFFD, never an error."""
    if len(raw) > MAX_LINE_BYTES:
        raw = raw[:MAX_LINE_BYTES]
    return raw.decode("utf-8", errors="replace")


class LineSplitter:
    """Bytes in, complete decoded lines out; keeps at most ``MAX_LINE_BYTES`` of any line."""

    def __init__(self) -> None:
        self._partial = b""
        self._overlong = False  # the current line was already cut and emitted; drop until its newline

    def feed(self, data: bytes) -> list[str]:
        lines: list[str] = []
        if not data:
            return lines
        data = self._partial + data if self._partial else data
        parts = data.split(b"\n")
        self._partial = parts.pop()
        for part in parts:
            if self._overlong:
                self._overlong = False
                continue
            lines.append(_decode(part))
        if len(self._partial) > MAX_LINE_BYTES:
            if not self._overlong:
                lines.append(_decode(self._partial))
            self._overlong = True
            self._partial = b""
        return lines

    def finish(self) -> list[str]:
        """The held-back partial line, for a stream that has ended (a process that exited)."""
        partial, self._partial = self._partial, b""
        overlong, self._overlong = self._overlong, False
        return [_decode(partial)] if partial and not overlong else []


def _decode(raw: bytes) -> str:
    return raw[:MAX_LINE_BYTES].decode("utf-8", errors="replace").rstrip("\r")
