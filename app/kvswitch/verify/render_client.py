"""Ask a server to render a request with its chat template and to tokenize the result.

Which routes do that is each server's own knowledge (``Server.rendering`` in ``kvswitch.servers``): a
template route gives the prompt text exactly as a completion would build it, a tokenize route (with
``add_special`` and ``parse_special``, as the completion path tokenizes) its tokens and their pieces.
The pieces let a token index be turned back into a character offset of the prompt. The server's own
count route counts the original body, which checks the rendering end to end.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from kvswitch import servers
from kvswitch.core import http_client
from kvswitch.core.errors import KvSwitchError
from kvswitch.core.http import Deadline, NetworkLimitError
from kvswitch.core.models import ProfileKind, mask_url
from kvswitch.core.text import printable
from kvswitch.servers.base import Server
from kvswitch.verify.probe import parse_json

#: the most a render or tokenize answer may hold (a 32k-token prompt with pieces is about 2 MB)
MAX_ANSWER_BYTES = 64 * 1024 * 1024


class RenderError(KvSwitchError):
    """The server cannot render or tokenize (a kind without such routes, an old build, a dead port)."""


@dataclass(frozen=True)
class Rendered:
    prompt: str
    tokens: list[int]
    piece_bytes: list[int]
    checked: bool

    def char_offset(self, token_index: int) -> int:
        """The character offset in ``prompt`` where token ``token_index`` starts."""
        start = sum(self.piece_bytes[:token_index])
        return len(self.prompt.encode("utf-8")[:start].decode("utf-8", errors="ignore"))


class ServerRenderer:
    """Renders request bodies the way the server at ``base_url`` does; bounded by ``timeout``.

    ``kind`` names the server when known (a profile's kind); otherwise every server that can render
    is assumed, in the registry's order.
    """

    def __init__(
        self,
        base_url: str,
        timeout: float = 30.0,
        headers: dict[str, str] | None = None,
        kind: ProfileKind | str | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/").removesuffix("/v1")
        self.deadline = Deadline(timeout)
        self.headers = headers or {}
        known = servers.find(str(kind.value if isinstance(kind, ProfileKind) else kind)) if kind else None
        able = [known] if known is not None and known.specific else list(servers.renderers())
        chosen: Server | None = next((s for s in able if s.rendering is not None), None)
        if chosen is None or chosen.rendering is None:
            raise RenderError(
                f"{self.base_url}: a {known.label if known else 'server'} cannot render prompts"
            )
        self.server = chosen
        self.rendering = chosen.rendering
        self.name = (
            f"{chosen.short_label} {chosen.rendering.template_route} + {chosen.rendering.tokenize_route}"
        )

    def _post(self, route: str, body: dict[str, Any]) -> Any:
        url = mask_url(self.base_url + route)
        if self.deadline.expired:
            raise RenderError(f"{url}: no answer within the time allowed")
        try:
            with http_client.request("POST", self.base_url + route, timeout=self.deadline,
                                     limit=MAX_ANSWER_BYTES, json=body, headers=self.headers,
                                     what=url) as answer:
                data = answer.read()
                status = answer.status
        except NetworkLimitError as exc:
            raise RenderError(printable(str(exc), multiline=False)) from None
        except (httpx.HTTPError, OSError) as exc:
            said = printable(str(exc), multiline=False)
            raise RenderError(f"{url}: {type(exc).__name__}: {said}") from None
        if status in (404, 405, 501):
            raise RenderError(f"{url}: HTTP {status}: this server cannot render prompts")
        try:
            decoded = parse_json(data)
        except ValueError:
            raise RenderError(f"{url}: answered HTTP {status} with a body that is not JSON") from None
        if status >= 400:
            message = decoded.get("error", decoded) if isinstance(decoded, dict) else decoded
            if isinstance(message, dict):
                message = message.get("message", message)
            raise RenderError(f"{url}: HTTP {status}: {printable(str(message), multiline=False)[:300]}")
        return decoded

    def render(self, body: dict[str, Any]) -> Rendered:
        chat, messages = self.rendering.chat_body(body)
        answer = self._post(self.rendering.template_route, chat)
        prompt = answer.get("prompt") if isinstance(answer, dict) else None
        if not isinstance(prompt, str):
            raise RenderError(
                f"{self.base_url}{self.rendering.template_route}: the answer has no prompt text"
            )
        tokenized = self._post(
            self.rendering.tokenize_route,
            {"content": prompt, "add_special": True, "parse_special": True, "with_pieces": True},
        )
        tokens, pieces = [], []
        for item in tokenized.get("tokens", []) if isinstance(tokenized, dict) else []:
            piece = item.get("piece", "")
            tokens.append(int(item["id"]))
            pieces.append(len(piece.encode("utf-8")) if isinstance(piece, str) else len(piece))
        route = self.rendering.count_routes.get("messages" if messages else "chat")
        try:
            counted = self._post(route, body if messages else chat).get("input_tokens") if route else None
        except RenderError:
            counted = None
        return Rendered(prompt, tokens, pieces, counted == len(tokens))
