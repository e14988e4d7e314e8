"""Gateways speaking the OpenAI API (Codex) or the Messages API (Claude Code); OpenAI's own included.

Local servers answer in OpenAI's shape too, so the usage reader here serves them as well.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvswitch.core.models import ProfileKind
from kvswitch.servers.base import CacheSource, Reading, Server, as_int


def is_responses_usage(usage: Mapping[str, Any]) -> bool:
    """Responses API usage (``input_tokens`` include the cached ones), told apart from Messages usage."""
    if "input_tokens" not in usage and "cache_read_input_tokens" not in usage:
        return False
    return isinstance(usage.get("input_tokens_details"), Mapping) or (
        "total_tokens" in usage and "cache_read_input_tokens" not in usage
    )


def read_usage(obj: Mapping[str, Any]) -> list[Reading]:
    """Chat ``prompt_tokens_details.cached_tokens`` and Responses ``input_tokens_details.cached_tokens``."""
    usage = obj.get("usage")
    if not isinstance(usage, Mapping):
        return []
    found: list[Reading] = []
    if "prompt_tokens" in usage:
        details = usage.get("prompt_tokens_details")
        cached = as_int(details.get("cached_tokens")) if isinstance(details, Mapping) else None
        name = "usage.prompt_tokens_details.cached_tokens" if cached is not None else "usage.prompt_tokens"
        found.append(Reading(name, cached, as_int(usage.get("prompt_tokens"))))
    if is_responses_usage(usage):
        details = usage.get("input_tokens_details")
        cached = as_int(details.get("cached_tokens")) if isinstance(details, Mapping) else None
        name = "usage.input_tokens_details.cached_tokens" if cached is not None else "usage.input_tokens"
        found.append(Reading(name, cached, as_int(usage.get("input_tokens"))))
    return found


SERVER = Server(
    kind=ProfileKind.OPENAI_COMPATIBLE,
    label="OpenAI-compatible gateway",
    short_label="gateway",
    badge="Ai",
    base_url="https://api.openai.com/v1",
    specific=False,
    description="Any gateway speaking the OpenAI API (Codex) or Anthropic API (Claude Code).",
    needs_key=True,
    answer_sources=(
        CacheSource("usage.prompt_tokens_details.cached_tokens", 20),
        CacheSource("usage.input_tokens_details.cached_tokens", 40),
    ),
    answer_reader=read_usage,
)
