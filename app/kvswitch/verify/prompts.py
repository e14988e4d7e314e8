"""The probe's prompts: a long deterministic prefix that starts with a per-run nonce.

The nonce comes first so that nothing an earlier run (or another client) left in the server's cache
can match: any reuse the server reports must come from this run's cold request. The rest is fixed
text, about 2.5k tokens for common tokenizers, so results are comparable between runs and servers.
"""

from __future__ import annotations

import random
import secrets
from typing import Any

from kvswitch.verify.api_detect import (
    MESSAGES,
    NATIVE_CHAT,
    NATIVE_COMPLETION,
    OPENAI_CHAT,
    OPENAI_RESPONSES,
)

_WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "lazy",
    "dog",
    "near",
    "river",
    "bank",
    "while",
    "warm",
    "east",
    "wind",
    "moves",
    "across",
    "quiet",
    "green",
    "field",
    "under",
    "bright",
    "sky",
    "and",
    "old",
    "stone",
    "bridge",
    "where",
    "small",
    "birds",
    "sing",
    "each",
    "morning",
    "before",
    "town",
    "wakes",
    "up",
    "to",
    "bake",
    "fresh",
    "bread",
    "sell",
    "ripe",
    "fruit",
    "mend",
    "nets",
    "paint",
    "doors",
    "read",
    "letters",
    "count",
    "coins",
]
PREFIX_LINES = 200
SUFFIX_COLD = "Question one: which animal is named in line 001? Reply with one word."
SUFFIX_WARM = "Question two: what colour is the fox? Reply with one word."
MAX_TOKENS = 4


def new_nonce() -> str:
    return secrets.token_hex(8)


def make_prefix(nonce: str, lines: int = PREFIX_LINES) -> str:
    """``lines`` lines of fixed pseudo-random words after a ``probe <nonce>`` header line."""
    rng = random.Random(20261129)
    body = [
        f"line {i:03d}: " + " ".join(rng.choice(_WORDS) for _ in range(11)) + "." for i in range(1, lines + 1)
    ]
    return f"KV Switch cache probe {nonce}. Read the numbered lines, then answer the question.\n" + "\n".join(
        body
    )


def build_body(
    api: str, model: str, prefix: str, suffix: str, *, max_tokens: int = MAX_TOKENS
) -> dict[str, Any]:
    """A streaming request whose prompt is ``prefix`` (system/instructions) then ``suffix`` (user).

    No cache hints (``cache_prompt``...) are sent: the probe must see what the agents get by default.
    """
    if api == MESSAGES:
        return {
            "model": model,
            "max_tokens": max_tokens,
            "stream": True,
            "system": [{"type": "text", "text": prefix, "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": suffix}],
        }
    if api == OPENAI_CHAT:
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": max_tokens,
            "temperature": 0,
            "stream": True,
            "stream_options": {"include_usage": True},
            "messages": [{"role": "system", "content": prefix}, {"role": "user", "content": suffix}],
        }
        return body
    if api == OPENAI_RESPONSES:
        return {
            "model": model,
            "max_output_tokens": max(16, max_tokens),
            "stream": True,
            "instructions": prefix,
            "input": suffix,
        }
    if api == NATIVE_COMPLETION:
        return {
            "prompt": prefix + "\n" + suffix,
            "n_predict": max_tokens,
            "stream": True,
            "temperature": 0,
        }
    if api == NATIVE_CHAT:
        return {
            "model": model,
            "stream": True,
            "keep_alive": "5m",
            "options": {"num_predict": max_tokens},
            "messages": [{"role": "system", "content": prefix}, {"role": "user", "content": suffix}],
        }
    raise ValueError(f"unknown API {api!r}")
