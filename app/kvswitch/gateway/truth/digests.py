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

What a digest keeps is bounded by size, not by the body (issue 39: 12 MB of tiny messages kept 100 MB
each). In each section (the system blocks, the tools, the messages) the first ``ONE_BY_ONE`` parts are
kept one by one; later ones are folded into groups whose size doubles every ``ONE_BY_ONE`` groups (2
parts, then 4, 8 …), placed by the part's position in its section only, so a conversation that grows
keeps its earlier groups whole and equal, and a long tool list folds none of the messages. A group is
compared by the hash of its parts' hashes: only that it differs is known, not where inside it, and a
folded tool is not named. A digest holds a few thousand entries whatever the body: 1.3 MB for 17 MB of
tiny messages (132 MB before); ``kept_bytes`` estimates it, ``truth.live_record`` bounds the sum.
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
#: parts kept one by one; then ``ONE_BY_ONE`` groups of 2 parts, ``ONE_BY_ONE`` groups of 4, …
ONE_BY_ONE = 512
#: what one kept entry costs, beyond its label, note and chunk hashes (the object, its hash and size
#: objects, its place in the tuple and the set; measured with tracemalloc: about 330 bytes a tiny part)
ENTRY_BYTES = 240
#: what a chunk hash costs (the int and its place in the tuple)
CHUNK_BYTES = 40

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
    #: how many of the body's parts this entry stands for (more than one: a folded group, labelled by
    #: its first part), and whether the group could hold more (the last of its section: the next request
    #: of a growing conversation has more parts in it)
    members: int = 1
    open: bool = False


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
    #: the hashes of the system parts, and whether the request has tools (what tells a subagent apart)
    system: tuple[int, ...] = ()
    has_tools: bool = False
    #: about how many bytes the digest holds (``ENTRY_BYTES`` and the like: what the ledger's bound counts)
    kept_bytes: int = 0

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
        builder.section()
        if isinstance(tools, list):
            for i, tool in enumerate(tools):
                builder.add(f"tools[{i}]", "tools", tool, note=_tool_name(tool))
        builder.section()
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
        #: parts seen so far, and the folded group being filled: its first index, size, label, kind,
        #: characters and hashes
        self.count = 0
        self.group: tuple[int, int, str, str] | None = None  # first index, capacity, label, kind
        self.group_size = 0
        self.group_hashes: list[int] = []
        self.kept = 0

    def section(self) -> None:
        """The next parts start a section of their own (their positions, for folding, count from 0)."""
        self.close_group()
        self.count = 0

    def system(self, value: Any, key: str) -> None:
        if isinstance(value, str):
            self.add(key, "system", value)
        elif isinstance(value, list):
            for i, block in enumerate(value):
                self.add(f"{key}[{i}]", "system", block)

    def messages(self, key: str, messages: list[Any]) -> None:
        seen_other = False
        for i, message in enumerate(messages):
            if self.wanted is not None:
                return  # the part asked for is read: the rest of a long conversation is not walked
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
        index = self.count
        self.count += 1
        size = len(text)
        self.total += size
        if index >= ONE_BY_ONE:
            self.fold(index, label, kind, size, hash((prefix, text)))
            return
        if kind == "system" and self.attribution is None and BILLING_MARKER in text[:64]:
            self.attribution, self.attribution_part = _attribution(text), len(self.parts)
        chunk = max(CHUNK, -(-size // MAX_CHUNKS))
        # a tool is named by its name when it changes; the other parts keep where they first differ
        chunks = () if kind == "tools" else tuple([hash(text[at:at + chunk]) for at in range(0, size, chunk)])
        digest = hash((prefix, text))
        if note is None and REMINDER_MARKER in text:
            note = "system-reminder"
        self.parts.append(Part(label, kind, size, digest, chunk, chunks, note))
        self.kept += ENTRY_BYTES + len(label) + len(note or "") + CHUNK_BYTES * len(chunks)

    def fold(self, index: int, label: str, kind: str, size: int, digest: int) -> None:
        """Add a part past the first ``ONE_BY_ONE`` to its group (a new group where one starts)."""
        start, capacity = group_of(index)
        if self.group is None or self.group[0] != start:
            self.close_group()
            self.group = (start, capacity, label, kind)
        self.group_size += size
        self.group_hashes.append(digest)

    def close_group(self) -> None:
        if self.group is None:
            return
        _, capacity, label, kind = self.group
        members = len(self.group_hashes)
        self.parts.append(Part(label, kind, self.group_size, hash(tuple(self.group_hashes)), 0, (),
                               None, members, members < capacity))
        self.kept += ENTRY_BYTES + len(label)
        self.group, self.group_size, self.group_hashes = None, 0, []

    def done(self) -> PromptDigest:
        self.close_group()
        parts = tuple(self.parts)
        return PromptDigest(parts, self.total, self.attribution, self.attribution_part,
                            frozenset([part.digest for part in parts]),
                            tuple([part.digest for part in parts if part.kind == "system"]),
                            any(part.kind == "tools" for part in parts), self.kept)


def group_of(index: int) -> tuple[int, int]:
    """The first index and the size of the group that part ``index`` (past ``ONE_BY_ONE``) folds into:
    level ``k`` holds ``ONE_BY_ONE`` groups of ``2**k`` parts, from part ``ONE_BY_ONE * (2**k - 1)`` on."""
    level = (index // ONE_BY_ONE + 1).bit_length() - 1
    base, size = ONE_BY_ONE * ((1 << level) - 1), 1 << level
    return base + (index - base) // size * size, size


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
