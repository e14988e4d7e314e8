"""The gateway's cache reasons in the UI language: a reason code's words, and a request's evidence
(``reason_detail``, written by ``gateway.truth.reasons``) told as labelled sentences.

The Usage tab shows these first and the recorded evidence after them, so a user reads "the prompt's
prefix changed — in system[0], Claude Code's attribution block; fix: CLAUDE_CODE_ATTRIBUTION_HEADER=0"
rather than JSON keys; the codes stay beside the words, as the CLI and the docs name them.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication

from kvswitch.ui.i18n import fill

# every text below is written out in full in a ``translate("CacheReasons", ...)`` call, the form
# ``pyside6-lupdate`` finds (``scripts/dev.sh translations``)
translate = QCoreApplication.translate


def reason_text(reason: str | None) -> str:
    """The gateway's reason code as the tray and the Usage tab say it, in the UI language."""
    words = {
        "cold": translate("CacheReasons", "a new conversation (nothing to reuse)"),
        "prefix_changed": translate("CacheReasons", "the prompt's prefix changed"),
        "evicted": translate("CacheReasons", "the server dropped the cached prefix (evicted)"),
        "expired": translate("CacheReasons", "the vendor's cache expired"),
        "server": translate("CacheReasons", "the server forced re-processing"),
        "unknown": translate("CacheReasons", "no reason could be told"),
        "new_conversation": translate("CacheReasons", "a new conversation (its own words are new)"),
    }
    return words.get(reason or "unknown", reason or words["unknown"])


def looks_like_text(code: str | None) -> str | None:
    """What a changed prefix looks like (``looks_like``); ``None`` for a code this version does not know."""
    words = {
        "attribution_block": translate("CacheReasons",
                                       "Claude Code's attribution block, which differs per conversation"),
        "reordered_tools": translate("CacheReasons", "the same tools in another order"),
        "tools_changed": translate("CacheReasons", "the tool list changed"),
        "moved_reminder": translate("CacheReasons", "a system reminder moved"),
        "changed_reminder": translate("CacheReasons", "a system reminder changed"),
        "inserted_part": translate("CacheReasons", "a part was inserted before it"),
        "removed_part": translate("CacheReasons", "a part was removed"),
        "shorter_prompt": translate("CacheReasons", "the prompt ends earlier than the one before"),
        "changed": translate("CacheReasons", "its text changed"),
    }
    return words.get(code) if code else None


def _who_text(who: object) -> str:
    words = {"another session": translate("CacheReasons", "another session"),
             "a subagent of this session": translate("CacheReasons", "a subagent of this session"),
             "a side request of this session": translate("CacheReasons", "a side request of this session")}
    return words.get(str(who), str(who))


