"""Which tier served each prompt token of one request, and why a prompt that differs reused what it did.

A second cache behind the server (declared by the server module as a ``CacheTier``) counts its own hits
per tier and knows its own chunk size; the server counts what it took from its own cache and what it
computed. Both pages are read right before and after the request, never inferred from timing or from
the probe's own arithmetic. The chunk boundary needs one more number: where the two prompts first
differ, in the server's own tokens (its tokenize route renders the chat body itself).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from kvswitch.core.http import NetworkLimitError
from kvswitch.core.http_client import exchange
from kvswitch.core.strictparse import loads as strict_json
from kvswitch.servers.base import CacheTier
from kvswitch.verify.evidence import parse_metrics
from kvswitch.verify.probe import MAX_GET_BODY, Guard, ProbeError, get_json_or_text


@dataclass(frozen=True)
class TierPage:
    """One scrape of the tier's ``/metrics``: the summed counters and the raw text (for labels)."""

    values: dict[str, float]
    text: str


def scrape_tier(guard: Guard, url: str) -> TierPage | None:
    """A tier's own ``/metrics`` (no key: the tier's own port); ``None`` when it does not answer."""
    got = get_json_or_text(guard, url, {})
    if got is None or got[0] != 200:
        return None
    text = got[2].decode("utf-8", errors="replace")
    return TierPage(parse_metrics(text), text)


def read_settings(guard: Guard, tier: CacheTier, metrics_url: str) -> Any:
    """The tier's settings from its own pages (``None`` when it declares none or does not answer)."""
    if tier.settings is None or not tier.settings_routes:
        return None
    root = metrics_url.removesuffix("/metrics")
    pages = []
    for route in tier.settings_routes:
        got = get_json_or_text(guard, root + route, {})
        try:
            pages.append(strict_json(got[2].decode("utf-8")) if got is not None and got[0] == 200 else None)
        except ValueError:
            pages.append(None)
    if pages[0] is None:
        return None
    return tier.settings(pages)


def split(tier: CacheTier, before: Mapping[str, float], after: Mapping[str, float],
          was: TierPage | None, now: TierPage | None, settings: Any) -> Any:
    """The tier's split of one request (``None`` when the tier has none or its page did not answer)."""
    if tier.split is None or now is None:
        return None
    return tier.split(before, after, was.values if was else None, now.values, was.text if was else None,
                      now.text, settings)


def _text(value: Any) -> str | None:
    """A system prompt as text: a string, or a list of text blocks (the Messages API's shape)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [b.get("text") for b in value if isinstance(b, Mapping)]
        return "".join(t for t in texts if isinstance(t, str))
    return None


def _chat(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The body as the server's tokenize route takes it: model and messages (a system prompt first);
    a Chat Completions, Messages or Responses body with plain text."""
    messages = body.get("messages")
    if not isinstance(messages, list) and isinstance(body.get("input"), str):
        messages = [{"role": "user", "content": body["input"]}]
    if not isinstance(messages, list):
        return None
    system = _text(body.get("system", body.get("instructions")))
    if system is not None:
        messages = [{"role": "system", "content": system}, *messages]
    return {"model": body.get("model"), "messages": messages, "add_generation_prompt": True}


def _post_json(guard: Guard, url: str, body: Mapping[str, Any], headers: Mapping[str, str]) -> Any:
    """A bounded POST whose JSON answer is returned (``None`` on any failure but the run's own end)."""
    guard.check()
    try:
        with (guard.client(url, 30.0) as client,
              exchange(client, guard, "POST", url, limit=MAX_GET_BODY, headers=dict(headers), json=dict(body),
                       check=guard.check_chunk) as answer):
            return strict_json(answer.read().decode("utf-8")) if answer.status == 200 else None
    except (httpx.HTTPError, OSError, NetworkLimitError, ValueError):
        guard.check()
        return None


def first_difference(guard: Guard, base_url: str, route: str, headers: Mapping[str, str],
                     a: Mapping[str, Any], b: Mapping[str, Any]) -> int | None:
    """The index of the first token where B's prompt differs from A's, in the server's tokens
    (``None`` when the server cannot tokenize them or the prompts do not differ)."""
    chat_a, chat_b = _chat(a), _chat(b)
    if not route or chat_a is None or chat_b is None:
        return None
    url = base_url.rstrip("/").removesuffix("/v1") + route
    answer_a = _post_json(guard, url, chat_a, headers)
    answer_b = _post_json(guard, url, chat_b, headers)
    tokens_a = answer_a.get("tokens") if isinstance(answer_a, dict) else None
    tokens_b = answer_b.get("tokens") if isinstance(answer_b, dict) else None
    if not isinstance(tokens_a, list) or not isinstance(tokens_b, list):
        return None
    shared = 0
    for x, y in zip(tokens_a, tokens_b, strict=False):
        if x != y:
            break
        shared += 1
    return shared if shared < len(tokens_b) else None


def chunk_boundary(guard: Guard, tier: CacheTier | None, base_url: str, headers: Mapping[str, str],
                   a: Mapping[str, Any], b: Mapping[str, Any], tiers: Mapping[str, Any] | None) -> str | None:
    """Why B, which differs from A at token N, reused what the tier's counters say it did: whole chunks
    of the chunk size the tier's own settings give (``None``: no tier, no chunk size, or no difference)."""
    if tier is None or tier.boundary is None or not tiers or not tiers.get("chunk_size"):
        return None
    first = first_difference(guard, base_url, tier.tokenize_route, headers, a, b)
    return tier.boundary(first, tiers) if first is not None else None


def unreachable(tier: CacheTier, metrics_url: str, linked: int | None = None) -> str:
    """The tier is connected to the server (its marker is on the server's page) but its own page is
    silent: its process is gone, or listens elsewhere."""
    what = " ".join(x for x in (tier.program, tier.subcommand) if x)
    if linked is not None:
        start = f"start `{what} {tier.link_flag} {linked} {tier.port_flag} PORT`"
    else:
        start = f"start `{what}` (or give it {tier.port_flag} with the port the server's connector expects)"
    return (f"{tier.label} is connected to the server but its own page {metrics_url} did not answer, so no "
            f"tier can be named and nothing is reused from it: {start}; if it exits at start, its log says "
            "why.")


def problems(guard: Guard, tier: CacheTier, server_metrics_url: str | None, headers: Mapping[str, str],
             settings: Any, was: TierPage | None, now: TierPage | None) -> list[str]:
    """The tier's own diagnosis of one request (``CacheTier.check``), from its settings and counters."""
    if tier.check is None or now is None:
        return []
    got = get_json_or_text(guard, server_metrics_url, headers) if server_metrics_url else None
    page = got[2].decode("utf-8", errors="replace") if got is not None and got[0] == 200 else ""
    return list(tier.check(page, settings, was.values if was else None, now.values,
                           was.text if was else None, now.text))


def stall_note(tier: CacheTier, metrics_url: str, settings: Any, linked: int | None = None) -> str | None:
    """After a request ran out of time: what the tier's own page says holds it (a fresh short budget,
    since the run's own is spent)."""
    with Guard(5.0) as guard:
        try:
            page = scrape_tier(guard, metrics_url)
        except ProbeError:
            page = None
    if page is None:
        return unreachable(tier, metrics_url, linked)
    if tier.stalled is None:
        return None
    found = tier.stalled(settings, page.values)
    return " ".join(found) or None
