"""A new conversation's first request: what it could reuse is what comes before the user's own words.

Two conversations in one project share the client's system prompt, tools and context, and differ at the
words the user typed. Those words, and whatever the server renders after them, are new by nature:
nothing fixes that, so none of it is "time lost" (issue 38). The live record tells such a request apart
(``own_words``: the first part that differs from another session's request is the last block of the
first user message), estimates what it could reuse from the characters *before* that part rather than
from every part the two share, and, where the server can render prompts, measures it in the server's
own tokens after the answer (``rendered_prefix``): measured with the real Claude Code 2.1.332 on
the test tier's local server (build b11434), the estimate said 13,697 while 6,135 tokens came before the
words in the server's prompt, and the server reused exactly those.

The measurement runs in the background once the request's answer is complete; its row is stored when it
ends (seconds at most), with the measured figure, or with the estimate when the server could not say.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kvswitch import servers
from kvswitch.core.models import Profile
from kvswitch.core.verdicts import verdict_for
from kvswitch.gateway.truth.reasons import COLD, COLD_REASON, HIT, MIN_REUSABLE, Judgement, fill_row
from kvswitch.gateway.truth.rendered_prefix import tokens_before
from kvswitch.usage.schema import UsageRow

log = logging.getLogger("kvswitch.gateway.truth.new_conversation")

#: the detail key a new conversation's judgement carries: the label of the part holding the user's words
KEY = "new_conversation"
#: measurements waiting for their row to be stored, the bytes of request bodies they hold in all, and
#: measurements running at once (past any of these the estimate stands: a burst of new conversations is
#: never held for the server's renderings, and a body is never kept past its request for long)
MAX_WAITING, MAX_WAITING_BYTES, MAX_RUNNING = 64, 32 << 20, 8
_LABEL = re.compile(r"^(messages|input)\[(\d+)\](?:\.content\[(\d+)\])?$")


def own_words(body: Any) -> Callable[[str], bool]:
    """Whether a part label names the user's own words in ``body``: the last block of its first user
    message (a client puts its reminders and context before them, in the same message)."""

    def check(label: str) -> bool:
        found = _LABEL.match(label)
        if found is None or not isinstance(body, dict):
            return False
        key, index, block = found.group(1), int(found.group(2)), found.group(3)
        messages = body.get(key)
        if not isinstance(messages, list) or index >= len(messages):
            return False
        users = (i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user")
        first_user = next(users, None)
        if first_user != index:
            return False
        content = messages[index].get("content")
        if isinstance(content, str):
            return block is None
        return isinstance(content, list) and block is not None and int(block) == len(content) - 1

    return check


def remeasured(judgement: Judgement, prompt: int, cached: int, before: int) -> Judgement:
    """``judgement`` of a new conversation with what the server rendered before the user's words
    (``before`` tokens) as what it could reuse, when that is less than the estimate."""
    detail = judgement.detail or {}
    if not detail.get(KEY) or judgement.reusable is None or before >= judgement.reusable:
        return judgement
    reusable = min(prompt, max(before, cached))
    detail = {**detail, "reusable": reusable, "estimated_reusable": judgement.reusable,
              "measured_by": "server"}
    if reusable < MIN_REUSABLE:
        return Judgement(reusable, COLD, COLD_REASON, detail)
    verdict = verdict_for(cached, reusable).upper()
    if verdict == HIT:  # what a guess had added to the miss goes with it
        for key in ("between", "also_differs_at", "short_of_difference"):
            detail.pop(key, None)
        return Judgement(reusable, HIT, None, detail)
    return Judgement(reusable, verdict, judgement.reason, detail)


@dataclass(frozen=True, slots=True)
class _Waiting:
    judgement: Judgement
    body: Any
    #: the text of the part holding the user's words
    words: str
    #: the request's length in bytes (what keeping its parsed body costs, roughly)
    size: int


class Remeasure:
    """The new conversations judged short of their estimate on a local server, measured in the
    background before their rows are stored."""

    def __init__(self) -> None:
        self._waiting: OrderedDict[int, _Waiting] = OrderedDict()
        self._bytes = 0
        self._tasks: set[asyncio.Task[None]] = set()

    def keep(self, row: UsageRow, judgement: Judgement, body: Any, words: str | None, size: int) -> None:
        """Remember a judged request (``size`` bytes long) to measure when its row is stored (``start``);
        the oldest are forgotten past ``MAX_WAITING`` or ``MAX_WAITING_BYTES``."""
        if (words is None or judgement.verdict == HIT or not (judgement.detail or {}).get(KEY)
                or size > MAX_WAITING_BYTES):
            return
        self._waiting[id(row)] = _Waiting(judgement, body, words, size)
        self._bytes += size
        while len(self._waiting) > MAX_WAITING or self._bytes > MAX_WAITING_BYTES:
            self._bytes -= self._waiting.popitem(last=False)[1].size

    def start(self, row: UsageRow, profile: Profile | None, then: Callable[[UsageRow], object]) -> bool:
        """Measure ``row``'s request in the background and hand the row to ``then`` after; True when it
        was taken (False: store the row now)."""
        waiting = self._waiting.pop(id(row), None)
        if waiting is not None:
            self._bytes -= waiting.size
        if waiting is None or profile is None or not profile.is_local or len(self._tasks) >= MAX_RUNNING:
            return False
        rendering = servers.get(profile.kind).rendering
        if rendering is None or row.input_tokens is None or row.cached_tokens is None:
            return False
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False

        async def measure() -> None:
            try:
                before = await tokens_before(profile.base_url, rendering, waiting.body, waiting.words, 0)
                if before is not None and row.input_tokens is not None and row.cached_tokens is not None:
                    judged = remeasured(waiting.judgement, row.input_tokens, row.cached_tokens, before)
                    fill_row(row, judged)
            except Exception:  # noqa: BLE001 - bookkeeping must never lose a row
                log.exception("cache record: could not measure a new conversation's prefix")
            finally:
                then(row)

        task = loop.create_task(measure())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    async def drain(self) -> None:
        """Let running measurements store their rows (the gateway is stopping)."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=10)

