"""Replay requests shaped exactly like Claude Code's, to show what its billing header does to a cache.

The template is a real ``/v1/messages`` body Claude Code 2.1.332 sent (``data/claude_code_request.json``,
recorded with the header off). Two "conversations" differ only in the user's first words, as two
``claude -p`` runs do. With the header on, ``system[0]`` carries a 3-hex value that depends on those
words, so it differs between conversations and sits before everything else. The per-run nonce goes
into the user's words, which also makes the header value new on every run: an old cache entry can
never fake a hit.
"""

from __future__ import annotations

import copy
import hashlib
import json
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from kvswitch.servers import MESSAGES_API_LABEL
from kvswitch.verify.causes import ATTRIBUTION_FIX
from kvswitch.verify.diagnose import diagnose_requests
from kvswitch.verify.evidence import best_reading
from kvswitch.verify.probe import Guard, ProbeError
from kvswitch.verify.result import ReplayCase, ReplayResult, verdict_for
from kvswitch.verify.target import measure

if TYPE_CHECKING:
    from kvswitch.verify.target import Target

FIRST_WORDS = "say hi"
SECOND_WORDS = "say hello to the whole team"


@lru_cache(maxsize=1)
def load_template() -> dict[str, Any]:
    text = resources.files("kvswitch.verify").joinpath("data/claude_code_request.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def header_suffix(user_words: str) -> str:
    return hashlib.sha256(user_words.encode()).hexdigest()[:3]


def claude_code_body(*, model: str, user_words: str, header: bool, max_tokens: int = 4) -> dict[str, Any]:
    """A Claude Code-shaped ``/v1/messages`` body whose first user words are ``user_words``."""
    template = load_template()
    body: dict[str, Any] = copy.deepcopy(template["body"])
    body["model"] = model
    body["max_tokens"] = max_tokens
    # not streamed: the usage then always arrives (a server build may drop a stream's message_start)
    body["stream"] = False
    msg_index, block_index = template["user_block"]
    body["messages"][msg_index]["content"][block_index]["text"] = user_words
    if header:
        text = template["billing_header"].format(suffix=header_suffix(user_words))
        body["system"] = [{"type": "text", "text": text}, *body["system"]]
    return body


def claude_code_headers(target_headers: dict[str, str]) -> dict[str, str]:
    headers = {k: v for k, v in load_template()["headers"].items() if k.lower() != "content-type"}
    headers.update(target_headers)
    return headers


def _second_conversation(
    guard: Guard, target: Target, nonce: str, header: bool, label: str
) -> tuple[ReplayCase, dict[str, Any], dict[str, Any]]:
    first = claude_code_body(model=target.model, user_words=f"{FIRST_WORDS} ({nonce})", header=header)
    second_words = f"{SECOND_WORDS} ({nonce})"
    if header and header_suffix(second_words) == header_suffix(f"{FIRST_WORDS} ({nonce})"):
        second_words += "!"  # keep the two conversations' header values different, as they are in real use
    second = claude_code_body(model=target.model, user_words=second_words, header=header)
    headers = claude_code_headers(target.headers)
    measure(guard, target, first, headers)
    best = best_reading(measure(guard, target, second, headers).readings)
    if best is None or best.cached is None:
        return ReplayCase(label, None, None, "UNKNOWN"), first, second
    prompt = best.prompt or 0
    return (
        ReplayCase(label, best.cached, prompt, verdict_for(best.cached, prompt), best.source),
        first,
        second,
    )


def replay(guard: Guard, target: Target, nonce: str) -> ReplayResult:
    """Two conversations with the billing header, two without; never raises (errors are reported)."""
    try:
        load_template()
    except (OSError, ValueError) as exc:  # a bundle built without the package's data files
        message = f"the Claude Code request template is missing from this installation ({exc})"
        return ReplayResult(
            None, None, None, f"could not replay Claude Code's requests: {message}", error=message
        )
    try:
        with_header, first, second = _second_conversation(guard, target, nonce, True, "with billing header")
        without_header, _, _ = _second_conversation(guard, target, nonce, False, "without billing header")
    except ProbeError as exc:
        message = exc.message
        if exc.status in (404, 405) and b"model" not in exc.body.lower():
            message = (
                f"the server has no {MESSAGES_API_LABEL} /v1/messages endpoint ({exc.message}); Claude Code "
                "needs one, or a gateway that translates"
            )
        return ReplayResult(
            None, None, None, f"could not replay Claude Code's requests: {message}", error=message
        )
    diag = diagnose_requests(first, second)
    diagnosis = diag.describe().splitlines()[0] + (f" {diag.cause_text}" if diag.cause_text else "")
    if with_header.cached_tokens is None or without_header.cached_tokens is None:
        return ReplayResult(
            with_header,
            without_header,
            None,
            "the server reports no cache numbers for Claude Code-shaped requests.",
            diagnosis,
        )
    prompt = max(without_header.prompt_tokens or 0, 1)
    breaks = without_header.cached_tokens > with_header.cached_tokens + max(64, int(0.05 * prompt))
    numbers = (
        f"a new conversation keeps {with_header.cached_tokens} of {with_header.prompt_tokens} tokens "
        f"with the billing header, {without_header.cached_tokens} of {without_header.prompt_tokens} "
        "without it"
    )
    if breaks:
        message = (
            f"{numbers}: the header breaks the prefix. Set CLAUDE_CODE_ATTRIBUTION_HEADER=0. "
            "(Claude Code puts the user's first words before its environment block, so even without "
            "the header a new conversation re-processes what follows them; later turns reuse all.)"
        )
        return ReplayResult(with_header, without_header, True, message, diagnosis, dict(ATTRIBUTION_FIX))
    message = f"{numbers}: the header makes no difference on this server."
    return ReplayResult(with_header, without_header, False, message, diagnosis)
