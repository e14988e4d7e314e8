"""The shell lines of README.md and docs/*.md, and their documented synopsis syntax turned into argv.

The docs show commands in two ways: concrete lines (``kvswitch use local``) and synopses with
``[optional]`` parts, ``a|b`` alternatives, ``[--json | --csv]`` choices and UPPERCASE placeholders.
Every expansion of a synopsis is parsed; a few of them, which between them use every optional part and
every alternative, are also run (running all of them would multiply client sessions for nothing).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHELL_FENCES = {"sh", "bash", "console", "shell"}


@dataclass(frozen=True)
class DocLine:
    """One shell line of a page (comment removed, ``$ `` prompt removed)."""

    page: str  # "README.md", "docs/verify.md"
    line: int  # 1-based
    text: str
    fenced: bool  # False: an inline `kvswitch ...` span in prose

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _strip_comment(text: str) -> str:
    return re.sub(r"(^|\s)#.*$", "", text).strip()


def shell_lines(page: Path) -> list[DocLine]:
    """Every non-empty shell line of the page's sh/bash/console fences, in order (``\\`` joined)."""
    name = page.relative_to(REPO).as_posix()
    found: list[DocLine] = []
    fence: str | None = None
    pending = ""
    start = 0
    for number, raw in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        opening = re.match(r"^\s*```\s*(\S*)", raw)
        if opening:
            fence = opening.group(1) if fence is None else None
            continue
        if fence not in SHELL_FENCES:
            continue
        text = raw.strip()
        if text.startswith("$ "):
            text = text[2:]
        text = _strip_comment(text)
        if not text and not pending:
            continue
        if not pending:
            start = number
        if text.endswith("\\"):
            pending += text[:-1] + " "
            continue
        found.append(DocLine(name, start, (pending + text).strip(), True))
        pending = ""
    return found


def inline_commands(page: Path) -> list[DocLine]:
    """`kvswitch ...` code spans in prose (outside fences): parsed, never run."""
    name = page.relative_to(REPO).as_posix()
    found: list[DocLine] = []
    fenced = False
    for number, raw in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if re.match(r"^\s*```", raw):
            fenced = not fenced
            continue
        if fenced:
            continue
        for span in re.findall(r"`(kvswitch(?: [^`]*)?)`", raw):
            found.append(DocLine(name, number, span.strip(), False))
    return found


# --- synopsis syntax --------------------------------------------------------------------------------

Node = str | list  # a literal word, or a choice: a list of alternatives, each a list of nodes


def parse_synopsis(text: str) -> list[Node]:
    """Words, ``[...]`` optional groups (alternatives split by `` | ``) and ``a|b`` word choices."""
    nodes, rest = _parse_sequence(text.split(), 0)
    if rest != len(text.split()):
        raise ValueError(f"unbalanced brackets in {text!r}")
    return nodes


def _tokens(words: list[str]) -> list[str]:
    out: list[str] = []
    for word in words:
        while word.startswith("[") and len(word) > 1:
            out.append("[")
            word = word[1:]
        closing = 0
        while word.endswith("]") and len(word) > 1 and word.count("[") < word.count("]"):
            word = word[:-1]
            closing += 1
        out.append(word)
        out.extend("]" * closing)
    return out


def _parse_sequence(words: list[str], index: int) -> tuple[list[Node], int]:
    tokens = _tokens(words)
    nodes, end = _sequence(tokens, 0, top=True)
    return nodes, len(words) if end == len(tokens) else end


def _sequence(tokens: list[str], index: int, top: bool) -> tuple[list[Node], int]:
    nodes: list[Node] = []
    while index < len(tokens):
        token = tokens[index]
        if token == "]" or (token == "|" and not top):
            return nodes, index
        if token == "[":
            alternatives: list[list[Node]] = [[]]
            index += 1
            while True:
                branch, index = _sequence(tokens, index, top=False)
                alternatives.append(branch)
                if index >= len(tokens):
                    raise ValueError("an unclosed [")
                if tokens[index] == "]":
                    index += 1
                    break
                index += 1  # "|"
            nodes.append(alternatives)
            continue
        if "|" in token and token != "|":
            nodes.append([[word] for word in token.split("|")])
        else:
            nodes.append(token)
        index += 1
    return nodes, index


def every_expansion(nodes: list[Node]) -> list[list[str]]:
    """Every concrete word list the synopsis allows."""
    results: list[list[str]] = [[]]
    for node in nodes:
        if isinstance(node, str):
            results = [words + [node] for words in results]
        else:
            tails = [tail for branch in node for tail in every_expansion(branch)]
            results = [words + tail for words in results for tail in tails]
    return results


def covering_expansions(nodes: list[Node]) -> list[list[str]]:
    """A few expansions that between them take every optional part and every alternative once.

    Expansion ``k`` takes alternative ``min(k, n - 1)`` of each choice (0 = leave an optional part out)
    and passes ``k - taken`` into what it took, so nested choices are covered too.
    """
    seen: list[list[str]] = []
    for k in range(12):
        words = _render(nodes, k)
        if words not in seen:
            seen.append(words)
    return seen


def _render(nodes: list[Node], k: int) -> list[str]:
    words: list[str] = []
    for node in nodes:
        if isinstance(node, str):
            words.append(node)
        else:
            taken = min(k, len(node) - 1)
            words.extend(_render(node[taken], k - taken))
    return words
