"""The tool calls of a streamed chat answer, collected by their ``index``.

A chat stream sends each call in pieces: the first with the call's ``id`` and ``name``, later ones
with more of its ``arguments``, all under the call's ``index``. Pieces of different calls may
interleave (``0, 1, 0, 1``); a client protocol that streams one block or item at a time cannot follow
that, so both bridges collect the calls here and send each one whole when the answer ends. A piece
without an ``index`` (some servers send every call whole, one per chunk) belongs to the call before
it unless it brings an ``id`` of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class ToolCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


class ToolCalls:
    """Calls in the order their first piece arrived; ``finished()`` hands them out once."""

    def __init__(self) -> None:
        self._calls: dict[int, ToolCall] = {}
        self._last: int | None = None

    def __bool__(self) -> bool:
        return bool(self._calls)

    def _key(self, piece: dict[str, Any]) -> int:
        index = piece.get("index")
        if isinstance(index, int) and not isinstance(index, bool):
            return index
        last = self._calls.get(self._last) if self._last is not None else None
        if last is None or (piece.get("id") and last.id and piece.get("id") != last.id):
            return max(self._calls, default=-1) + 1
        return self._last  # type: ignore[return-value]

    def add(self, piece: dict[str, Any]) -> None:
        """One ``tool_calls`` entry of a chat delta."""
        key = self._key(piece)
        call = self._calls.setdefault(key, ToolCall())
        self._last = key
        found = piece.get("function")
        function: dict[str, Any] = found if isinstance(found, dict) else {}
        if piece.get("id") and not call.id:
            call.id = str(piece["id"])
        name = function.get("name")
        if isinstance(name, str) and name and not call.name:
            call.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            call.arguments += arguments

    def finished(self) -> list[ToolCall]:
        calls, self._calls, self._last = list(self._calls.values()), {}, None
        return calls