def _tokens(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "?"


def _names(values: object) -> str:
    return ", ".join(str(value) for value in values) if isinstance(values, list) else ""


def _mcp_servers(servers: object) -> list[tuple[str, str]]:
    """The MCP servers whose tools came or went (``gateway.truth.reasons.mcp_servers``): enabling or
    disabling one rewrote the tool list at the start of the prompt."""
    if not isinstance(servers, dict):
        return []
    lines = []
    for key, label in (("added", translate("CacheReasons", "MCP servers enabled")),
                       ("removed", translate("CacheReasons", "MCP servers disabled"))):
        counts = servers.get(key)
        if isinstance(counts, dict) and counts:
            tools = translate("CacheReasons", "%1 (%2 tools)")
            lines.append((label, ", ".join(fill(tools, str(name), str(n)) for name, n in counts.items())))
    return lines


def explanation(reason: str | None, detail: dict[str, Any]) -> list[tuple[str, str]]:
    """Label/sentence pairs for one request that was not a HIT: why, how much was reused, against which
    earlier request, where the prompt changed and what the change looks like, what ran in between, the
    server's own words and the fix. What this version does not know stays in the recorded evidence the
    Usage tab shows after these."""
    lines: list[tuple[str, str]] = []
    if reason:
        lines.append((translate("CacheReasons", "Why"), f"{reason_text(reason)} ({reason})"))
    lines += _new_conversation(detail)
    if "reusable" in detail and "cached" in detail:
        reused = translate("CacheReasons", "%1 of %2 reusable tokens (prompt: %3)")
        lines.append((translate("CacheReasons", "Reused"),
                      fill(reused, _tokens(detail.get("cached")), _tokens(detail.get("reusable")),
                            _tokens(detail.get("prompt")))))
    lines += _reference(detail.get("reference"))
    lines += _where(detail)
    between = detail.get("between")
    if isinstance(between, list) and between:
        each = translate("CacheReasons", "%1 (%2 requests, %3 prompt tokens)")
        ran = [fill(each, _who_text(entry.get("who")), entry.get("requests", "?"),
                     _tokens(entry.get("prompt_tokens")))
               for entry in between if isinstance(entry, dict)]
        lines.append((translate("CacheReasons", "Ran in between"), "; ".join(ran)))
    if "idle_s" in detail:
        idle = translate("CacheReasons", "%1 s, longer than the vendor keeps a prompt cached (%2 s)")
        lines.append((translate("CacheReasons", "Idle"),
                      fill(idle, detail.get("idle_s"), detail.get("ttl_s", "?"))))
    server_words = (("server_said", translate("CacheReasons", "The server said")),
                    ("meaning", translate("CacheReasons", "Meaning")),
                    ("advice", translate("CacheReasons", "Advice")))
    lines += [(label, str(detail[key])) for key, label in server_words if detail.get(key)]
    fix = detail.get("fix")
    if isinstance(fix, dict) and fix:
        settings = ", ".join(f"{key}={value}" for key, value in fix.items())
        lines.append((translate("CacheReasons", "Fix"),
                      fill(translate("CacheReasons", "set %1 in the profile's environment"), settings)))
    return lines


def _new_conversation(detail: dict[str, Any]) -> list[tuple[str, str]]:
    """A new conversation's opening (``gateway.truth.new_conversation``): what it shares with the one
    before ends where the user's own words begin; those words, and what follows them, are new by
    nature and never time lost."""
    if not detail.get("new_conversation"):
        return []
    reusable, prompt = detail.get("reusable"), detail.get("prompt")
    own = prompt - reusable if isinstance(prompt, int) and isinstance(reusable, int) else None
    opened = translate("CacheReasons", "it differs from the conversation before where the user's own "
                                       "words begin (%1); what comes before them could be reused, and its "
                                       "own %2 tokens are new, as expected")
    lines = [(translate("CacheReasons", "New conversation"),
              fill(opened, detail["new_conversation"], _tokens(own)))]
    if detail.get("measured_by") == "server":
        measured = translate("CacheReasons", "%1 tokens come before the user's words in the server's own "
                                             "rendering of the prompt (the estimate from the request's "
                                             "characters was %2)")
        lines.append((translate("CacheReasons", "Measured"),
                      fill(measured, _tokens(reusable), _tokens(detail.get("estimated_reusable")))))
    return lines


def _reference(reference: object) -> list[tuple[str, str]]:
    """The earlier request this one was measured against."""
    if not isinstance(reference, dict):
        return []
    if reference.get("same_session"):
        whose = translate("CacheReasons", "this session's request before")
    else:
        whose = fill(translate("CacheReasons", "the request before, of session %1"),
                      reference.get("session") or "?")
    age = reference.get("age_s")
    if isinstance(age, int | float):
        whose += " " + fill(translate("CacheReasons", "(%1 s earlier)"), age)
    return [(translate("CacheReasons", "Compared with"), whose)]


def _where(detail: dict[str, Any]) -> list[tuple[str, str]]:
    """Where a changed prefix first differs and what the difference looks like."""
    lines: list[tuple[str, str]] = []
    if detail.get("part"):
        place = str(detail["part"])
        if detail.get("kind"):
            place += f" ({detail['kind']})"
        if isinstance(detail.get("offset"), int):
            place += ", " + fill(translate("CacheReasons", "at character %1"), _tokens(detail["offset"]))
        lines.append((translate("CacheReasons", "Where"), place))
    # a new conversation's words differ by nature: "its text changed" would read as a fault
    looks = None if detail.get("new_conversation") else looks_like_text(detail.get("looks_like"))
    if looks:
        lines.append((translate("CacheReasons", "What changed"), looks))
    added, removed = _names(detail.get("added")), _names(detail.get("removed"))
    if added:
        lines.append((translate("CacheReasons", "Tools added"), added))
    if removed:
        lines.append((translate("CacheReasons", "Tools removed"), removed))
    lines += _mcp_servers(detail.get("mcp_servers"))
    if detail.get("short_of_difference"):
        lines.append((translate("CacheReasons", "Note"),
                      translate("CacheReasons", "the server stopped reusing before this point, and nothing "
                                                "else ran in between")))
    if detail.get("also_differs_at"):
        lines.append((translate("CacheReasons", "Also differs"), str(detail["also_differs_at"])))
    return lines
