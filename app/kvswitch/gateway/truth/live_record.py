"""The live cache record: every request through the gateway gets its client, session, reusable tokens,
verdict and reason (issue 25), from the server's own numbers.

Two calls from the gateway's handler: ``begin`` when the request arrives (who sent it, from headers and
a few body fields: microseconds) and ``finish`` once the answer's numbers are parsed (the prompt's
digest, the comparison, the row's fields). The digest is made in ``finish``, after the upstream has
answered, so it never delays the first byte; it costs about as much as parsing the body once.

Memory is bounded: per session only the digests of its last few requests (hashes, no text), at most
``max_sessions`` sessions (least recently used dropped), and a short log of what each upstream ran.
A failure here is logged and leaves the row's cache fields empty; it never breaks a request.

Where the profile follows its server's log, a request re-processed while the server said it forced
that (``server_notes``) gets the server's words as its reason.
"""

from __future__ import annotations

import json
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from kvswitch.gateway.truth.digests import PromptDigest, digest_prompt, part_text
from kvswitch.gateway.truth.reasons import (
    PREFIX_CHANGED,
    SERVER_OVERRIDES,
    Judgement,
    Seen,
    judge,
    overlap,
    told_by_server,
)
from kvswitch.gateway.truth.server_notes import ServerNotes
from kvswitch.gateway.truth.sessions import Identity, identify
from kvswitch.usage.schema import UsageRow

log = logging.getLogger("kvswitch.gateway.truth.live_record")

#: sessions remembered (each holds a few digests of a few KB)
MAX_SESSIONS = 256
#: requests remembered per session (the main conversation, a subagent, a side request or two)
PER_SESSION = 6
#: requests remembered per upstream (what ran in between)
PER_UPSTREAM = 32
#: other conversations on the upstream a request is compared with (the most recent ones)
OTHERS = 8
#: requests begun but not finished that are kept (a request that never finishes is dropped with the oldest)
MAX_PENDING = 1024


@dataclass(slots=True)
class _Pending:
    identity: Identity
    body: Any
    #: ``time.monotonic()`` when the request arrived (a server note read since is about it)
    arrived: float


