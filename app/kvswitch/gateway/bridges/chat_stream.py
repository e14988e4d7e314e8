"""What both chat-answer converters share: JSON collected whole, SSE cut into events as it arrives.

A subclass says what one chat chunk becomes (``_chunk``), how the stream starts, ends and fails, and
what a whole JSON answer becomes; the byte handling, the size cap and the order of the final events
(end of stream without ``[DONE]``, an unreadable event, an upstream that sent nothing) are here once.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from kvswitch.core.strictparse import loads as strict_json
from kvswitch.gateway.bridges.base import BridgeUsage, ResponseConverter
from kvswitch.gateway.bridges.sse import SseReader, StreamError

#: a non-streaming answer larger than this is refused rather than held in memory
MAX_JSON_BYTES = 64 * 1024 * 1024


def error_message(body: bytes) -> str:
    """The upstream's own error text (OpenAI's ``error.message`` or the raw body, cut short)."""
    text = body.decode("utf-8", errors="replace")
    try:
        data = strict_json(text)
    except ValueError:
        return text.strip()[:2000] or "the upstream returned an error"
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"][:2000]
    if isinstance(error, str):
        return error[:2000]
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        return data["message"][:2000]
    return text.strip()[:2000]


def as_list(value: Any) -> list[Any]:
    """``value`` if it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def count(value: Any) -> int:
    """A token count from an upstream answer: a non-negative integer, else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def chat_token_counts(usage: Any, target: BridgeUsage) -> tuple[int, int, int] | None:
    """Prompt, cached and output tokens of a chat ``usage`` object (``None`` when there is none), also
    recorded in ``target`` with the cached part taken out of the input, as both clients count it."""
    if not isinstance(usage, dict):
        return None
    prompt, output = count(usage.get("prompt_tokens")), count(usage.get("completion_tokens"))
    details = usage.get("prompt_tokens_details")
    cached = count(details.get("cached_tokens")) if isinstance(details, dict) else 0
    target.input_tokens, target.cached_tokens, target.output_tokens = max(prompt - cached, 0), cached, output
    return prompt, cached, output


def as_object(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (upstream answers are read defensively)."""
    return value if isinstance(value, dict) else {}


class ChatAnswerConverter(ResponseConverter):
    """Chat answer bytes in; the subclass's client shape out."""

    def __init__(self, *, streaming: bool) -> None:
        self.usage = BridgeUsage()
        self._streaming = streaming
        self._reader = SseReader()
        self._body = bytearray()
        self._started = False
        self._finished = False
        self._oversize = False

    def _keep_timings(self, data: dict[str, Any]) -> None:
        """llama.cpp's ``timings`` of the answer, kept for the usage record (the server's own numbers)."""
        if isinstance(data.get("timings"), dict):
            self.usage.extra["timings"] = data["timings"]

    @abstractmethod
    def _json_answer(self) -> bytes:
        """The whole (non-streaming) upstream body in ``self._body`` as the client's answer."""

    @abstractmethod
    def _chunk(self, data: str) -> bytes:
        """One SSE ``data`` payload (a chat chunk or ``[DONE]``)."""

    @abstractmethod
    def _finish(self) -> bytes:
        """The closing events (idempotent)."""

    @abstractmethod
    def _fail(self, message: str) -> bytes:
        """An error event that ends the stream."""

    @abstractmethod
    def _json_error(self, message: str) -> bytes:
        """A whole (non-streaming) error answer in the client's shape."""

    def feed(self, chunk: bytes) -> bytes:
        if not self._streaming:
            if self._oversize or len(self._body) + len(chunk) > MAX_JSON_BYTES:
                self._oversize, self._body = True, bytearray()  # refused at close, never held
            else:
                self._body += chunk
            return b""
        if self._finished:
            return b""
        out = b""
        try:
            for event in self._reader.feed(chunk):
                out += self._chunk(event.data)
                if self._finished:
                    break
        except StreamError as exc:
            out += self._fail(str(exc))
        return out

    def fail(self, message: str) -> bytes:
        if not self._streaming:
            return self._json_error(message)
        return b"" if self._finished else self._fail(message)

    def close(self) -> bytes:
        if not self._streaming:
            if self._oversize:
                return self._json_error(f"the upstream answer is larger than {MAX_JSON_BYTES} bytes")
            return self._json_answer()
        out = b""
        try:
            for event in self._reader.close():
                if not self._finished:
                    out += self._chunk(event.data)
        except StreamError as exc:
            return out + self._fail(str(exc))
        if not self._finished and not self._started:
            return out + self._fail("the upstream closed the stream without an answer")
        return out + self._finish()
