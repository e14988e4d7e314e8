"""The gateway's side of "is this my gateway, with my token?": the identity answer and the local
token as the token file holds it now.

``gateway status`` and ``doctor`` must tell this gateway from any other program on the port, and tell
whether it checks the token the client files hold, without sending the token to whoever answers. The
identity route answers anyone with a proof that only the token's holder can give (an HMAC of the
asker's fresh nonce, ``core.gateway_config.identity_proof``); the asker checks it against its own copy.

The token is re-read when its file changes: a token re-issued after the file was removed is written
into the clients by the next ``kvswitch use``, and the running gateway must then check that one, or
every request gets 401 until someone thinks of restarting it.
"""

from __future__ import annotations

import re
import secrets

from aiohttp import web

from kvswitch.core.gateway_config import (
    IDENTITY_FIELD,
    ensure_token,
    identity_proof,
    load_token,
    token_signature,
)
from kvswitch.core.paths import AppPaths

#: what a nonce may be: a short run of URL-safe characters (anything else is refused, not echoed)
_NONCE = re.compile(r"[A-Za-z0-9_-]{16,128}")


class LocalToken:
    """The token requests must carry, following the token file (kept when the file is removed, so a
    deleted file alone locks no client out)."""

    def __init__(self, paths: AppPaths):
        self.paths = paths
        self._value = ensure_token(paths)
        self._signature = token_signature(paths)

    @property
    def value(self) -> str:
        signature = token_signature(self.paths)
        if signature != self._signature:
            self._signature = signature
            fresh = load_token(self.paths)
            if fresh:
                self._value = fresh
        return self._value


#: one per gateway process and start, so two answers from the same instance can be told apart
INSTANCE = secrets.token_hex(8)


def identity_answer(request: web.Request, token: LocalToken) -> web.Response:
    """``{"kvswitch_gateway": 1, "proof": HMAC(token, nonce, port), "instance": ...}``."""
    nonce = request.query.get("nonce", "")
    if not _NONCE.fullmatch(nonce):
        return web.json_response({IDENTITY_FIELD: 1, "error": "give ?nonce= (16-128 URL-safe characters)"},
                                 status=400)
    sockname = request.transport.get_extra_info("sockname") if request.transport is not None else None
    port = int(sockname[1]) if sockname else 0  # the port this connection reached, whatever Host says
    return web.json_response({IDENTITY_FIELD: 1, "proof": identity_proof(token.value, nonce, port),
                              "instance": INSTANCE})


def offered_token(request: web.Request) -> str | None:
    """The local token as Claude Code (``x-api-key`` or Bearer) or Codex (Bearer) sends it."""
    key = request.headers.get("x-api-key")
    if key:
        return key.strip()
    auth = request.headers.get("authorization", "")
    scheme, _, value = auth.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None