class CacheTruth:
    """Remembers digests per session and per upstream, and judges each finished request."""

    def __init__(self, max_sessions: int = MAX_SESSIONS, clock: Callable[[], float] = time.time,
                 notes: ServerNotes | None = None):
        self.max_sessions = max_sessions
        self.clock = clock
        self.notes = notes
        self._sessions: OrderedDict[str, deque[Seen]] = OrderedDict()
        self._upstreams: dict[str, deque[Seen]] = {}
        self._pending: OrderedDict[int, _Pending] = OrderedDict()
        self._seq = 0

    # -- the gateway's two calls --------------------------------------------------------------------
    def begin(self, row: UsageRow, headers: Mapping[str, str], body: Any) -> None:
        """Fill the row's client and session fields; keep the parsed body until ``finish``."""
        try:
            identity = identify(headers, body, row.client)
        except Exception:  # noqa: BLE001 - bookkeeping must never break a request
            log.exception("cache record: could not identify the request")
            return
        row.client_name, row.client_version = identity.client_name, identity.client_version
        row.session, row.agent, row.session_source = identity.session, identity.agent, identity.session_source
        arrived = self.notes.clock() if self.notes is not None else time.monotonic()  # notes' own clock
        self._pending[id(row)] = _Pending(identity, body, arrived)
        while len(self._pending) > MAX_PENDING:
            self._pending.popitem(last=False)

    def finish(self, row: UsageRow, *, local: bool) -> Callable[[], None] | None:
        """Judge the finished request from the row's server numbers (``input_tokens``, ``cached_tokens``).

        A row without them is remembered at once (the session's next request is judged against its
        prompt) and gets its judgement from the call returned, once they are filled in
        (``counts_fallback``); otherwise None."""
        pending = self._pending.pop(id(row), None)
        if pending is None or row.status is None or row.status >= 400:
            return None
        try:
            return self._judge(row, pending, local)
        except Exception:  # noqa: BLE001 - bookkeeping must never break a request
            log.exception("cache record: could not judge the request")
            return None

    # -- the ledger ---------------------------------------------------------------------------------
    def _judge(self, row: UsageRow, pending: _Pending, local: bool) -> Callable[[], None] | None:
        digest = digest_prompt(pending.body)
        if not digest.parts:
            return None
        now = self.clock()
        identity = pending.identity
        reference = self.reference(digest, identity.session, row.upstream)
        between = self.ran_after(reference, row.upstream) if reference is not None else []
        seen = Seen(identity.session, identity.agent, row.upstream, digest, row.input_tokens,
                    row.cached_tokens, now, self._next_seq())

        def verdict() -> None:
            judgement = judge(digest, row.input_tokens, row.cached_tokens, reference, between,
                              session=identity.session, agent=identity.agent, local=local, now=now)
            if judgement.reason == PREFIX_CHANGED and judgement.detail is not None:
                text = part_text(pending.body, str(judgement.detail.get("part")))
                judgement = judge(digest, row.input_tokens, row.cached_tokens, reference, between,
                                  session=identity.session, agent=identity.agent, local=local, now=now,
                                  excerpt=text)
            if self.notes is not None and judgement.reason in SERVER_OVERRIDES:
                note = self.notes.claim(row.profile, pending.arrived)
                if note is not None:
                    judgement = told_by_server(judgement, note.text, note.meaning, note.advice)
            _fill(row, judgement)

        if row.input_tokens is not None:
            verdict()
            self.remember(seen)
            return None
        self.remember(seen)

        def later() -> None:
            try:
                verdict()
                self._replace(replace(seen, prompt_tokens=row.input_tokens, cached_tokens=row.cached_tokens))
            except Exception:  # noqa: BLE001 - bookkeeping must never break a request
                log.exception("cache record: could not judge the request")

        return later

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def reference(self, digest: PromptDigest, session: str | None, upstream: str | None) -> Seen | None:
        """The earlier request this one continues: of the session's and the upstream's recent requests,
        the one sharing the most of its prompt (the session's own, and the newest, on a tie)."""
        candidates: list[Seen] = list(self._sessions.get(session or "", ()))
        latest: dict[tuple[str | None, str | None], Seen] = {}
        for seen in self._upstreams.get(upstream or "", ()):
            if seen.session != session:
                latest[(seen.session, seen.agent)] = seen  # the newest of each other conversation
        candidates += list(latest.values())[-OTHERS:]
        best: tuple[tuple[int, int, int], Seen] | None = None
        for seen in candidates:
            found = overlap(digest, seen.digest)
            rank = (found.shared, int(seen.session == session and session is not None), seen.seq)
            if found.shared and (best is None or rank > best[0]):
                best = (rank, seen)
        return best[1] if best is not None else None

    def ran_after(self, reference: Seen, upstream: str | None) -> list[Seen]:
        """What the upstream served after ``reference`` (the requests that could have displaced it)."""
        return [seen for seen in self._upstreams.get(upstream or "", ()) if seen.seq > reference.seq]

    def remember(self, seen: Seen) -> None:
        key = seen.session or ""
        history = self._sessions.get(key)
        if history is None:
            history = self._sessions[key] = deque(maxlen=PER_SESSION)
        self._sessions.move_to_end(key)
        history.append(seen)
        while len(self._sessions) > self.max_sessions:
            self._sessions.popitem(last=False)
        if seen.upstream:
            self._upstreams.setdefault(seen.upstream, deque(maxlen=PER_UPSTREAM)).append(seen)
            if len(self._upstreams) > self.max_sessions:
                self._upstreams.pop(next(iter(self._upstreams)))

    def _replace(self, seen: Seen) -> None:
        """Put ``seen`` where the entry of the same request is (its counts came in later)."""
        for history in (self._sessions.get(seen.session or ""), self._upstreams.get(seen.upstream or "")):
            for index, kept in enumerate(history or ()):
                if kept.seq == seen.seq:
                    history[index] = seen  # type: ignore[index]

    def sessions(self) -> int:
        return len(self._sessions)


def _fill(row: UsageRow, judgement: Judgement) -> None:
    row.reusable_tokens, row.verdict, row.reason = judgement.reusable, judgement.verdict, judgement.reason
    row.reason_detail = (json.dumps(judgement.detail, ensure_ascii=False, separators=(",", ":"))
                         if judgement.detail is not None else None)
