"""How many of the server's own tokens come before the part where a request first differs (issue 38).

The live record estimates what a request could have reused from the characters of the request parts it
shares with the earlier one, in the Messages API's order: system, tools, messages. A server renders them in
its chat template's order, and may leave some out. Measured with the real Claude Code 2.1.332 against the
test tier's local server (build b11434): two new conversations in one project first differ at the user's own
words in ``messages[0].content[1]``, which the estimate put at 13,697 tokens; the server's template had
rendered the tools nowhere and Claude Code's own ``system`` message after those words, so only 6,135 tokens
came before them, and the server reused exactly 6,135. The estimate turned an expected new conversation into
a PARTIAL "prefix changed" miss with seconds of "time lost".

So, for a local server that can render prompts (``servers``' ``rendering``: the server's own
``/apply-template`` and ``/tokenize``), a request judged short of its reusable prefix against *another*
conversation is measured: its body is rendered as the server renders it, the differing part's text is
found in that prompt, and the prompt before it is tokenized. That count is what the server could reuse
(parts that differ but render later cannot matter; parts rendered earlier that differ would make it
less, and the server's cached count raises it again when it reused more). It runs after the answer,
off the client's path, bounded in time and bytes; any failure keeps the estimate.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp

from kvswitch.core.strictparse import loads as strict_json
from kvswitch.servers.base import PromptRendering

#: the whole measurement (two requests to the local server); past it the estimate stands
SECONDS = 5.0
#: the most of an answer read (a rendered prompt is about 4 bytes a token; 1M tokens fit)
MAX_ANSWER = 8 << 20
#: an answer at least this long is parsed on a worker thread (the strict parser walks every byte)
THREAD_PARSE = 128 << 10
#: characters of the differing part searched for in the rendered prompt (a shorter text is too common)
NEEDLE = 64
MIN_NEEDLE = 6


class _Unmeasured(Exception):
    """The server could not say (no route, an error, an answer too large or not JSON)."""


async def _post(session: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> Any:
    async with session.post(url, json=body) as answer:
        if answer.status >= 400:
            raise _Unmeasured(f"HTTP {answer.status}")
        data = await answer.content.read(MAX_ANSWER + 1)
        if len(data) > MAX_ANSWER:
            raise _Unmeasured("answer too large")
        try:
            if len(data) < THREAD_PARSE:
                return strict_json(data, max_bytes=MAX_ANSWER)
            # a long prompt's rendering (about 4 bytes a token) is parsed off the gateway's event loop
            return await asyncio.to_thread(strict_json, data, max_bytes=MAX_ANSWER)
        except ValueError:
            raise _Unmeasured("not JSON") from None


def locate(prompt: str, part: str, offset_in_part: int) -> int | None:
    """Where the differing content starts in the rendered ``prompt``: the part's text found there (its
    last occurrence: a template renders a part once, and earlier matches are quotes of it), plus the
    characters of it the two requests share. ``None`` when the text is not in the prompt as written
    (escaped or transformed by the template)."""
    needle = part[:NEEDLE]
    if len(needle.strip()) < MIN_NEEDLE:
        return None
    found = prompt.rfind(needle)
    if found < 0:
        return None
    return found + max(0, min(offset_in_part, len(part)))


async def tokens_before(base_url: str, rendering: PromptRendering, body: dict[str, Any], part: str,
                        offset_in_part: int, *, timeout: float = SECONDS) -> int | None:
    """The server's own token count of its rendered prompt for ``body`` up to where ``part`` (the
    differing part's text) differs, or ``None`` when the server cannot say."""
    base = base_url.rstrip("/").removesuffix("/v1")
    try:
        chat, _messages = rendering.chat_body(body)
        limits = aiohttp.ClientTimeout(total=timeout)
        async with aiohttp.ClientSession(timeout=limits, auto_decompress=True) as session:
            rendered = await _post(session, base + rendering.template_route, chat)
            prompt = rendered.get("prompt") if isinstance(rendered, dict) else None
            if not isinstance(prompt, str):
                return None
            at = locate(prompt, part, offset_in_part)
            if at is None:
                return None
            counted = await _post(session, base + rendering.tokenize_route,
                                  {"content": prompt[:at], "add_special": True, "parse_special": True})
    except (TimeoutError, _Unmeasured, aiohttp.ClientError, OSError, ValueError, TypeError):
        return None
    tokens = counted.get("tokens") if isinstance(counted, dict) else None
    return len(tokens) if isinstance(tokens, list) else None
