"""The verdict of one request against what was reusable, and the reason of a miss (pure: digests and
the server's numbers in, a judgement out).

*Reusable* is the part of the prompt the request shares with the earlier request it continues (the
session's own, or whatever last ran on the same upstream when that shares more): every part whose hash
the earlier one also had. Where the request extends the earlier one whole (a continued turn), the
server's own prompt count of the earlier request is that figure; otherwise it is estimated from the
shared parts' share of the prompt's characters. The server's cached count is never more than what it
could reuse, so a count above the estimate raises it. The verdict is ``core.verdicts``' ratios applied
to cached / reusable, and COLD when nothing was reusable.

A request that is not a HIT gets a reason: ``cold``; ``prefix_changed`` (the first part that differs
sits before the end of what was shared: which part, where, and what it looks like); ``evicted`` (the
prefix was intact but was processed again, and other requests ran on the upstream in between: named;
with no one in between, a prompt that does differ is ``prefix_changed`` even when the server stopped
short of the difference);
``expired`` (a cloud vendor, idle past its cache lifetime); ``server`` (the server said, in the log the
profile follows, that it forced the re-processing: ``told_by_server``); ``unknown`` with the raw numbers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kvswitch.core.redact import mask_text
from kvswitch.core.text import printable
from kvswitch.core.verdicts import verdict_for
from kvswitch.gateway.truth.digests import Part, PromptDigest, chunk_prefix
from kvswitch.usage.schema import UsageRow

HIT, PARTIAL, MISS, COLD = "HIT", "PARTIAL", "MISS", "COLD"
COLD_REASON, PREFIX_CHANGED, EVICTED, EXPIRED, SERVER, UNKNOWN = (
    "cold", "prefix_changed", "evicted", "expired", "server", "unknown")
#: fewer reusable tokens than this is a cold start (a chat template's fixed head is about this long)
MIN_REUSABLE = 32
#: reused less than this share of the prefix before the first difference: that prefix was lost, too (a
#: character-based estimate of tokens is only so exact, so the margin is wide)
LOST_SHARE = 0.5
#: a cloud vendor's prompt cache lifetime (the shortest default TTL among the vendors: five minutes)
CLOUD_CACHE_TTL_S = 300.0
#: the longest excerpt shown around a difference
EXCERPT_CHARS = 48
#: tools named in a ``tools_changed`` reason (added, removed), and in a ``reordered_tools`` one; the
#: evidence says how many more (an MCP server can bring thousands)
NAMED_TOOLS, LISTED_TOOLS = 20, 40
#: ``cc_version=<major.minor.patch>.<fingerprint>``: the fingerprint is what changes per conversation
_CC_VERSION = re.compile(r"cc_version=\d+\.\d+\.\d+\.([0-9A-Za-z]{1,16})\s*;")


@dataclass(frozen=True, slots=True)
class Seen:
    """What the ledger remembers of one finished request."""

    session: str | None
    agent: str | None
    upstream: str | None
    digest: PromptDigest
    prompt_tokens: int | None
    cached_tokens: int | None
    at: float
    seq: int


@dataclass(frozen=True, slots=True)
class Overlap:
    #: characters of the current prompt in parts the earlier one also had
    shared: int
    #: the first part (by position) that differs, and the characters before it
    first_diff: int
    leading: int
    #: the current request holds the earlier one whole, at its start
    extends: bool


@dataclass(frozen=True, slots=True)
class Judgement:
    reusable: int | None
    verdict: str | None
    reason: str | None
    detail: dict[str, Any] | None


def overlap(current: PromptDigest, earlier: PromptDigest) -> Overlap:
    theirs = earlier.hash_set
    shared = sum([part.size for part in current.parts if part.digest in theirs])
    index, leading = 0, 0
    for mine, other in zip(current.parts, earlier.parts, strict=False):
        if mine.digest != other.digest:
            if index == len(earlier.parts) - 1 and _grew(mine, other):
                index, leading, shared = index + 1, leading + other.size, shared + other.size
            break
        index += 1
        leading += mine.size
    return Overlap(shared, index, leading, index == len(earlier.parts) and index > 0)


def _grew(mine: Part, other: Part) -> bool:
    """Whether ``mine`` is the earlier request's last, open group with the parts added since (a long
    conversation continued past ``digests.ONE_BY_ONE`` parts). Its parts are not kept one by one, so
    the earlier ones are taken as unchanged: a change among them shows only in the server's count."""
    return (other.open and mine.members > other.members and mine.label == other.label
            and mine.kind == other.kind and mine.size >= other.size)


