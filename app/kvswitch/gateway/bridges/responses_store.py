"""The gateway's memory of Responses conversations, so ``previous_response_id`` works on a chat backend.

A Responses client may send only the new items and name the answer they follow; a chat backend
needs the whole conversation. The gateway keeps each answer's full chat conversation (the request's
messages plus the answer) under the response id it gave out, in memory, bounded by count and by
bytes so that a long-running gateway cannot grow without limit: the oldest entries go first.
Codex 0.169 sends its whole history with ``store: false``, so for it the store stays empty.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any


class ResponseStore:
    """Response id → the chat messages of the conversation up to and including that answer."""

    def __init__(self, *, max_entries: int = 256, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, tuple[list[dict[str, Any]], int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def put(self, response_id: str, messages: list[dict[str, Any]]) -> None:
        size = len(json.dumps(messages, ensure_ascii=False))
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop(response_id, None)
            if old is not None:
                self._bytes -= old[1]
            self._entries[response_id] = (messages, size)
            self._bytes += size
            while self._entries and (len(self._entries) > self.max_entries or self._bytes > self.max_bytes):
                _, (_, dropped) = self._entries.popitem(last=False)
                self._bytes -= dropped

    def get(self, response_id: str) -> list[dict[str, Any]] | None:
        """A copy of the stored conversation (the caller extends it), or ``None`` if unknown or evicted."""
        with self._lock:
            entry = self._entries.get(response_id)
            if entry is None:
                return None
            self._entries.move_to_end(response_id)
            return list(entry[0])

    def __len__(self) -> int:
        return len(self._entries)
