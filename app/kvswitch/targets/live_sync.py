"""Saving a profile some client runs now: write it through to exactly those clients, or say they differ.

A profile saved without reaching the files it is live in leaves the card saying *active* while the
client runs the old values. So a save first asks ``live`` which clients run the profile (judged with the
profile as it was before the save: afterwards the files no longer match it), then writes the new
version to those clients only, through the engine (one journaled apply: the same preview, backups and
``undo`` as ``use``). A client that runs another profile is not touched, and no other client's file is
cleaned up (``Engine.apply(cleanup=False)``).

With write-through off (``AppSettings.write_through_live``; ``kvswitch profile edit --no-write-through``)
only the profile is saved; ``live`` then reports those clients as ``differs`` and ``write_to_clients``
is the one call that applies it to them.

Clients that reach the profile through the gateway need no file: the gateway reads the saved profile on
its next request. When the gateway tick itself changed, or the profile was renamed, their files are
written again (pointing at the gateway or away from it) and the routing follows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kvswitch.core.errors import KvSwitchError
from kvswitch.core.gateway_config import GatewayClient, clients_of_targets, route_clients
from kvswitch.core.ledger import ProfileEdit, TargetRecord
from kvswitch.core.lock import FileLock
from kvswitch.core.models import Profile
from kvswitch.core.store import ProfileStore
from kvswitch.targets.engine import Engine
from kvswitch.targets.live import LiveClient, client_label, live_clients
from kvswitch.targets.outcome import ApplyResult
from kvswitch.targets.profile_undo import saved_edit
from kvswitch.targets.registry import targets_for_spec

SHELL_LABELS = ("bash", "zsh", "fish", "pwsh", "windows-env")


@dataclass
class SaveOutcome:
    """What saving (or re-applying) a profile did to the clients that run it.

    ``written``: labels of the clients whose files were rewritten (``result`` is the engine's apply:
    ``undo`` puts them back); ``rerouted``: gateway clients now routed to it, no file written;
    ``follows``: gateway clients that use the new version from their next request, nothing to do;
    ``differs``: clients left running the earlier version (write-through off, or not applicable).
    """

    profile: str
    written: list[str] = field(default_factory=list)
    rerouted: list[str] = field(default_factory=list)
    follows: list[str] = field(default_factory=list)
    differs: list[str] = field(default_factory=list)
    result: ApplyResult | None = None
    #: why writing through failed (the profile is saved; ``differs`` names the clients not written)
    error: str | None = None

    @property
    def clients(self) -> list[str]:
        """Every client the save reached, in the order the messages name them."""
        return list(dict.fromkeys([*self.written, *self.rerouted, *self.follows]))

    def message(self) -> str:
        """What happened to the clients, as one English sentence for the CLI ('' when no client ran the
        profile); the window builds its translated text from the lists."""
        parts = []
        if self.written:
            parts.append("wrote it to " + ", ".join(self.written))
        if self.rerouted:
            parts.append("routed " + ", ".join(self.rerouted) + " to it through the gateway")
        if self.follows:
            parts.append(", ".join(self.follows) + " use it from the next request (through the gateway)")
        joined = "; ".join(parts)
        text = joined[:1].upper() + joined[1:] + "." if parts else ""
        if self.error:
            text += f" Writing it to the clients failed, nothing was written: {self.error}."
        if self.differs:
            text += (f" {', '.join(self.differs)} still run the earlier version: apply it with "
                     f"'kvswitch use {self.profile}'.")
        return text.strip()


def running(clients: Sequence[LiveClient], name: str) -> list[LiveClient]:
    """The clients whose live file runs profile ``name`` (or was applied it and now differs)."""
    key = name.casefold()
    return [c for c in clients if c.profile is not None and c.profile.casefold() == key]


def save_profile(store: ProfileStore, engine: Engine, old_name: str, profile: Profile, *,
                 write_through: bool = True) -> SaveOutcome:
    """Save ``profile`` in place of ``old_name`` and bring the clients that ran it along (see module)."""
    before = store.get(old_name)
    live = running(live_clients(engine.paths, store.profiles(), engine.env), old_name)
    store.update(old_name, profile)
    outcome = SaveOutcome(profile.name)
    if not live:
        if write_through and (profile.via_gateway or before.via_gateway):
            _refresh_picker(store, engine, outcome)
        return outcome
    renamed = before.name != profile.name
    tick_changed = before.via_gateway != profile.via_gateway
    to_write: list[LiveClient] = []
    for client in live:
        if client.via_gateway and profile.via_gateway and not tick_changed and not client.differs:
            (outcome.rerouted if renamed else outcome.follows).append(client.label)
        else:
            to_write.append(client)
    if renamed and outcome.rerouted:
        route_clients(engine.paths, profile.name, _gateway_clients([c.target_id for c in live]))
    if not write_through:
        outcome.differs = [c.label for c in to_write]
        return outcome
    try:
        written = write_to_clients(engine, profile, to_write, edit=saved_edit(before, profile))
    except KvSwitchError as exc:
        outcome.error = str(exc)
        outcome.differs = [c.label for c in to_write]
        return outcome
    written.rerouted = [*outcome.rerouted, *written.rerouted]
    written.follows = outcome.follows
    return written


def _refresh_picker(store: ProfileStore, engine: Engine, outcome: SaveOutcome) -> None:
    """A gateway profile was saved while Claude Code or Codex runs another one through the gateway:
    that one is written again to the client's files, so its model picker (Claude Code's ``/model``,
    Codex's catalog) lists the saved profile's models (one journaled apply each, which ``undo`` takes
    back)."""
    clients = live_clients(engine.paths, store.profiles(), engine.env)
    for key in ("claude:user", "codex"):
        client = next((c for c in clients if c.key == key and c.via_gateway and c.profile), None)
        if client is None or client.profile is None:
            continue
        try:
            refreshed = write_to_clients(engine, store.get(client.profile), [client])
        except KvSwitchError as exc:
            outcome.error = f"the model picker was not refreshed: {exc}"
            return
        outcome.written += [label for label in refreshed.written if label not in outcome.written]
        outcome.result = refreshed.result


def write_to_clients(engine: Engine, profile: Profile, clients: Sequence[LiveClient], *,
                     edit: ProfileEdit | None = None) -> SaveOutcome:
    """Apply ``profile`` to these clients only (the one call a ``differs`` badge makes); ``edit``: the
    save this writes through, which an undo of these writes puts back too."""
    outcome = SaveOutcome(profile.name)
    targets = [c.target_id for c in clients if c.target_id in profile.targets]
    outcome.differs = [c.label for c in clients if c.target_id not in profile.targets]
    if not targets:
        return outcome
    narrowed = profile.model_copy(update={"targets": targets})
    outcome.result = engine.apply(narrowed, cleanup=False, edit=edit)
    outcome.written = written_clients(outcome.result, engine)
    if profile.via_gateway:
        gateway = _gateway_clients(targets)
        route_clients(engine.paths, profile.name, gateway)
        outcome.rerouted = [label for label in (client_label(t, engine.env) for t in targets)
                            if label not in outcome.written and _routes_label(label, gateway)]
    return outcome


def switch_message(name: str, written: list[str], routed: list[str]) -> str:
    """Which clients a switch reached, by name: only those written or re-routed (a Codex-only profile
    says Codex, not "Claude Code and Codex")."""
    parts = []
    if written:
        parts.append(f"new {', '.join(written)} sessions use {name!r}")
    if routed:
        parts.append(f"{', '.join(routed)} routed to {name!r} through the gateway")
    if not parts:
        return f"no client file needed to change: the clients that {name!r} targets already run it"
    text = "; ".join(parts)
    if any(label in written for label in SHELL_LABELS):
        text += " (open shells keep their old values until they re-read their start-up file)"
    return text[:1].upper() + text[1:]


def written_clients(result: ApplyResult, engine: Engine) -> list[str]:
    """The clients an apply actually rewrote a file of, named for a message (Codex's two files once)."""
    written = set(result.written)
    labels = [client_label(p.target_id, engine.env) for p in result.plans if p.location in written]
    return list(dict.fromkeys(labels))


def _gateway_clients(target_ids: Sequence[str]) -> list[GatewayClient]:
    return clients_of_targets(list(target_ids))


def _routes_label(label: str, gateway: Sequence[GatewayClient]) -> bool:
    if label.startswith("Claude Code"):
        return "claude" in gateway
    return label == "Codex" and "codex" in gateway


def mark_live(engine: Engine, marks: Mapping[str, str]) -> list[str]:
    """Record that each target id runs the named profile, without writing the client's file: what an
    import found live (CC Switch's current provider, today's ``settings.json``). ``live`` then prefers
    that profile among equals and reports ``differs`` once the file stops matching it.

    Ownership is untouched (KV Switch still owns no key there, so undo and cleanup leave the file as it
    is). A target whose file already runs another profile is not marked. Returns the ids marked.
    """
    profiles = {name.casefold() for name in marks.values()}
    if not marks or not profiles:
        return []
    marked: list[str] = []
    with FileLock(engine.paths.lock_file, timeout=engine.lock_timeout):
        state = engine.ledger.load()
        for target_id, name in marks.items():
            record = state.targets.get(target_id)
            if record is None:
                location = targets_for_spec(target_id, engine.env)[0].location()
                state.targets[target_id] = TargetRecord(location=location, profile=name)
            else:
                record.profile = name
            marked.append(target_id)
        engine.ledger.save(state)
    return marked


def imported_marks(engine: Engine, store: ProfileStore, current: Mapping[str, str]) -> dict[str, str]:
    """Of ``current`` (target id -> imported profile), the ones the live file does not contradict: it
    matches that profile, or no profile at all (a CC Switch database copied from another machine whose
    current provider the file here does not run is not marked)."""
    clients = {c.target_id: c for c in live_clients(engine.paths, store.profiles(), engine.env)}
    marks = {}
    for target_id, name in current.items():
        live = clients.get(target_id)
        if live is not None and live.path is not None and live.path.exists() and live.profile in (None, name):
            marks[target_id] = name
    return marks
