"""Anthropic's own API: Claude Code's default backend; keyed with ``x-api-key``, no local cache to follow."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvswitch.core.models import ProfileKind
from kvswitch.servers.base import CacheSource, Reading, Server, as_int
from kvswitch.servers.openai_compatible import is_responses_usage

#: the Messages API (``/v1/messages``), spoken by Anthropic and by many local servers and gateways
MESSAGES_API = "anthropic"
#: how messages to the user name that API's family of endpoints
MESSAGES_API_LABEL = "Anthropic"
#: the path segment many vendors serve their Messages route under (``/anthropic``, ``/apps/anthropic``)
VENDOR_MESSAGES_SEGMENT = "/anthropic"
API_VERSION_HEADER = ("anthropic-version", "2023-06-01")
#: the lint code of a profile that sends Codex here (a stable id: tests and silencing use it)
CODEX_LINT_CODE = "codex-anthropic"


def read_usage(obj: Mapping[str, Any]) -> list[Reading]:
    """Messages ``usage``: ``input_tokens`` are the uncached ones, so the prompt is their sum."""
    usage = obj.get("usage")
    if not isinstance(usage, Mapping) or is_responses_usage(usage):
        return []
    if "input_tokens" not in usage and "cache_read_input_tokens" not in usage:
        return []
    new = as_int(usage.get("input_tokens")) or 0
    read = as_int(usage.get("cache_read_input_tokens"))
    created = as_int(usage.get("cache_creation_input_tokens")) or 0
    if read is not None:
        return [Reading("usage.cache_read_input_tokens", read, new + read + created)]
    if "input_tokens" in usage:
        return [Reading("usage.input_tokens", None, new + created)]
    return []


SERVER = Server(
    kind=ProfileKind.ANTHROPIC,
    label="Anthropic",
    short_label="Anthropic",
    badge="An",
    base_url="https://api.anthropic.com",
    description="Anthropic's own API (Claude Code's default backend).",
    needs_key=True,
    only_apis=(MESSAGES_API,),
    vendor_api=True,
    serves_responses_api=False,
    serves_chat_api=False,
    key_header=("x-api-key", ""),
    answer_sources=(CacheSource("usage.cache_read_input_tokens", 30),),
    answer_reader=read_usage,
)
