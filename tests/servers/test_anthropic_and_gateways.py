"""Anthropic's API and OpenAI-compatible gateways: where their answers carry cache numbers."""

from __future__ import annotations

from server_helpers import recorded

from kvswitch import servers
from kvswitch.core.models import Profile, ProfileKind
from kvswitch.servers import anthropic, openai_compatible
from kvswitch.servers.base import Reading
from kvswitch.verify.api_detect import auth_headers


def test_messages_usage_sums_uncached_and_read_tokens() -> None:
    # a real llama-server b11434 /v1/messages answer: input_tokens are the uncached ones
    assert anthropic.read_usage(recorded("resp_anthropic_hit.json")) == [
        Reading("usage.cache_read_input_tokens", 1564, 37 + 1564)]


def test_chat_usage_reports_cached_tokens_of_the_whole_prompt() -> None:
    assert openai_compatible.read_usage(recorded("resp_chat_hit.json")) == [
        Reading("usage.prompt_tokens_details.cached_tokens", 1564, 1601)]


def test_responses_usage_is_not_taken_for_messages_usage() -> None:
    usage = {"usage": {"input_tokens": 1601, "input_tokens_details": {"cached_tokens": 1500},
                       "total_tokens": 1610}}
    assert anthropic.read_usage(usage) == []
    assert openai_compatible.read_usage(usage) == [
        Reading("usage.input_tokens_details.cached_tokens", 1500, 1601)]


def test_key_headers() -> None:
    vendor = Profile(name="a", kind=ProfileKind.ANTHROPIC, base_url="https://api.anthropic.com",
                     api_key="sk-1")
    gateway = Profile(name="g", kind=ProfileKind.OPENAI_COMPATIBLE, base_url="https://gw.example/v1",
                      api_key="k")
    assert auth_headers(vendor, anthropic.MESSAGES_API) == {
        "anthropic-version": "2023-06-01", "x-api-key": "sk-1"}
    assert auth_headers(gateway, "openai-chat") == {"authorization": "Bearer k"}


def test_vendor_api_is_not_probed_and_speaks_one_api() -> None:
    assert servers.get(ProfileKind.ANTHROPIC).vendor_api
    assert servers.get(ProfileKind.ANTHROPIC).only_apis == (anthropic.MESSAGES_API,)
    assert not servers.get(ProfileKind.OPENAI_COMPATIBLE).specific
