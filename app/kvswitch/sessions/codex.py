"""Codex's rollouts: ``${CODEX_HOME:-~/.codex}/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``.

Lines are ``{timestamp, type, payload}``. 0.171 writes one ``token_usage_record`` per API call (its
``response_id`` and ``usage``); every version writes ``event_msg`` ``token_count`` events whose
``last_token_usage`` is one call's and ``total_token_usage`` the running total. Codex re-emits an
unchanged total with a fresh timestamp, and a fork (``session_meta.forked_from_id``) replays its parent's
events: a record of another thread, a count whose total did not change and a count older than the fork
are dropped, so each call is counted once. Once a file has shown records, its counts are not used.
``input_tokens`` includes the cached part (and the written part, where given).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kvswitch.core.redact import mask_text
from kvswitch.sessions.claude import Sink
from kvswitch.sessions.counts import count, epoch, short_text, text_of
from kvswitch.sessions.model import Call, Counts

CLIENT = "codex"


def usage_values(usage: Any, note: Callable[[str], None]) -> Counts:
    """OpenAI's counts (cached and written parts inside ``input_tokens``) as this package's."""
    total = count(usage, "input_tokens", note)
    read = count(usage, "cached_input_tokens", note)
    written = count(usage, "cache_write_input_tokens", note)
    if read + written > total:
        note(
            f"cached_input_tokens + cache_write_input_tokens ({read + written}) above input_tokens ({total})"
        )
        total = read + written
    return {
        "fresh": total - read - written,
        "cache_read": read,
        "cache_write_5m": written,
        "output": count(usage, "output_tokens", note),
    }


class CodexReader:
    """Reads one rollout's lines in order; ``state`` survives between passes (JSON)."""

    def __init__(self, sink: Sink, session_id: str, state: dict[str, Any] | None = None) -> None:
        self.sink = sink
        self.state: dict[str, Any] = (
            state
            if state is not None
            else {
                "session": session_id,
                "model": "",
                "version": "",
                "records": False,
                "total": None,
                "fork_time": None,
                "titled": False,
            }
        )

    def skips(self, raw: bytes) -> bool:
        """Every rollout line may matter (they are small): none is skipped unparsed."""
        return False

    def feed(self, line: dict[str, Any], note: Callable[[str], None]) -> None:
        payload = line.get("payload")
        if not isinstance(payload, Mapping):
            return
        kind = line.get("type")
        when = epoch(line.get("timestamp"))
        state = self.state
        if kind == "session_meta":
            self._meta(payload, when)
            return
        if when is not None:
            self.sink.session(CLIENT, state["session"], time=when)
        if kind == "turn_context":
            state["model"] = short_text(payload.get("model"), 200) or state["model"]
        elif kind == "token_usage_record":
            self._record(payload, when, note)
        elif kind == "event_msg" and payload.get("type") == "token_count" and not state["records"]:
            self._token_count(payload, when, note)
        elif kind == "event_msg" and payload.get("type") == "user_message" and not state["titled"]:
            self._title(payload.get("message"))
        elif (
            kind == "response_item"
            and payload.get("type") == "message"
            and payload.get("role") == "user"
            and not state["titled"]
        ):
            text = text_of(payload.get("content")).strip()
            if text and not text.startswith("<"):
                self._title(text)
        elif kind == "event_msg" and payload.get("type") == "context_compacted":
            state["compacted"] = True

    def _meta(self, payload: Mapping[str, Any], when: float | None) -> None:
        state = self.state
        own = short_text(payload.get("id"), 128)
        if state.get("meta_seen"):
            if own and own != state["session"]:
                return  # a replayed parent's meta in a fork
            state["new_process"] = True
            return
        state["meta_seen"] = True
        if own:
            state["session"] = own
        state["version"] = short_text(payload.get("cli_version"), 40)
        if payload.get("forked_from_id"):
            state["fork_time"] = when
        self.sink.session(
            CLIENT,
            state["session"],
            project=short_text(payload.get("cwd"), 4096),
            version=state["version"],
            time=when,
        )

    def _title(self, text: Any) -> None:
        text = text.strip() if isinstance(text, str) else ""
        if text:
            self.state["titled"] = True
            self.sink.session(CLIENT, self.state["session"], title=mask_text(" ".join(text.split()))[:200])

    def _events(self) -> tuple[str, ...]:
        found = tuple(
            name
            for name, flag in (("compacted", "compacted"), ("new_process", "new_process"))
            if self.state.pop(flag, False)
        )
        return found

    def _record(self, payload: Mapping[str, Any], when: float | None, note: Callable[[str], None]) -> None:
        state = self.state
        thread = payload.get("thread_id") or payload.get("session_id")
        if isinstance(thread, str) and thread != state["session"]:
            return  # a fork replaying its parent's calls
        call_id = short_text(payload.get("response_id"), 128) or f"record@{payload.get('turn_id')}@{when}"
        state["records"] = True
        self._call(call_id, when, payload.get("usage"), note)

    def _token_count(
        self, payload: Mapping[str, Any], when: float | None, note: Callable[[str], None]
    ) -> None:
        state = self.state
        info = payload.get("info")
        if not isinstance(info, Mapping) or not isinstance(info.get("last_token_usage"), Mapping):
            return
        total = info.get("total_token_usage")
        key = [
            count(total, name, note)
            for name in ("input_tokens", "cached_input_tokens", "output_tokens", "total_tokens")
        ]
        if key == state["total"]:
            return  # the same total re-emitted
        state["total"] = key
        if state["fork_time"] is not None and when is not None and when < state["fork_time"]:
            return  # the parent's call, replayed into the fork
        self._call(f"count@{when}@{key[3]}", when, info["last_token_usage"], note)

    def _call(self, call_id: str, when: float | None, usage: Any, note: Callable[[str], None]) -> None:
        """One request to the sink, whichever line told of it (a response record or a token count)."""
        state = self.state
        self.sink.call(
            Call(
                CLIENT,
                state["session"],
                call_id,
                when or 0.0,
                model=state["model"],
                version=state["version"],
                events=self._events(),
                **usage_values(usage, note),
            )
        )
