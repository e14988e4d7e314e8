"""A request's prompt as a short list of part hashes: what the live cache record remembers instead of bodies.

The gateway keeps, per session, only this digest of each request (8 bytes per part, 4 bytes per 128-byte
chunk), so memory stays bounded whatever the conversation holds, and no prompt text is kept. Parts follow
the order a chat template renders them: the system blocks (Messages ``system``, Responses
``instructions``), the tools one by one, then every message's content blocks. ``cache_control`` markers
are left out of the hash: Claude Code moves them between turns and they never reach the rendered prompt.

A text block is hashed as its string; any other block is serialised once with the C JSON encoder (no
key sorting: a reordered key changes the rendered prompt too). Hashes are Python's own 64-bit string
hash (SipHash, seeded per process: the digests live only in this process's memory), which costs a
quarter of encoding to UTF-8 and running BLAKE2b on a 14K-token request; the chunk hashes let a later
request name the character where a changed part first differs without keeping the part. Sizes and
offsets count characters of that text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

#: the granularity of the first-difference offset inside a part (characters) …
CHUNK = 256
#: … and the most chunk hashes kept per part (a longer part gets longer chunks)
MAX_CHUNKS = 32
#: Claude Code's attribution block (``cc_version=…``) starts with this; its fingerprint differs per
#: conversation
BILLING_MARKER = "x-anthropic-billing-header"
REMINDER_MARKER = "<system-reminder>"
#: roles whose messages a template renders as system text
SYSTEM_ROLES = frozenset({"system", "developer"})
#: the longest attribution text kept (the block is about 80 characters)
_ATTRIBUTION_MAX = 160

#: ASCII output: the C encoder is about a third faster with it, and the text is only hashed
_encode = json.JSONEncoder(separators=(",", ":")).encode


@dataclass(frozen=True, slots=True)
class Part:
    """One rendered piece: where it sits (``system[0]``, ``tools[3]``, ``messages[2].content[1]``), its
    kind (system / tools / message / inline_system), its size and hashes."""

    label: str
    kind: str
    size: int
    digest: int
    #: the chunk length and each chunk's hash
    chunk: int
    chunks: tuple[int, ...]
    #: a tool's name, or whether a message block holds a ``<system-reminder>``: what a reason may show
    note: str | None = None


@dataclass(frozen=True, slots=True)
class PromptDigest:
    parts: tuple[Part, ...]
    total: int
    #: the attribution block's text (``cc_version=2.1.332.0b8; cc_entrypoint=cli;``), if the request has one
    attribution: str | None = None
    #: which part holds it
    attribution_part: int | None = None
    #: the parts' hashes, as a set (comparisons with later requests)
    hash_set: frozenset[int] = frozenset()

    def hashes(self) -> list[int]:
        return [part.digest for part in self.parts]


def digest_prompt(body: Any) -> PromptDigest:
    """The digest of a Messages, Chat Completions or Responses request body (anything else: no parts)."""
    builder = _Builder()
    _walk(builder, body)
    return builder.done()


def part_text(body: Any, label: str) -> str | None:
    """The text of one part of ``body`` as the digest hashed it (for a short excerpt), or ``None``."""
    builder = _Builder(want=label)
    _walk(builder, body)
    return builder.wanted


def _walk(builder: _Builder, body: Any) -> None:
    if isinstance(body, dict):
        builder.system(body.get("system"), "system")
        builder.system(body.get("instructions"), "instructions")
        tools = body.get("tools")
        if isinstance(tools, list):
            for i, tool in enumerate(tools):
                builder.add(f"tools[{i}]", "tools", tool, note=_tool_name(tool))
        for key in ("messages", "input"):
            value = body.get(key)
            if isinstance(value, list):
                builder.messages(key, value)
            elif isinstance(value, str):
                builder.add(key, "message", value)
        if isinstance(body.get("prompt"), str | list):
            builder.add("prompt", "message", body["prompt"])


class _Builder:
    """Cuts a body into parts; with ``want`` set it keeps only the text of the part of that label (the
    excerpt of a reason, taken again from the current body rather than kept)."""

    def __init__(self, want: str | None = None) -> None:
        self.want = want
        self.wanted: str | None = None
        self.parts: list[Part] = []
        self.total = 0
        self.attribution: str | None = None
        self.attribution_part: int | None = None

    def system(self, value: Any, key: str) -> None:
        if isinstance(value, str):
            self.add(key, "system", value)
        elif isinstance(value, list):
            for i, block in enumerate(value):
                self.add(f"{key}[{i}]", "system", block)

    def messages(self, key: str, messages: list[Any]) -> None:
        seen_other = False
        for i, message in enumerate(messages):
            if not isinstance(message, dict):
                self.add(f"{key}[{i}]", "message", message)
                continue
            role = message.get("role")
            inline = role in SYSTEM_ROLES
            kind = ("inline_system" if seen_other else "system") if inline else "message"
            seen_other = seen_other or not inline
            content = message.get("content")
            if "content" not in message:  # a Responses item (function_call, reasoning …): the whole item
                self.add(f"{key}[{i}]", kind, message)
                continue
            prefix = f"{role}:" if isinstance(role, str) else ""
            if isinstance(content, list):
                for j, block in enumerate(content):
                    self.add(f"{key}[{i}].content[{j}]", kind, block, prefix=prefix)
            else:
                self.add(f"{key}[{i}].content", kind, content, prefix=prefix)

    def add(self, label: str, kind: str, value: Any, *, prefix: str = "", note: str | None = None) -> None:
        if self.want is not None and label != self.want:
            return
        if isinstance(value, dict):
            if "cache_control" in value:
                value = {k: v for k, v in value.items() if k != "cache_control"}
            if len(value) == 2 and value.get("type") == "text" and isinstance(value.get("text"), str):
                value = value["text"]  # the common block: its text is the part, no encoding needed
        text = value if isinstance(value, str) else _encode(value)
        if self.want is not None:
            self.wanted = text
            return
        if kind == "system" and self.attribution is None and BILLING_MARKER in text[:64]:
            self.attribution, self.attribution_part = _attribution(text), len(self.parts)
        size = len(text)
        chunk = max(CHUNK, -(-size // MAX_CHUNKS))
        # a tool is named by its name when it changes; the other parts keep where they first differ
        chunks = () if kind == "tools" else tuple([hash(text[at:at + chunk]) for at in range(0, size, chunk)])
        digest = hash((prefix, text))
        if note is None and REMINDER_MARKER in text:
            note = "system-reminder"
        self.parts.append(Part(label, kind, size, digest, chunk, chunks, note))
        self.total += size

    def done(self) -> PromptDigest:
        return PromptDigest(tuple(self.parts), self.total, self.attribution, self.attribution_part,
                            frozenset(part.digest for part in self.parts))


def _tool_name(tool: Any) -> str | None:
    if not isinstance(tool, dict):
        return None
    name = tool.get("name")
    if not isinstance(name, str) and isinstance(tool.get("function"), dict):
        name = tool["function"].get("name")
    return name[:64] if isinstance(name, str) else None


def _attribution(text: str) -> str:
    """``cc_version=2.1.332.0b8; cc_entrypoint=cli;``: the block without its marker (no secret in it)."""
    _, _, rest = text.partition(":")
    return (rest or text).strip()[:_ATTRIBUTION_MAX]


def chunk_prefix(a: Part, b: Part) -> int:
    """How many characters at the start of two parts are known equal (whole chunks, at most the shorter)."""
    if a.chunk != b.chunk:
        return 0
    same = 0
    for mine, theirs in zip(a.chunks, b.chunks, strict=False):
        if mine != theirs:
            break
        same += 1
    return min(same * a.chunk, a.size, b.size)
