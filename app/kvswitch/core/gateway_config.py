"""The gateway's fixed points, shared by the gateway and by the writers that point clients at it.

Pure data and small file helpers, no server code: ``targets`` computes what to write into a client's
files (the gateway URL for that client, the local token) from here without importing the gateway,
and ``kvswitch use`` changes where a client is routed by writing the routing state file, which the
running gateway re-reads when it changes.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from kvswitch.core.errors import KvSwitchError
from kvswitch.core.fsutil import SECRET_MODE, atomic_write
from kvswitch.core.knownsecrets import remember_secrets
from kvswitch.core.paths import AppPaths
from kvswitch.core.strictparse import loads as strict_json

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8788
#: the clients the gateway serves, and the URL path each is pointed at (its "base URL" below the root)
GatewayClient = Literal["claude", "codex"]
CLIENTS: tuple[GatewayClient, ...] = ("claude", "codex")
CLIENT_PATHS: dict[GatewayClient, str] = {"claude": "/claude", "codex": "/codex/v1"}
#: ``/p/NAME/...`` sends a request to profile NAME whatever the routing state says
PIN_PREFIX = "/p/"
#: the profile targets that make a client talk to the gateway
CLAUDE_TARGET_PREFIXES = ("claude",)
TOKEN_BYTES = 32


def token_file(paths: AppPaths) -> Path:
    """The local token the gateway accepts (0600 in the config dir, next to the keys it protects)."""
    return paths.config_dir / "gateway-token"


def routes_file(paths: AppPaths) -> Path:
    """Which profile serves each client through the gateway (written by ``kvswitch use``)."""
    return paths.config_dir / "gateway-routes.json"


def runtime_file(paths: AppPaths) -> Path:
    """Written by older versions (one running gateway): read when no per-address file exists."""
    return paths.data_dir / "gateway-running.json"


def runtime_dir(paths: AppPaths) -> Path:
    """One file per running gateway (``<pid>-<port>.json``): its pid and address (``gateway status``,
    ``doctor``). Per gateway, so the second one stopping leaves the first one's record alone."""
    return paths.data_dir / "gateway-running"


def usage_db(paths: AppPaths) -> Path:
    return paths.data_dir / "usage.sqlite3"


def load_token(paths: AppPaths) -> str | None:
    """The local token, or ``None`` before the first one was issued."""
    try:
        text = token_file(paths).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    remember_secrets([text])  # an upstream echoing it must not put it in a log line or a usage row
    return text or None


def ensure_token(paths: AppPaths) -> str:
    """The local token, issued (random, 0600) on first use."""
    existing = load_token(paths)
    if existing:
        return existing
    token = "kvs-" + secrets.token_urlsafe(TOKEN_BYTES)
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(token_file(paths), (token + "\n").encode("ascii"), mode=SECRET_MODE)
    remember_secrets([token])
    return token


#: answered without the token: proves a KV Switch gateway holding *this* token listens, without the
#: asker sending the token (another program on the port would be sent it otherwise)
IDENTITY_PATH = "/_kvswitch/identity"
IDENTITY_FIELD = "kvswitch_gateway"
_PROOF_CONTEXT = b"kvswitch gateway identity v1\0"


def identity_proof(token: str, nonce: str, port: int) -> str:
    """HMAC-SHA256 of the asker's fresh ``nonce`` and the port it was asked on, under the token: only a
    holder of the token can give it, it tells nothing about the token (nor is it a token: nothing
    accepts it), and a program relaying the question to the real gateway on another port gets a proof
    for that port, not the one it listens on, so it is not taken for the gateway (nor sent the token)."""
    message = _PROOF_CONTEXT + nonce.encode("utf-8") + b"\0" + str(port).encode("ascii")
    return hmac.new(token.encode("utf-8"), message, "sha256").hexdigest()


def token_signature(paths: AppPaths) -> tuple[int, int, int] | None:
    """The token file's (inode, size, mtime): a running gateway re-reads the token when it changes,
    so a token re-issued after the file was removed is the one it checks (not a stale copy)."""
    try:
        info = os.stat(token_file(paths))
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns


def token_matches(expected: str, offered: str | None) -> bool:
    """Constant-time comparison, so the token cannot be guessed byte by byte from response times."""
    if not offered:
        return False
    return hmac.compare_digest(expected.encode("utf-8", "replace"), offered.encode("utf-8", "replace"))