#: the text of the part a difference sits in, or what reads it from the body by the part's label only
#: when a difference is shown (the body is walked once more only then)
Excerpt = str | Callable[[str], str | None] | None


def judge(current: PromptDigest, prompt: int | None, cached: int | None, reference: Seen | None,
          between: list[Seen], *, session: str | None, agent: str | None, local: bool, now: float,
          excerpt: Excerpt = None, own_words: Callable[[str], bool] | None = None) -> Judgement:
    """The record of one request; ``between``: what ran on the upstream after ``reference``.

    ``own_words`` tells whether a part label holds the user's own words (``new_conversation``): a
    request that first differs from another session's there is a new conversation, which could reuse
    only what comes before those words."""
    if prompt is None or cached is None or prompt <= 0:
        return Judgement(None, None, None, None)
    numbers: dict[str, Any] = {"prompt": prompt, "cached": cached}
    per_char = prompt / current.total if current.total else 0.0
    found = overlap(current, reference.digest) if reference is not None else None
    estimate = 0
    if reference is not None and found is not None:
        if found.extends and reference.prompt_tokens:
            estimate = min(reference.prompt_tokens, prompt)
        elif (own_words is not None and reference.session != session and found.first_diff < len(current.parts)
              and own_words(label := current.parts[found.first_diff].label)):
            estimate = round(found.leading * per_char)
            numbers["new_conversation"] = label
        else:
            estimate = round(found.shared * per_char)
        numbers["reference"] = _about(reference, session, now)
    reusable = min(prompt, max(estimate, cached))
    numbers["reusable"] = reusable
    if reusable < MIN_REUSABLE:
        return Judgement(reusable, COLD, COLD_REASON, numbers)
    verdict = verdict_for(cached, reusable).upper()
    if verdict == HIT:  # a new conversation keeps its numbers: the Usage tab says what was new, and why
        return Judgement(reusable, HIT, None, numbers if "new_conversation" in numbers else None)
    if reference is None or found is None:  # cannot happen: reusable above cached needs an earlier request
        return Judgement(reusable, verdict, UNKNOWN, numbers)
    # the server stopped about where the prompt first differs: the change is the reason; it reused well
    # short of that point (or the prompt extends the earlier one whole): the prefix was lost before
    leading = estimate if found.extends else round(found.leading * per_char)
    lost_before = leading >= MIN_REUSABLE and cached < LOST_SHARE * leading
    if not found.extends and not lost_before:
        numbers.update(where(current, reference.digest, found, excerpt))
        return Judgement(reusable, verdict, PREFIX_CHANGED, numbers)
    if not found.extends:
        numbers["also_differs_at"] = where(current, reference.digest, found, None)["part"]
    others = _who_ran(between, session, agent, current)
    if others:
        numbers["between"] = others
        return Judgement(reusable, verdict, EVICTED, numbers)
    idle = now - reference.at
    if not local and idle > CLOUD_CACHE_TTL_S:
        numbers.update({"idle_s": round(idle, 1), "ttl_s": CLOUD_CACHE_TTL_S})
        return Judgement(reusable, verdict, EXPIRED, numbers)
    if not found.extends:
        # nothing ran in between, and the prompt does differ: the change is what the server saw, though
        # it stopped short of where the digest places it (a template renders the parts in its own sizes
        # and order; Claude Code's compaction rewrites the conversation from the first message on)
        del numbers["also_differs_at"]
        numbers.update(where(current, reference.digest, found, excerpt), short_of_difference=True)
        return Judgement(reusable, verdict, PREFIX_CHANGED, numbers)
    return Judgement(reusable, verdict, UNKNOWN, numbers)


#: the reasons a server's own word replaces: the prefix was intact up to where it was lost, and the
#: judgement could only guess (what ran in between) or not say at all
SERVER_OVERRIDES = (EVICTED, UNKNOWN)


