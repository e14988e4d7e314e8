"""Request assembly: facts from many lines (and interleaved slots) become one ``CacheEvent`` per request.

How many prompt tokens came from the cache, best evidence first:
1. a direct statement (``n_tokens = K, memory_seq_rm [K, end)``, ``cached n_tokens = K`` at ``-lv 4``,
   2024 ``kv cache rm [K, end)``, 2023 ``in cache: K tokens``);
2. the prompt size minus the tokens processed (``task.n_tokens = P`` with ``prompt eval ... / N tokens``);
3. at default verbosity of current builds, ``stop processing: n_tokens = T`` (the slot after the request)
   with N processed and G generated: cached = T - N - (G - 1), because the last generated token is
   sampled but never written to the KV cache. This matched every request of the captured real logs.
A request may state its cached tokens more than once: ``-lv 4`` repeats the statement after every batch
of a long prompt (counting tokens already processed, so it only grows), and a cache cut back mid-request
is restated lower; the smallest statement is the one that counts.
``selected slot by LCP similarity`` is only a routing decision and never counts as a hit: a
``cache_prompt: false`` request shows ``f_sim_best = 1.000`` and still processes everything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kvswitch.core import verdicts
from kvswitch.logs.model import CacheEvent, make_event, verdict_for
from kvswitch.logs.parsers import server_name
from kvswitch.logs.parsers.base import Fact, What

#: a request read elsewhere, as ``RequestTracker.adopt`` takes it
Adopted = tuple[
    int, int, int | None, str, int | None, int | None, int | None, int | None, float | None, int | None, bool
]
#: requests assembled at once; a real server has a few slots, so more means a garbled log
MAX_PENDING = 256


@dataclass(slots=True)
class PendingRequest:
    slot: int | None
    first_line: int
    task: int | None = None
    select_how: str | None = None
    sim: int | None = None  # similarity x1000 printed when the slot was chosen
    prompt_size: int | None = None
    cached: int | None = None
    new: int | None = None
    prompt_ms: float | None = None
    generated: int | None = None
    after_tokens: int | None = None
    truncated: bool = False
    released: bool = False  # 2024 builds release the slot before printing its timings
    full_hit: bool = False
    reasons: list[str] = field(default_factory=list)

    @property
    def started(self) -> bool:
        return self.task is not None or self.new is not None or self.cached is not None


class RequestTracker:
    """Turns facts into events. One instance per followed stream; it never looks at text."""

    def __init__(self, server: str = server_name(None)) -> None:
        self.server = server
        self._pending: dict[int | None, PendingRequest] = {}
        self._timing_owner: tuple[int | None, int | None] | None = None
        self._last_slot: int | None = None
        self._clock: str | None = None

    def apply(self, fact: Fact, line_no: int) -> tuple[CacheEvent, ...]:
        what = fact.what
        if what is What.CLOCK:
            self._clock = fact.note
            return ()
        if what is What.EVENT:
            return (self._single_line_event(fact, line_no),)
        if what is What.TIMING_HEADER:
            self._timing_owner = (fact.slot, fact.task)
            return ()
        slot, task = fact.slot, fact.task
        if slot is None:
            if what in (What.PROMPT_EVAL, What.GEN_EVAL) and self._timing_owner is not None:
                slot, task = self._timing_owner
            else:
                slot = self._last_slot
        else:
            self._timing_owner = None
        return self.slot_fact(what, slot, task, fact.n1, fact.n2, fact.ms, fact.note, line_no)

    def slot_fact(
        self,
        what: What,
        slot: int | None,
        task: int | None,
        n1: int | None,
        n2: int | None,
        ms: float | None,
        note: str | None,
        line_no: int,
    ) -> tuple[CacheEvent, ...]:
        """One fact about a known slot (the fast scanner calls this directly, without ``Fact`` objects)."""
        done: tuple[CacheEvent, ...] = ()
        if what is What.SELECT:
            old = self._pending.pop(slot, None)
            if old is not None and old.started:
                done = self._finish(old, line_no - 1)
            self._pending[slot] = PendingRequest(slot=slot, first_line=line_no, select_how=note, sim=n1)
            self._bound()
            self._last_slot = slot
            return done
        req = self._pending.get(slot)
        if req is None and what is What.REASON and task is not None and task < 0:
            # an idle slot's own housekeeping (``clearing prompt with 0 tokens`` for the slots not chosen):
            # no request is being assembled there, and the slot's next request starts with its selection,
            # which would drop the note anyway
            return done
        if req is None or (task is not None and task >= 0 and req.task is not None and req.task != task):
            if req is not None:
                done = self._finish(req, line_no - 1)
            known_task = None if task is None or task < 0 else task
            req = PendingRequest(slot=slot, first_line=line_no, task=known_task)
            self._pending[slot] = req
            self._bound()
        elif req.task is None and task is not None and task >= 0:
            req.task = task
        if what is What.PROMPT_EVAL:
            req.new = n1
            req.prompt_ms = ms
        elif what is What.GEN_EVAL:
            req.generated = n1
            if req.released:  # the timings were the last part of this request
                del self._pending[slot]
                done += self._finish(req, line_no)
        elif what is What.RELEASE:
            req.after_tokens = n1
            req.truncated = bool(n2)
            if req.new is None and req.generated is None:
                req.released = True  # timings follow (2024 order); finish when they are complete
                return done
            del self._pending[slot]
            if self._timing_owner is not None and self._timing_owner[0] == slot:
                self._timing_owner = None
            done += self._finish(req, line_no)
        elif what is What.START:
            self._last_slot = slot
        elif what is What.PROMPT_SIZE:
            req.prompt_size = n1
        elif what is What.CACHED and (req.cached is None or (n1 is not None and n1 < req.cached)):
            # the smallest statement counts: b11434 at -lv 4 repeats ``cached n_tokens = K, memory_seq_rm
            # [K, end)`` after every batch of a long prompt (K = tokens done so far), while a cache cut back
            # mid-request (``failed to truncate ... clearing the memory``) is restated lower
            req.cached = n1
        elif what is What.FULL_HIT:
            req.full_hit = True
        elif what is What.REASON and note and note not in req.reasons:
            req.reasons.append(note)
        return done

    def _bound(self) -> None:
        """A garbled log can name endless slots that never finish: forget the oldest beyond a limit."""
        if len(self._pending) > MAX_PENDING:
            oldest = min(self._pending, key=lambda key: self._pending[key].first_line)
            del self._pending[oldest]

    def is_busy(self, slot: int | None) -> bool:
        """Whether a request on this slot is still being assembled."""
        return slot in self._pending

    @property
    def pending(self) -> Mapping[int | None, PendingRequest]:
        """Requests still being assembled, by slot: a live read-only view for scanners that must know
        which slots are busy without paying a call per request."""
        return self._pending

    def adopt(self, requests: Sequence[Adopted], last_slot: int | None) -> None:
        """Take over requests whose facts were read elsewhere (the native walk), in the state those facts
        build: ``(slot, first line, task, how, sim, prompt size, cached, new, prompt ms, generated,
        full hit)`` each, selected in that order; ``last_slot``: the slot last selected or started."""
        for slot, first, task, how, sim, size, cached, new, ms, generated, full_hit in requests:
            self._pending.pop(slot, None)
            self._pending[slot] = PendingRequest(
                slot=slot,
                first_line=first,
                task=task,
                select_how=how,
                sim=sim,
                prompt_size=size,
                cached=cached,
                new=new,
                prompt_ms=ms,
                generated=generated,
                full_hit=full_hit,
            )
        if last_slot is not None:
            self._last_slot = last_slot

    def flush(self, line_no: int) -> list[CacheEvent]:
        """Requests whose end the stream never showed (log cut short): emitted if their numbers are known."""
        done: list[CacheEvent] = []
        for req in sorted(self._pending.values(), key=lambda item: item.first_line):
            done.extend(self._finish(req, line_no))
        self._pending.clear()
        self._timing_owner = None
        return done

    def _finish(self, req: PendingRequest, line_no: int) -> tuple[CacheEvent, ...]:
        new, cached = req.new, req.cached
        if cached is None and new is not None:
            if req.prompt_size is not None:
                cached = req.prompt_size - new
            elif req.after_tokens is not None and req.generated is not None:
                cached = req.after_tokens - new - max(req.generated - 1, 0)
        if new is None and cached is not None and req.prompt_size is not None:
            new = req.prompt_size - cached
        if new is None or cached is None:
            return ()
        cached = max(cached, 0)
        return (
            make_event(
                server=self.server,
                slot=req.slot,
                task=req.task,
                cached=cached,
                new=new,
                prompt_ms=req.prompt_ms,
                first_line=req.first_line,
                last_line=max(line_no, req.first_line),
                reason=self._reason(req, cached, new),
                timestamp=self._clock,
            ),
        )

    @staticmethod
    def _reason(req: PendingRequest, cached: int, new: int) -> str | None:
        reasons = list(req.reasons)
        verdict = verdict_for(cached, cached + new)
        if req.truncated:
            reasons.append(verdicts.TRUNCATED)
        if not reasons:
            if (
                verdict == "miss"
                and req.select_how == "lcp"
                and req.sim is not None
                and req.sim >= verdicts.NOT_CACHED_MIN_SIM
            ):
                reasons.append(verdicts.NOT_CACHED.format(req.sim / 1000))
            elif verdict == "hit" and req.select_how == "lru":
                reasons.append(verdicts.LRU_HIT)
            elif verdict == "hit" and req.full_hit:
                reasons.append(verdicts.FULL_HIT)
            elif verdict != "hit" and cached > 0:
                reasons.append(verdicts.PREFIX.format(cached))
        return "; ".join(reasons) or None

    def _single_line_event(self, fact: Fact, line_no: int) -> CacheEvent:
        return make_event(
            server=fact.server or self.server,
            slot=fact.slot,
            task=fact.task,
            cached=fact.n1 or 0,
            new=fact.n2 or 0,
            prompt_ms=fact.ms,
            first_line=line_no,
            last_line=line_no,
            reason=fact.reason,
            timestamp=self._clock,
            request_id=fact.note,
        )
