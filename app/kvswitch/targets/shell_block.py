"""Find, replace and remove KV Switch's managed block in a shell start-up file, as pure text.

The block lives between two marker lines; everything outside it belongs to the user and is kept
character for character (CRLF included). Removing the block must give back exactly the file as it was
before the block was added. The only byte KV Switch ever adds outside its block is the line break it
needs when the file did not end with one; the block then records that fact in a comment line, so the
removal takes that line break away again (unless other tools have appended below the block since).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kvswitch.core.errors import ConfigParseError
from kvswitch.targets.shell_heredoc import heredoc_lines

START_MARKER = "# >>> kvswitch >>>"
END_MARKER = "# <<< kvswitch <<<"
#: Present when KV Switch had to end the user's last line to append the block.
ADDED_BREAK_NOTE = "# (KV Switch ended the line above; removing this block removes that line break too.)"


@dataclass(frozen=True)
class BlockSpan:
    """Where the block sits in the text and how it was laid out.

    Attributes:
        start: index of the first character of the start marker line.
        end: index just past the end marker line (past its line break, if it has one).
        eol: the block's line break (``\\n`` or ``\\r\\n``), kept on every rewrite.
        added_break: the block carries ``ADDED_BREAK_NOTE``.
        final_eol: the end marker line has a line break (false only if someone removed it).
    """

    start: int
    end: int
    eol: str
    added_break: bool
    final_eol: bool

    def text(self, content: str) -> str:
        return content[self.start : self.end]


def _lines(content: str) -> Iterable[tuple[int, int, str]]:
    """(line number from 1, offset, line with its terminator); only LF ends a line, as in every shell."""
    offset = 0
    number = 0
    while offset < len(content):
        number += 1
        newline = content.find("\n", offset)
        end = len(content) if newline < 0 else newline + 1
        yield number, offset, content[offset:end]
        offset = end


def _is_marker(line: str, marker: str) -> bool:
    return line.strip().lstrip("\ufeff").strip() == marker


def find_block(content: str, path: Path | str, dialect: str = "posix") -> BlockSpan | None:
    """Locate the one managed block; ``None`` when there is none.

    Marker lines inside a here-document body (``dialect``: see ``shell_heredoc``) are the user's
    text, not a block.

    Raises:
        ConfigParseError: two blocks, a start without an end or an end without a start; the message
            names the line so the user can repair the file by hand.
    """
    span: BlockSpan | None = None
    open_at: tuple[int, int, str] | None = None  # (line number, offset, eol) of an unclosed start
    added_break = False
    heredocs = heredoc_lines(content, dialect).body
    for number, offset, line in _lines(content):
        if number in heredocs:
            continue
        if _is_marker(line, START_MARKER):
            if open_at is not None:
                raise ConfigParseError(
                    path,
                    f"a second '{START_MARKER}' before the end of the KV Switch block opened on line "
                    f"{open_at[0]}; keep one block (or delete both) and try again",
                    line=number,
                )
            if span is not None:
                raise ConfigParseError(
                    path,
                    "a second KV Switch block; delete one of them (from its start marker to its end "
                    "marker) and try again",
                    line=number,
                )
            eol = "\r\n" if line.endswith("\r\n") else "\n"
            # A byte-order mark belongs to the file, not to the block that happens to start it.
            start = offset + 1 if offset == 0 and line.startswith("\ufeff") else offset
            open_at = (number, start, eol)
            added_break = False
        elif _is_marker(line, END_MARKER):
            if open_at is None:
                raise ConfigParseError(
                    path,
                    f"'{END_MARKER}' without a matching '{START_MARKER}' above it; restore or delete "
                    "the marker line and try again",
                    line=number,
                )
            span = BlockSpan(
                start=open_at[1],
                end=offset + len(line),
                eol=open_at[2],
                added_break=added_break,
                final_eol=line.endswith("\n"),
            )
            open_at = None
        elif open_at is not None and line.strip() == ADDED_BREAK_NOTE:
            added_break = True
    if open_at is not None:
        raise ConfigParseError(
            path,
            f"the KV Switch block starts here but has no '{END_MARKER}' line; add the end marker "
            "after the block (or delete the block) and try again",
            line=open_at[0],
        )
    return span


def detect_eol(content: str) -> str:
    """The file's line break style, judged by its first line; LF for a file with no line break."""
    first = content.find("\n")
    return "\r\n" if first > 0 and content[first - 1] == "\r" else "\n"


def render_block(body: list[str], eol: str, *, added_break: bool, final_eol: bool = True) -> str:
    """The complete block: markers around ``body`` (comment and export lines without line breaks)."""
    lines = [START_MARKER, *([ADDED_BREAK_NOTE] if added_break else []), *body, END_MARKER]
    text = eol.join(lines)
    return text + eol if final_eol else text


def put_block(content: str, body: list[str], path: Path | str, dialect: str = "posix") -> str:
    """``content`` with the block holding ``body``: replaced in place, or appended at the end.

    Raises ``ConfigParseError`` when the file ends inside an unclosed here-document: an appended
    block would be part of its text and never run.
    """
    span = find_block(content, path, dialect)
    if span is not None:
        block = render_block(body, span.eol, added_break=span.added_break, final_eol=span.final_eol)
        return content[: span.start] + block + content[span.end :]
    unclosed = heredoc_lines(content, dialect).unclosed
    if unclosed is not None:
        raise ConfigParseError(
            path,
            "a here-document starts here and is never closed; the KV Switch block appended below it "
            "would be part of its text. Add its end line and try again",
            line=unclosed,
        )
    eol = detect_eol(content)
    if not content or content.endswith("\n"):
        return content + render_block(body, eol, added_break=False)
    return content + eol + render_block(body, eol, added_break=True)


def remove_block(content: str, path: Path | str, dialect: str = "posix") -> str:
    """``content`` without the block (and without the line break KV Switch added for it)."""
    span = find_block(content, path, dialect)
    if span is None:
        return content
    head, tail = content[: span.start], content[span.end :]
    # With text below the block (another tool appended there), the line break now separates the
    # user's last line from that text, so it stays.
    if span.added_break and not tail and head.endswith(span.eol):
        head = head[: -len(span.eol)]
    return head + tail