@dataclass
class Routes:
    """The routing state: the gateway's address, and the profile each client's requests go to."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    clients: dict[str, str] = field(default_factory=dict)
    updated: float = 0.0

    @property
    def root_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def client_url(self, client: GatewayClient) -> str:
        return self.root_url + CLIENT_PATHS[client]


class RoutesError(KvSwitchError):
    """The routing state file cannot be read."""


def read_routes(paths: AppPaths) -> Routes:
    """The routing state (defaults when the file does not exist yet)."""
    file = routes_file(paths)
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        return Routes()
    except OSError as exc:
        raise RoutesError(f"{file}: {exc.strerror}") from None
    if len(raw) > 1 << 20:
        raise RoutesError(f"{file}: larger than 1 MB, not a routing state")
    try:
        data = strict_json(raw)
    except ValueError as exc:
        raise RoutesError(f"{file}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise RoutesError(f"{file}: expected a JSON object")
    clients = data.get("clients") if isinstance(data.get("clients"), dict) else {}
    port = data.get("port")
    return Routes(
        host=str(data.get("host") or DEFAULT_HOST),
        port=port if isinstance(port, int) and 0 < port < 65536 else DEFAULT_PORT,
        clients={str(k): str(v) for k, v in (clients or {}).items() if k in CLIENTS and isinstance(v, str)},
        updated=float(data.get("updated") or 0.0),
    )


def write_routes(paths: AppPaths, routes: Routes) -> None:
    """Atomically replace the routing state; a running gateway picks it up on its next request."""
    routes.updated = time.time()
    data = {"host": routes.host, "port": routes.port, "clients": dict(sorted(routes.clients.items())),
            "updated": routes.updated}
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(routes_file(paths), (json.dumps(data, indent=2) + "\n").encode("utf-8"), mode=SECRET_MODE)


def route_clients(paths: AppPaths, profile_name: str, clients: list[GatewayClient]) -> Routes:
    """Send ``clients`` to ``profile_name`` from their next request on."""
    routes = read_routes(paths)
    for client in clients:
        routes.clients[client] = profile_name
    write_routes(paths, routes)
    return routes


#: the targets that export variables rather than write one client's file
SHELL_TARGETS = frozenset({"bash", "zsh", "fish", "pwsh", "windows-env"})
#: (client protocol, upstream protocol) pairs a gateway bridge converts (``gateway.bridges.pick_bridge``;
#: a test keeps the two in step): a ``--protocol`` outside these has nothing to speak it
BRIDGED_PROTOCOLS = frozenset({("anthropic", "openai_chat"), ("openai_responses", "openai_chat")})


def is_claude_target(target: str) -> bool:
    return target == "claude" or target.startswith(("claude-project:", "claude-local:"))


def is_opencode_target(target: str) -> bool:
    return target == "opencode" or target.startswith("opencode-project:")


def clients_of_targets(targets: list[str]) -> list[GatewayClient]:
    """The gateway clients a profile's target list reaches (Claude Code scopes count as ``claude``).

    Shell targets export Claude Code's variables, so a profile of shell targets alone reaches Claude
    Code; beside a Codex or OpenCode target they carry that client's key variable only.
    """
    found: list[GatewayClient] = []
    shell_only = bool(targets) and all(t in SHELL_TARGETS for t in targets)
    if shell_only or any(is_claude_target(t) for t in targets):
        found.append("claude")
    if "codex" in targets:
        found.append("codex")
    return found


@dataclass(frozen=True)
class RuntimeInfo:
    pid: int
    host: str
    port: int
    started: float
    mode: str = "gateway"


def _runtime_of(data: object) -> RuntimeInfo | None:
    if not isinstance(data, dict):
        return None
    try:
        return RuntimeInfo(int(data["pid"]), str(data["host"]), int(data["port"]), float(data["started"]),
                           str(data.get("mode", "gateway")))
    except (ValueError, KeyError, TypeError):
        return None


def read_runtimes(paths: AppPaths) -> list[RuntimeInfo]:
    """What every gateway that said it is running wrote, newest first (some may have died since:
    only an answer on the address tells; ``gateway.probe``)."""
    found: list[RuntimeInfo] = []
    try:
        files = sorted(runtime_dir(paths).glob("*.json"))
    except OSError:
        files = []
    for file in [*files, runtime_file(paths)]:
        try:
            info = _runtime_of(strict_json(file.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
        if info is not None:
            found.append(info)
    return sorted(found, key=lambda info: info.started, reverse=True)


def read_runtime(paths: AppPaths) -> RuntimeInfo | None:
    """The newest running gateway's record; ``None`` when none did (or it is unreadable)."""
    found = read_runtimes(paths)
    return found[0] if found else None


def _runtime_path(paths: AppPaths, pid: int, port: int) -> Path:
    return runtime_dir(paths) / f"{pid}-{port}.json"


def write_runtime(paths: AppPaths, info: RuntimeInfo) -> None:
    """Record ``info``; a record of the same address left by a gateway that died is dropped (this one
    just bound the address, so that one no longer listens there)."""
    folder = runtime_dir(paths)
    folder.mkdir(parents=True, exist_ok=True)
    for other in read_runtimes(paths):
        if (other.host, other.port) == (info.host, info.port) and other.pid != info.pid:
            with contextlib.suppress(OSError):
                os.unlink(_runtime_path(paths, other.pid, other.port))
    data = {"pid": info.pid, "host": info.host, "port": info.port, "started": info.started, "mode": info.mode}
    target = _runtime_path(paths, info.pid, info.port)
    atomic_write(target, json.dumps(data).encode("utf-8"), mode=SECRET_MODE)


def clear_runtime(paths: AppPaths, pid: int, port: int | None = None) -> None:
    """Remove this process's record (of the gateway on ``port``, or all of them); another gateway's
    record stays, so a second gateway stopping leaves the first one findable."""
    for info in read_runtimes(paths):
        if info.pid == pid and (port is None or info.port == port):
            with contextlib.suppress(OSError):
                os.unlink(_runtime_path(paths, info.pid, info.port))
    legacy = runtime_file(paths)
    try:
        old = _runtime_of(strict_json(legacy.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return
    if old is not None and old.pid == pid:
        with contextlib.suppress(OSError):
            os.unlink(legacy)
