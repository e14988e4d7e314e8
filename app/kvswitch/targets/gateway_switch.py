"""A switch between gateway profiles by routing alone: when the clients' files already point at the
gateway, only the gateway's routing state changes, so running sessions follow from their next request
and no file is rewritten (``kvswitch use`` and the window's "Use" decide it here, the same way). Not
when the new profile sets an environment entry the previous one did not set to the same value: the
client reads those from its files (Claude Code's ``CLAUDE_CODE_ATTRIBUTION_HEADER``, for one), so no
routing can apply them and the files are written. Entries only the previous profile set stay, as before
(a local profile's cache-safe env is harmless for a cloud one)."""

from __future__ import annotations

from kvswitch.core.errors import ProfileError
from kvswitch.core.gateway_config import GatewayClient, clients_of_targets, route_clients
from kvswitch.core.models import Profile
from kvswitch.core.store import ProfileStore
from kvswitch.targets.engine import Engine


def clients_already_at_gateway(engine: Engine, store: ProfileStore, profile: Profile) -> bool:
    """``profile`` goes through the gateway, the profile last applied did too with the same targets, and
    its files are as it left them: switching is then only a change of the gateway's routing state."""
    if not profile.via_gateway:
        return False
    current = engine.current()
    if current is None:
        return False
    try:
        previous = store.get(current)
    except ProfileError:
        return False
    if not previous.via_gateway or set(previous.targets) != set(profile.targets):
        return False
    if any(previous.env.get(name) != value for name, value in profile.env.items()):
        return False  # an entry the files do not have yet: the client reads it there, only a write applies it
    return not any(plan.changed for plan in engine.plan(previous))


def route_profile(engine: Engine, profile: Profile) -> list[GatewayClient]:
    """Send ``profile``'s clients to it from their next request on; returns those clients."""
    clients = clients_of_targets(profile.targets)
    route_clients(engine.paths, profile.name, clients)
    return clients
