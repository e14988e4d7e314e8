"""Is a KV Switch gateway running, this user's, with the token the client files hold? (``gateway status``,
``doctor``, the window's tray.)

Any JSON answer used to count as "running", and the token was sent to whatever listened on the port.
Now the asker proves the answerer first: it sends a fresh nonce to the identity route, which needs no
token, and checks the HMAC that comes back against its own copy of the token
(``core.gateway_config.identity_proof``). Only a gateway holding that token can answer right; the token
itself goes out only after that, for the full status. A missing token file is reported, never
re-issued here: a read must not change what the clients and the running gateway hold.
"""

from __future__ import annotations

import hmac
import os
import secrets
import stat
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx

from kvswitch.core import http_client
from kvswitch.core.gateway_config import (
    CLIENTS,
    IDENTITY_FIELD,
    IDENTITY_PATH,
    identity_proof,
    load_token,
    read_routes,
    read_runtimes,
    routes_file,
    token_file,
)
from kvswitch.core.http import NetworkLimitError
from kvswitch.core.paths import AppPaths
from kvswitch.core.strictparse import loads as strict_json
from kvswitch.gateway.service import STATUS_PATH

Who = Literal["ours", "absent", "foreign", "other-token", "no-token"]


@dataclass(frozen=True)
class Identity:
    """Who answered at ``url``: ``ours`` (a KV Switch gateway holding this token), ``absent`` (nothing
    answered), ``foreign`` (some other program), ``other-token`` (a KV Switch gateway checking
    another token), ``no-token`` (a KV Switch gateway, but there is no token file to check it with)."""

    who: Who
    url: str
    detail: str = ""
    instance: str | None = None


def root_url(host: str, port: int) -> str:
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}"


def identify(url: str, token: str | None, timeout: float = 2.0) -> Identity:
    """Ask ``url``'s identity route with a fresh nonce; the token is never sent."""
    nonce = secrets.token_urlsafe(24)
    try:
        with http_client.request("GET", f"{url}{IDENTITY_PATH}?nonce={nonce}", timeout=timeout,
                                 limit=1 << 16, what="the gateway") as answer:
            status, body = answer.status, answer.read()
    except (OSError, httpx.HTTPError, NetworkLimitError, ValueError) as exc:
        return Identity("absent", url, str(exc) or type(exc).__name__)
    try:
        data = strict_json(body)
    except ValueError:
        data = None
    if status != 200 or not isinstance(data, dict) or data.get(IDENTITY_FIELD) != 1:
        return Identity("foreign", url, f"HTTP {status}, not a KV Switch gateway's identity answer")
    instance = str(data.get("instance") or "") or None
    if token is None:
        return Identity("no-token", url, "a KV Switch gateway answers, but the token file is missing",
                        instance)
    proof = data.get("proof")
    port = urlsplit(url).port or 80
    if not isinstance(proof, str) or not hmac.compare_digest(proof, identity_proof(token, nonce, port)):
        return Identity("other-token", url, "a KV Switch gateway answers, but it checks another local token "
                        "than the token file holds (or a program relays another port's gateway)", instance)
    return Identity("ours", url, "", instance)


def _full_status(url: str, token: str, timeout: float) -> dict[str, Any]:
    """The status a proven gateway gives with the token (``{}`` when that fails after all)."""
    try:
        with http_client.request("GET", url + STATUS_PATH, timeout=timeout, limit=1 << 20,
                                 headers={"x-api-key": token}, what="the gateway") as answer:
            data = strict_json(answer.read()) if answer.status == 200 else None
    except (OSError, ValueError, httpx.HTTPError, NetworkLimitError):
        return {}
    return data if isinstance(data, dict) else {}


def file_mode_problems(paths: AppPaths) -> list[str]:
    """The token and routing files readable by other users (the token spends the user's keys)."""
    found = []
    for path in (token_file(paths), routes_file(paths)):
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except OSError:
            continue
        if mode & 0o077:
            found.append(f"{path}: mode {mode:o} lets other users read it (the local token spends your keys "
                         f"through the gateway); run 'chmod 600 {path}'")
    return found


_PROBLEM = {
    "absent": "nothing answers at {url}",
    "foreign": "another program answers at {url} ({detail}); the clients pointed there reach it, not KV "
               "Switch: stop it, or run 'kvswitch gateway run --listen 127.0.0.1:PORT' on a free port and "
               "'kvswitch use PROFILE' again",
    "other-token": "{detail}: every client request gets 401. The token file was replaced since that "
                   "gateway started: restart it ('kvswitch gateway run')",
    "no-token": "{detail} ({token_file}); every client request gets 401 once 'kvswitch use' issues a new "
                "one: restart the gateway, then 'kvswitch use PROFILE'",
}


def probe_status(paths: AppPaths, timeout: float = 2.0) -> dict[str, Any]:
    """``{"running": bool, "url": ..., "identity": Who, "problems": [...], "routes": ..., ...}``.

    ``running`` is true only for a proven gateway (ours). ``url`` is where the routing state points
    the clients when a gateway of ours answers there, else the newest other address one of ours
    answers on (a second gateway, stopped, leaves the first one found), else the routing state's.
    """
    routes = read_routes(paths)
    token = load_token(paths)
    wanted = root_url(routes.host, routes.port)
    candidates = list(dict.fromkeys([wanted, *(root_url(r.host, r.port) for r in read_runtimes(paths))]))
    answers = [identify(url, token, timeout) for url in candidates]
    ours = [a for a in answers if a.who == "ours"]
    chosen = next((a for a in ours if a.url == wanted), ours[0] if ours else answers[0])
    result: dict[str, Any] = {
        "running": chosen.who == "ours", "url": chosen.url, "identity": chosen.who,
        "routes": dict(routes.clients), "client_urls": {c: routes.client_url(c) for c in CLIENTS},
        "others": [a.url for a in ours if a.url != chosen.url],
    }
    problems: list[str] = []  # the files' modes are the callers' to add (doctor checks every key file)
    first = answers[0]  # the routing state's address, where 'kvswitch use' points the clients
    if first.who != "ours":
        problems.insert(0, _PROBLEM[first.who].format(url=first.url, detail=first.detail,
                                                      token_file=token_file(paths)))
        if chosen.who == "ours":
            problems.append(f"a KV Switch gateway runs at {chosen.url}, but the routing state (where "
                            f"'kvswitch use' points the clients) names {wanted}: start the gateway there "
                            f"('kvswitch gateway run --listen {urlsplit(wanted).netloc}'), or restart the "
                            f"one at {chosen.url} (it records its address) and apply the profile again")
    if not result["running"]:
        result["error"] = first.detail or _PROBLEM[first.who].format(url=first.url, detail=first.detail,
                                                                     token_file=token_file(paths))
    result["problems"] = problems
    if chosen.who == "ours" and token is not None:
        data = _full_status(chosen.url, token, timeout)
        result.update({k: v for k, v in data.items() if k not in ("routes", "running")})
    return result
