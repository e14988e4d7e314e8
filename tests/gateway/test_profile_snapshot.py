"""The gateway copies the profiles once per change of the profile file, not per request: an edit, a
new fallback or a removed profile still reaches the very next request."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from kvswitch.core.gateway_config import ensure_token, route_clients
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.core.store import ProfileStore
from kvswitch.gateway.control import make_server


class _Upstream(BaseHTTPRequestHandler):
    """Answers every Messages request with its own name, or 503 when it is called ``down``."""

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        name = self.server.name  # type: ignore[attr-defined]
        status = 503 if name == "down" else 200
        body = json.dumps({"type": "message", "role": "assistant", "model": "m", "content": [
            {"type": "text", "text": name}], "usage": {"input_tokens": 3, "output_tokens": 1}}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
        pass


@pytest.fixture
def upstreams() -> Iterator[dict[str, str]]:
    servers = {}
    for name in ("first", "second", "down"):
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
        server.name = name  # type: ignore[attr-defined]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers[name] = server
    yield {name: f"http://127.0.0.1:{s.server_address[1]}" for name, s in servers.items()}
    for server in servers.values():
        server.shutdown()
        server.server_close()


def _ask(url: str, token: str) -> tuple[int, str]:
    answer = httpx.post(url + "/claude/v1/messages", headers={"x-api-key": token}, timeout=30,
                        json={"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]})
    if answer.status_code != 200:
        return answer.status_code, ""
    return answer.status_code, answer.json()["content"][0]["text"]


def test_profile_edits_reach_the_next_request(fake_home: Path, upstreams: dict[str, str]) -> None:
    paths = AppPaths.default()
    store = ProfileStore(paths)
    profile = Profile(name="main", kind="custom", base_url=upstreams["first"], api_key="sk-main-0123456789",
                      via_gateway=True)
    store.add(profile)
    store.add(Profile(name="spare", kind="custom", base_url=upstreams["second"],
                      api_key="sk-spare-0123456789", via_gateway=True))
    route_clients(paths, "main", ["claude"])
    token = ensure_token(paths)
    with make_server(paths, "127.0.0.1", 0) as server:
        assert _ask(server.url, token) == (200, "first")
        assert _ask(server.url, token) == (200, "first")  # served from the copy taken on the first request

        store.update("main", profile.model_copy(update={"base_url": upstreams["down"]}))
        assert _ask(server.url, token)[0] == 503  # the edit reached the next request

        failing = {"base_url": upstreams["down"], "fallbacks": ["spare"]}
        store.update("main", profile.model_copy(update=failing))
        assert _ask(server.url, token) == (200, "second")  # so did the new fallback

        store.remove("spare")
        assert _ask(server.url, token)[0] == 503  # and the removed one is gone