def told_by_server(judgement: Judgement, said: str, meaning: str | None,
                   advice: str | None = None) -> Judgement:
    """``judgement`` with the server's own word as its reason, when the request was re-processed and
    the prefix was intact (an ``evicted`` or ``unknown`` judgement); its evidence stays beside, and
    what the server's module says avoids it."""
    if judgement.reason not in SERVER_OVERRIDES:
        return judgement
    words = {"server_said": said, "meaning": meaning, "advice": advice}
    detail = {**{key: value for key, value in words.items() if value}, **(judgement.detail or {})}
    return Judgement(judgement.reusable, judgement.verdict, SERVER, detail)


def _about(reference: Seen, session: str | None, now: float) -> dict[str, Any]:
    return {"session": _short(reference.session), "agent": _short(reference.agent),
            "same_session": reference.session == session, "age_s": round(now - reference.at, 1),
            "prompt": reference.prompt_tokens, "cached": reference.cached_tokens}


def _short(value: str | None) -> str | None:
    return value[:13] if value else None


def where(current: PromptDigest, earlier: PromptDigest, found: Overlap,
          excerpt: Excerpt) -> dict[str, Any]:
    """Where the prompt first differs from the earlier one, and what the difference looks like."""
    index = found.first_diff
    mine = current.parts[index] if index < len(current.parts) else None
    theirs = earlier.parts[index] if index < len(earlier.parts) else None
    inside = chunk_prefix(mine, theirs) if mine is not None and theirs is not None else 0
    shown = mine or theirs
    assert shown is not None
    if callable(excerpt):  # a folded group has no one text to show
        excerpt = excerpt(shown.label) if shown.members == 1 else None
    detail: dict[str, Any] = {"part": shown.label, "kind": _kind_words(shown),
                              "offset": found.leading + inside, "offset_in_part": inside,
                              "precision": shown.chunk if shown.chunks else shown.size}
    if shown.members > 1:  # a folded group (``digests``): the difference is somewhere in these parts
        detail["parts_in_group"] = shown.members
    detail["looks_like"], extra = _looks_like(current, earlier, index, mine, theirs)
    detail.update(extra)
    attribution = extra.get("attribution")
    if attribution and attribution["now"] and attribution["before"] and excerpt is not None:
        inside = max(0, excerpt.find(attribution["now"])) + attribution["differs_at"]  # exact, both are kept
        detail.update({"offset": found.leading + inside, "offset_in_part": inside, "precision": 1})
    if excerpt is not None and mine is not None:
        start = max(0, min(inside - EXCERPT_CHARS // 3, len(excerpt) - EXCERPT_CHARS))
        detail["excerpt"] = mask_text(printable(excerpt[start:start + EXCERPT_CHARS], multiline=False))
    return detail


def _kind_words(part: Part) -> str:
    if part.kind == "inline_system":
        return "inline system message"
    if part.kind == "message" and "[" in part.label:
        number = part.label.split("[", 1)[1].split("]", 1)[0]
        return f"message {number}"
    return part.kind


def _looks_like(current: PromptDigest, earlier: PromptDigest, index: int, mine: Part | None,
                theirs: Part | None) -> tuple[str, dict[str, Any]]:
    at_block = index in (current.attribution_part, earlier.attribution_part)
    if at_block and (current.attribution or earlier.attribution):
        now, before = current.attribution or "", earlier.attribution or ""
        at = next((i for i, (a, b) in enumerate(zip(now, before, strict=False)) if a != b),
                  min(len(now), len(before)))
        block: dict[str, Any] = {"now": now, "before": before, "differs_at": at}
        fingerprints = (fingerprint(now), fingerprint(before))
        if any(fingerprints):
            block["fingerprint"] = {"now": fingerprints[0], "before": fingerprints[1]}
        return "attribution_block", {"attribution": block, "fix": {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}}
    if (mine is not None and mine.kind == "tools") or (theirs is not None and theirs.kind == "tools"):
        return _tools_look(current, earlier, mine)
    reminder = any(p is not None and p.note == "system-reminder" for p in (mine, theirs))
    if theirs is not None and any(p.digest == theirs.digest for p in current.parts[index + 1:]):
        return ("moved_reminder" if reminder else "inserted_part"), {}
    if mine is not None and any(p.digest == mine.digest for p in earlier.parts[index + 1:]):
        return ("moved_reminder" if reminder else "removed_part"), {}
    if reminder:
        return "changed_reminder", {}
    if mine is None:
        return "shorter_prompt", {}
    return "changed", {}


def _tools_look(current: PromptDigest, earlier: PromptDigest,
                mine: Part | None) -> tuple[str, dict[str, Any]]:
    """Reordered or changed tools, and which: sets, one pass over each list (10,000 tools renamed took
    25 s when each name was looked up in the other list, issue 39); at most ``NAMED_TOOLS`` named."""
    now_tools = [p.note for p in current.parts if p.kind == "tools"]
    before_tools = [p.note for p in earlier.parts if p.kind == "tools"]
    if {p.digest for p in current.parts if p.kind == "tools"} == {
            p.digest for p in earlier.parts if p.kind == "tools"}:
        listed = _listed({"tools_now": now_tools, "tools_before": before_tools}, LISTED_TOOLS)
        return "reordered_tools", listed
    now_names, before_names = set(now_tools), set(before_tools)
    added = [n for n in now_tools if n not in before_names]
    removed = [n for n in before_tools if n not in now_names]
    changed = mine.note if mine is not None and mine.note in before_names else None
    detail = {**_listed({"added": added, "removed": removed}, NAMED_TOOLS), "changed": changed}
    servers = {k: v for k, v in (("added", mcp_servers(added)), ("removed", mcp_servers(removed))) if v}
    if servers:  # an MCP server enabled or disabled: named, with how many of its tools came or went
        detail["mcp_servers"] = servers
    grouped = sum([p.members for p in current.parts if p.kind == "tools" and p.members > 1])
    if grouped:  # past ``digests.ONE_BY_ONE`` tools are compared in groups, without their names
        detail["tools_in_groups"] = grouped
    return "tools_changed", detail


def mcp_servers(names: list[str | None]) -> dict[str, int]:
    """How many of ``names`` each MCP server brings: Claude Code names an MCP server's tools
    ``mcp__<server>__<tool>`` (2.1.332), so a server enabled mid-session shows as its own group."""
    found: dict[str, int] = {}
    for name in names:
        server, sep, _tool = (name or "").removeprefix("mcp__").partition("__")
        if name and name.startswith("mcp__") and sep and server:
            found[server] = found.get(server, 0) + 1
    return found


def _listed(lists: dict[str, list[str | None]], most: int) -> dict[str, Any]:
    """Each list cut to ``most`` names, with ``<key>_more``: how many were left out (when any were)."""
    shown: dict[str, Any] = {}
    for key, names in lists.items():
        shown[key] = names[:most]
        if len(names) > most:
            shown[f"{key}_more"] = len(names) - most
    return shown


def fingerprint(attribution: str) -> str | None:
    """The per-conversation part of an attribution block: the suffix after the client's version in
    ``cc_version=2.1.332.0b8`` (``0b8``; Claude Code ≥2.1.181 derives it from the first user message, so
    it differs between conversations and is stable within one), or ``None`` when the block has none."""
    found = _CC_VERSION.search(attribution)
    return found.group(1) if found else None


def _who_ran(between: list[Seen], session: str | None, agent: str | None,
             current: PromptDigest) -> list[dict[str, Any]]:
    """The requests that ran between, grouped by who sent them (another session, a subagent or a side
    request of this one), in the order they first ran. A request of this session with tools and a
    system prompt of its own is a subagent even without an agent id: Claude Code 2.1.332 sends none for
    a ``context: fork`` skill's subagent (measured, ``tests/e2e/test_e2e_session_slots.py``)."""
    groups: dict[tuple[str | None, str | None], dict[str, Any]] = {}
    system = current.system
    for seen in between:
        key = (seen.session, seen.agent)
        if seen.session != session:
            who = "another session"
        elif (seen.agent is not None and seen.agent != agent) or (
                seen.digest.has_tools and seen.digest.system != system):
            who = "a subagent of this session"
        else:
            who = "a side request of this session"
        entry = groups.setdefault(key, {"who": who, "session": _short(seen.session),
                                        "agent": _short(seen.agent), "requests": 0, "prompt_tokens": 0})
        entry["requests"] += 1
        entry["prompt_tokens"] += seen.prompt_tokens or 0
    return list(groups.values())


def fill_row(row: UsageRow, judgement: Judgement) -> None:
    """The judgement's fields on the usage row (its evidence as compact JSON)."""
    row.reusable_tokens, row.verdict, row.reason = judgement.reusable, judgement.verdict, judgement.reason
    row.reason_detail = (json.dumps(judgement.detail, ensure_ascii=False, separators=(",", ":"))
                         if judgement.detail is not None else None)
