"""The live cache record: every request through the gateway gets its client, session, reusable tokens,
verdict and reason (issue 25), from the server's own numbers.

Two calls from the gateway's handler: ``begin`` when the request arrives (who sent it, from headers and
a few body fields: microseconds) and ``finish`` once the answer's numbers are parsed (the prompt's
digest, the comparison, the row's fields). The digest is made after the upstream has answered, so it
never delays the first byte; it costs about as much as parsing the body once, so a body over
``THREAD_BODY`` bytes is digested on a worker thread (``prepare``, awaited by the handler just before
``finish``): 17 MB of tiny messages took 4 s on the event loop, holding every other client.

Memory is bounded by size (issue 39): per session only the digests of its last few requests (hashes,
no text; each a few MB at most, ``digests``), at most ``max_sessions`` sessions and ``max_bytes`` of
digests in all (least recently used sessions dropped first), and a short log of what each upstream ran.
A body is kept from ``begin`` to the end of its request only: the handler ``release``s it on every
path (a request refused before any upstream attempt never reaches ``finish``).
A failure here is logged and leaves the row's cache fields empty; it never breaks a request.

Where the profile follows its server's log, a request re-processed while the server said it forced
that (``server_notes``) gets the server's words as its reason.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from kvswitch.gateway.truth.digests import PromptDigest, digest_prompt, part_text
from kvswitch.gateway.truth.new_conversation import KEY, Remeasure, own_words
from kvswitch.gateway.truth.reasons import (
    SERVER_OVERRIDES,
    Seen,
    fill_row,
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
#: the digests kept in all, in bytes (``PromptDigest.kept_bytes``): the least recently used sessions
#: are dropped past it
MAX_BYTES = 64 << 20
#: a request body at least this long is digested on a worker thread (``prepare``): a shorter one costs
#: the event loop at most about 15 ms (tiny messages, the costliest body of this size)
THREAD_BODY = 128 << 10


@dataclass(slots=True)
class _Pending:
    identity: Identity
    body: Any
    #: ``time.monotonic()`` when the request arrived (a server note read since is about it)
    arrived: float
    #: the request's length in bytes, and its digest when ``prepare`` made it on a worker thread
    size: int = 0
    digest: PromptDigest | None = None


class CacheTruth:
    """Remembers digests per session and per upstream, and judges each finished request."""

    def __init__(self, max_sessions: int = MAX_SESSIONS, clock: Callable[[], float] = time.time,
                 notes: ServerNotes | None = None, max_bytes: int = MAX_BYTES):
        self.max_sessions = max_sessions
        self.max_bytes = max_bytes
        self.clock = clock
        self.notes = notes
        self._sessions: OrderedDict[str, deque[Seen]] = OrderedDict()
        self._upstreams: dict[str, deque[Seen]] = {}
        self._pending: OrderedDict[int, _Pending] = OrderedDict()
        self._seq = 0
        #: per remembered request (its ``seq``): in how many of the lists above it is, and its bytes
        self._held: dict[int, list[int]] = {}
        self.kept_bytes = 0
        #: new conversations measured in the server's own tokens before their rows are stored
        self.remeasure = Remeasure()

    # -- the gateway's calls ------------------------------------------------------------------------
    def begin(self, row: UsageRow, headers: Mapping[str, str], body: Any, size: int = 0) -> None:
        """Fill the row's client and session fields; keep the parsed body (``size`` bytes long) until
        ``finish`` or ``release``."""
        try:
            identity = identify(headers, body, row.client)
        except Exception:  # noqa: BLE001 - bookkeeping must never break a request
            log.exception("cache record: could not identify the request")
            return
        row.client_name, row.client_version = identity.client_name, identity.client_version
        row.session, row.agent, row.session_source = identity.session, identity.agent, identity.session_source
        arrived = self.notes.clock() if self.notes is not None else time.monotonic()  # notes' own clock
        self._pending[id(row)] = _Pending(identity, body, arrived, size)
        while len(self._pending) > MAX_PENDING:
            self._pending.popitem(last=False)

    async def prepare(self, row: UsageRow) -> None:
        """Digest a long answered request's body on a worker thread, before ``finish`` (which would
        otherwise digest it on the event loop, holding every other client)."""
        pending = self._pending.get(id(row))
        if pending is None or pending.size < THREAD_BODY or row.status is None or row.status >= 400:
            return
        try:
            pending.digest = await asyncio.to_thread(digest_prompt, pending.body)
        except Exception:  # noqa: BLE001 - bookkeeping must never break a request
            log.exception("cache record: could not digest the request")

    def release(self, row: UsageRow) -> None:
        """Forget the request's body: its request ended, judged or not (a refusal before any upstream
        attempt, a client gone, a failure). Called by the handler on every path."""
        self._pending.pop(id(row), None)

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
        digest = pending.digest if pending.digest is not None else digest_prompt(pending.body)
        if not digest.parts:
            return None
        now = self.clock()
        identity = pending.identity
        reference = self.reference(digest, identity.session, row.upstream)
        between = self.ran_after(reference, row.upstream) if reference is not None else []
        seen = Seen(identity.session, identity.agent, row.upstream, digest, row.input_tokens,
                    row.cached_tokens, now, self._next_seq())

        # a new conversation is a session's first request (its own words are then new by nature)
        opening = identity.session is None or not self._sessions.get(identity.session)

        def verdict() -> None:  # the changed part's text is read from the body only when it is shown
            judgement = judge(digest, row.input_tokens, row.cached_tokens, reference, between,
                              session=identity.session, agent=identity.agent, local=local, now=now,
                              excerpt=lambda label: part_text(pending.body, label),
                              own_words=own_words(pending.body) if opening else None)
            if self.notes is not None and judgement.reason in SERVER_OVERRIDES:
                note = self.notes.claim(row.profile, pending.arrived)
                if note is not None:
                    judgement = told_by_server(judgement, note.text, note.meaning, note.advice)
            fill_row(row, judgement)
            words = (judgement.detail or {}).get(KEY)
            if local and isinstance(words, str):  # measured in the server's tokens as its row is stored
                words_text = part_text(pending.body, words)
                self.remeasure.keep(row, judgement, pending.body, words_text, pending.size)

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
        self._append(history, seen)
        if seen.upstream:
            ran = self._upstreams.get(seen.upstream)
            if ran is None:
                ran = self._upstreams[seen.upstream] = deque(maxlen=PER_UPSTREAM)
            self._append(ran, seen)
            if len(self._upstreams) > self.max_sessions:
                self._drop(self._upstreams.pop(next(iter(self._upstreams))))
        while len(self._sessions) > self.max_sessions:  # what they ran stays in the upstreams' lists
            self._drop(self._sessions.popitem(last=False)[1])
        while self.kept_bytes > self.max_bytes and len(self._sessions) > 1:
            self._forget_session(next(iter(self._sessions)))

    def _append(self, history: deque[Seen], seen: Seen) -> None:
        if len(history) == history.maxlen:
            self._drop([history[0]])
        history.append(seen)
        held = self._held.setdefault(seen.seq, [0, seen.digest.kept_bytes])
        if held[0] == 0:
            self.kept_bytes += held[1]
        held[0] += 1

    def _drop(self, gone: Iterable[Seen]) -> None:
        for seen in gone:
            held = self._held.get(seen.seq)
            if held is None:
                continue
            held[0] -= 1
            if held[0] <= 0:
                self.kept_bytes -= held[1]
                del self._held[seen.seq]

    def _forget_session(self, key: str) -> None:
        """Drop a session's requests, from the upstreams' lists too (what holds their digests)."""
        gone = self._sessions.pop(key)
        self._drop(gone)
        seqs = {seen.seq for seen in gone}
        for upstream, ran in list(self._upstreams.items()):
            if any(seen.seq in seqs for seen in ran):
                self._drop([seen for seen in ran if seen.seq in seqs])
                self._upstreams[upstream] = deque([seen for seen in ran if seen.seq not in seqs],
                                                  maxlen=PER_UPSTREAM)

    def _replace(self, seen: Seen) -> None:
        """Put ``seen`` where the entry of the same request is (its counts came in later)."""
        for history in (self._sessions.get(seen.session or ""), self._upstreams.get(seen.upstream or "")):
            for index, kept in enumerate(history or ()):
                if kept.seq == seen.seq:
                    history[index] = seen  # type: ignore[index]

    def sessions(self) -> int:
        return len(self._sessions)

