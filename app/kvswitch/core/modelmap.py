"""Claude Code's model tiers and the variables that carry them.

Names checked in the installed Claude Code 2.1.332 binary (``strings`` on it): ``ANTHROPIC_MODEL``,
``ANTHROPIC_DEFAULT_OPUS_MODEL``, ``ANTHROPIC_DEFAULT_SONNET_MODEL``, ``ANTHROPIC_DEFAULT_HAIKU_MODEL``,
``ANTHROPIC_SMALL_FAST_MODEL`` and ``CLAUDE_CODE_SUBAGENT_MODEL`` are all read. The ``main`` tier is the
profile's ``model`` (it also names Codex's model); the others live in ``Profile.models``.
"""

from __future__ import annotations

from collections.abc import Iterable

from kvswitch.core.errors import UsageError
from kvswitch.core.models import ModelMap

MAIN_TIER = "main"
#: every tier, in the order people think of them, with the variable Claude Code reads for it
TIER_ENV: dict[str, str] = {MAIN_TIER: "ANTHROPIC_MODEL", **ModelMap.ENV_NAMES}
#: spellings accepted on the command line for the same tier
TIER_ALIASES = {"small-fast": "small_fast", "fast": "small_fast", "default": MAIN_TIER, "model": MAIN_TIER}
#: only ASCII whitespace is trimmed: str.strip() would also eat U+00A0, U+2028 and the like, which are
#: part of what the user typed (and then refused below or kept), never silently changed
ASCII_SPACE = " \t\n\r\v\f"


def is_control(ch: str) -> bool:
    """C0, DEL and C1 (U+0080-U+009F): characters no model id holds and terminals act on."""
    code = ord(ch)
    return code < 32 or 127 <= code <= 159


def tier_name(raw: str) -> str:
    name = raw.strip(ASCII_SPACE).lower()
    name = TIER_ALIASES.get(name, name)
    if name not in TIER_ENV:
        raise UsageError(f"unknown model tier {raw!r}; use one of: {', '.join(TIER_ENV)}")
    return name


def parse_tier_assignments(pairs: Iterable[str]) -> dict[str, str | None]:
    """``--model-tier TIER=ID`` values as ``{tier: id}``; an empty ID clears the tier (``None``)."""
    result: dict[str, str | None] = {}
    for pair in pairs:
        tier, sep, model = pair.partition("=")
        if not sep:
            raise UsageError(f"--model-tier {pair!r}: expected TIER=MODEL, e.g. --model-tier haiku=glm-5.1")
        model = model.strip(ASCII_SPACE)
        if any(is_control(ch) for ch in model):
            raise UsageError(
                f"--model-tier {pair.encode('unicode_escape').decode()!r}: the model id contains control "
                "characters (C0, DEL or C1 U+0080-U+009F)"
            )
        result[tier_name(tier)] = model or None
    return result


def split_tiers(tiers: dict[str, str | None]) -> tuple[str | None, bool, dict[str, str | None]]:
    """``(main model, main given?, other tiers)`` so callers can set ``model`` and ``models`` apart."""
    rest = {k: v for k, v in tiers.items() if k != MAIN_TIER}
    return tiers.get(MAIN_TIER), MAIN_TIER in tiers, rest
