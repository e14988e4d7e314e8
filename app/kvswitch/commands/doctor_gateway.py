"""``doctor``'s gateway checks: what the client files point at, and whether that answers them.

A client file pointing at the gateway can fail in ways no single file shows: nothing listens on the
port it names (the gateway was started elsewhere with ``--listen``), another program does, the gateway
checks another token than the file holds, or the route it lands on has no profile (a shell exporting
Claude Code's variables for a profile that routes only Codex). Each is a client retrying or hanging in
every session, so each is one finding here, with the command that fixes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from kvswitch.core.gateway_config import CLIENT_PATHS, GatewayClient, load_token, read_routes
from kvswitch.core.ledger import TargetRecord
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.targets.route_check import CLIENT_NAMES

#: the owned keys (ledger paths) a client's gateway URL and token are written under
_URL_KEYS: dict[GatewayClient, tuple[str, ...]] = {
    "claude": ("env.ANTHROPIC_BASE_URL", "ANTHROPIC_BASE_URL"),
    "codex": (".base_url",),
}
_TOKEN_KEYS = ("env.ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN", ".experimental_bearer_token",
               "KVSWITCH_API_KEY")
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


@dataclass(frozen=True)
class Pointer:
    """One file sending ``client`` to a gateway at ``root``."""

    location: str
    client: GatewayClient
    root: str
    token: str | None


def _gateway_root(url: str, client: GatewayClient) -> str | None:
    """``http://host:port`` when ``url`` is a gateway's route for ``client`` on loopback, else ``None``."""
    parts = urlsplit(url)
    if parts.scheme != "http" or (parts.hostname or "") not in _LOOPBACK:
        return None
    if parts.path.rstrip("/") != CLIENT_PATHS[client]:
        return None
    return f"{parts.scheme}://{parts.netloc}"


def pointers(records: list[TargetRecord]) -> list[Pointer]:
    """Every client file (by KV Switch's ledger) that points a client at a gateway."""
    found = []
    for record in records:
        token = next((v for k, v in record.owned.items() if k.endswith(_TOKEN_KEYS)), None)
        for client, keys in _URL_KEYS.items():
            for key, value in record.owned.items():
                root = _gateway_root(value, client) if key.endswith(keys) else None
                if root is not None:
                    found.append(Pointer(record.location, client, root, token))
    return found


def gateway_findings(paths: AppPaths, records: list[TargetRecord], profiles: list[Profile],
                     active: Profile | None, timeout: float = 3.0) -> list[str]:
    """The findings for the files that point at a gateway (and the gateway itself when the active
    profile goes through it)."""
    from kvswitch.gateway.control import probe_status  # noqa: PLC0415 - aiohttp only when it matters
    from kvswitch.gateway.probe import identify  # noqa: PLC0415

    pointed = pointers(records)
    if not pointed and not (active is not None and active.via_gateway):
        return []
    findings: list[str] = []
    routes = read_routes(paths)
    token = load_token(paths)
    names = {p.name for p in profiles}
    again = f"'kvswitch use {active.name}'" if active is not None else "'kvswitch use PROFILE'"
    for pointer in pointed:
        name = CLIENT_NAMES[pointer.client]
        routed = routes.clients.get(pointer.client)
        if routed is None:
            findings.append(f"{pointer.location} points {name} at the gateway, but no profile is routed to "
                            f"{pointer.client}: every request gets 503. Apply a gateway profile with a "
                            f"{pointer.client} target, or 'kvswitch undo'")
        elif routed not in names:
            findings.append(f"{pointer.location} points {name} at the gateway, which routes it to profile "
                            f"{routed!r}, which no longer exists: every request gets 503")
        if pointer.root != routes.root_url:
            findings.append(f"{pointer.location} points {name} at {pointer.root}, but the gateway's address "
                            f"is now {routes.root_url}: run {again} to write it")
        if token is not None and pointer.token is not None and pointer.token != token:
            findings.append(f"{pointer.location} holds another local token than the gateway's token file: "
                            f"every request gets 401; run {again} to write the current one")
    status = probe_status(paths, timeout=timeout)
    if not status["running"]:
        findings.append(f"the clients point at the KV Switch gateway at {status['url']}, which is not "
                        f"running ({status.get('error', 'no answer')}); start it with 'kvswitch gateway run' "
                        "(at login: 'kvswitch autostart on --gateway'), or go back to the direct setup with "
                        "'kvswitch undo'")
    findings.extend(f"gateway: {problem}" for problem in status.get("problems", [])
                    if not str(problem).startswith("nothing answers"))
    for root in sorted({p.root for p in pointed} - {routes.root_url}):
        seen = identify(root, token, timeout)
        if seen.who != "ours":
            said = "nothing answers" if seen.who == "absent" else seen.detail
            findings.append(f"at {root}, where client files point, {said}")
    return findings


def moved_address_notes(paths: AppPaths, listening: str) -> list[str]:
    """What ``gateway run`` says when it listens elsewhere than the client files point: the files are
    not rewritten by starting a gateway, so it names the files and the command that rewrites them."""
    from kvswitch.core.errors import KvSwitchError  # noqa: PLC0415
    from kvswitch.targets.engine import Engine  # noqa: PLC0415 - only to read the ledger

    try:
        state = Engine(paths).state()
    except KvSwitchError:
        return []
    again = f"'kvswitch use {state.active}'" if state.active else "'kvswitch use PROFILE'"
    return [f"note: {pointer.location} still points {CLIENT_NAMES[pointer.client]} at {pointer.root}; run "
            f"{again} to point it here" for pointer in pointers(list(state.targets.values()))
            if pointer.root != listening]
