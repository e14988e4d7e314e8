"""Recognised reasons why two requests stop sharing a prefix, named in words a user can act on."""

from __future__ import annotations

import re
from typing import Any

from kvswitch.core.strictparse import loads as strict_json
from kvswitch.verify.parts import PromptPart

BILLING_MARKER = b"x-anthropic-billing-header"
ATTRIBUTION_FIX = {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}

_DATE_TIME_RE = re.compile(
    rb"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    rb"|\b\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?\b"
    rb"|\b\d{1,2}/\d{1,2}/\d{2,4}\b"
    rb"|\b1[6-9]\d{8}(?:\d{3})?\b"
    rb"|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? +\d{1,2}"
    rb"|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* +\d{1,2}(?:, *\d{4})?"
)
_RANDOM_ID_RE = re.compile(
    rb"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|\b[0-9a-fA-F]{12,}\b"
)


def _span_covers(data: bytes, pattern: re.Pattern[bytes], at: int) -> bool:
    return any(m.start() <= at <= m.end() for m in pattern.finditer(data))


def name_cause(
    parts_a: list[PromptPart], parts_b: list[PromptPart], index: int, cut: int
) -> tuple[str | None, str | None, dict[str, str] | None]:
    pa, pb = parts_a[index], parts_b[index]
    if BILLING_MARKER in pa.data or BILLING_MARKER in pb.data:
        return (
            "billing_header",
            "Claude Code's x-anthropic-billing-header system block differs between conversations, so the "
            "server re-processes the whole prompt. CLAUDE_CODE_ATTRIBUTION_HEADER=0 removes it.",
            dict(ATTRIBUTION_FIX),
        )
    if pa.label.startswith(("tools", "functions")) and pa.label == pb.label:
        return "tools_changed", _describe_tools_change(pa.data, pb.data), None
    if pa.label == pb.label and _squash(pa.data) == _squash(pb.data):
        return (
            "whitespace",
            "only whitespace differs (spaces, tabs or line breaks) — the tokens still change.",
            None,
        )
    if _span_covers(pa.data, _DATE_TIME_RE, cut) or _span_covers(pb.data, _DATE_TIME_RE, cut):
        return (
            "date_time",
            "a date or time inside the prompt changed; anything after it is re-processed. Move it to the "
            "end of the prompt or keep it fixed.",
            None,
        )
    if _span_covers(pa.data, _RANDOM_ID_RE, cut) or _span_covers(pb.data, _RANDOM_ID_RE, cut):
        return "random_id", "a per-request id (uuid or hex token) inside the prompt changed.", None
    if pb.role == "user" and pb.message_index is not None:
        later = _large_unchanged_after(parts_a, parts_b, index)
        if later is not None:
            label, size = later
            return (
                "user_before_system",
                f"the user's message comes before a large unchanged block ({label}, {size} bytes), "
                "so that block is re-processed every time the user's words differ.",
                None,
            )
    if pa.role == "system" or pb.role == "system":
        return "system_changed", "the system prompt itself changed.", None
    return None, None, None


def _squash(data: bytes) -> bytes:
    return re.sub(rb"(?:\s|\\[ntr])+", b"", data)


def _large_unchanged_after(
    parts_a: list[PromptPart], parts_b: list[PromptPart], index: int
) -> tuple[str, int] | None:
    rest = parts_b[index + 1 :]
    total_rest = sum(len(p.data) for p in rest)
    a_data = {p.data for p in parts_a}
    best: tuple[str, int] | None = None
    for part in rest:
        unchanged = part.data in a_data
        big = len(part.data) >= 1024 and (part.role == "system" or len(part.data) * 4 >= total_rest)
        if unchanged and big and (best is None or len(part.data) > best[1]):
            best = (part.label, len(part.data))
    return best


def _describe_tools_change(a: bytes, b: bytes) -> str:
    try:
        tools_a, tools_b = strict_json(a), strict_json(b)
    except ValueError:
        return "the tools list changed."
    names_a = [_tool_name(t) for t in tools_a] if isinstance(tools_a, list) else []
    names_b = [_tool_name(t) for t in tools_b] if isinstance(tools_b, list) else []
    added = [n for n in names_b if n not in names_a]
    removed = [n for n in names_a if n not in names_b]
    bits = []
    if added:
        bits.append("added " + ", ".join(added))
    if removed:
        bits.append("removed " + ", ".join(removed))
    if not bits and sorted(names_a) == sorted(names_b) and names_a != names_b:
        bits.append("same tools in a different order")
    if not bits and isinstance(tools_a, list) and isinstance(tools_b, list):
        changed = [_tool_name(tb) for ta, tb in zip(tools_a, tools_b, strict=False) if ta != tb]
        if changed:
            bits.append("definition changed: " + ", ".join(changed))
    return "the tools list changed (" + ("; ".join(bits) or "content differs") + ")."


def _tool_name(tool: Any) -> str:
    if isinstance(tool, dict):
        name = tool.get("name") or (tool.get("function") or {}).get("name")
        return str(name) if name else "?"
    return "?"
