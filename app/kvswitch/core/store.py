"""The user's profiles, shared by the window and the CLI through one 0600 JSON file.

Both processes may edit it, so every mutation re-reads the file under a lock and every read checks
whether the file changed on disk (mtime/size/inode) and reloads, telling subscribers so a Qt model can
refresh. Old layouts are migrated forward on load; the file is only rewritten on the next change, after
a copy of the old layout has been kept beside it.

The file is read without pydantic when it is in the form the store writes (``core.quickread``, the
model's own rules): the window lists its cards from ``names()`` and ``summaries()`` before the engine
models are imported, and a ``Profile`` is built from a row only when it is asked for.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kvswitch.core import quickread
from kvswitch.core.canonical import NotCanonical
from kvswitch.core.errors import ConfigParseError, KvSwitchError, ProfileError
from kvswitch.core.fsutil import atomic_write, read_bytes
from kvswitch.core.gateway_config import clients_of_targets, read_routes
from kvswitch.core.knownsecrets import remember_secrets
from kvswitch.core.lock import FileLock
from kvswitch.core.paths import AppPaths
from kvswitch.core.store_files import SCHEMA_VERSION, STALE_TEMP_SECONDS, migrate, remove_stale_temps
from kvswitch.core.store_rows import ProfileSummary, Row, active_profile_name
from kvswitch.core.strictparse import loads_json

if TYPE_CHECKING:
    from kvswitch.core.models import Profile

__all__ = ["STALE_TEMP_SECONDS", "SCHEMA_VERSION", "ProfileStore", "migrate", "remove_stale_temps"]
Signature = tuple[int, int, int] | None
#: a file older than this cannot share its modification time with a write made now
SETTLED_NS = 2_000_000_000


class ProfileStore:
    """Profiles on disk (``paths.profiles_file``); the public API the window and the CLI use.

    - ``profiles()`` / ``get(name)``: current profiles (reloaded if another process changed the file).
    - ``names()`` / ``summaries()``: the same, as plain values (no engine models are built for them).
    - ``add`` / ``update(old_name, profile)`` / ``remove``: validated, locked, atomic, 0600.
    - ``duplicate(name)`` / ``move(name, offset)``: a copy after the original; the user's order.
    - ``active_name``: the profile in use (the engine's ledger, the gateway's routing for gateway ones).
    - ``subscribe(callback)``: called with no arguments after any change, ours or on disk.
    """

    def __init__(self, paths: AppPaths):
        self.paths = paths
        self._rows: list[Row] = []
        self._signature: Signature = None
        self._ledger_signature: Signature = None
        self._active: tuple[Signature, str | None] | None = None
        self._loaded = False
        self._subscribers: list[Callable[[], None]] = []
        self._lock_path = paths.config_dir / "profiles.lock"

    # -- reading ---------------------------------------------------------------------------------
    def profiles(self) -> list[Profile]:
        """All profiles in the user's order (copies: mutate through ``update``)."""
        self.refresh()
        return [row.profile.model_copy(deep=True) for row in self._rows]

    def names(self) -> list[str]:
        self.refresh()
        return [row.name for row in self._rows]

    def summaries(self) -> list[ProfileSummary]:
        """What the cards show, in the user's order, without building the engine models."""
        self.refresh()
        return [row.summary() for row in self._rows]

    def summary(self, name: str) -> ProfileSummary:
        """``get(name)`` as plain values; raises ``ProfileError`` as ``get`` does."""
        self.refresh()
        return self._row(name).summary()

    def get(self, name: str) -> Profile:
        """The profile called ``name``; raises ``ProfileError`` naming the ones that exist."""
        self.refresh()
        return self._row(name).profile.model_copy(deep=True)

    def _row(self, name: str) -> Row:
        found = self._find(name)
        if found is None:
            known = ", ".join(row.name for row in self._rows) or "none yet"
            raise ProfileError(
                f"no profile named {name!r} (profiles: {known}); add it with "
                f"'kvswitch profile add {name} --kind ... --base-url ...'"
            )
        return found

    @property
    def active_name(self) -> str | None:
        """The profile in use, or ``None``: the one last applied, or, when that one sends its clients
        through the gateway, the profile the gateway routes them to now (a switch between gateway
        profiles changes only the routing state, as ``kvswitch current`` reports).

        A card asks for every paint, so the ledger's answer is kept while its signature stays the same;
        a ledger changed in the last seconds is read again every time (file times are as coarse as a
        few ms, and a replaced file's inode number can come back).
        """
        signature = _stat_signature(self.paths.state_file)
        settled = signature is not None and time.time_ns() - signature[0] > SETTLED_NS
        if not (settled and self._active is not None and self._active[0] == signature):
            self._active = (signature, active_profile_name(self.paths.state_file))
        applied = self._active[1]
        return self._routed_name(applied) if applied else applied

    def _routed_name(self, applied: str) -> str:
        if not self._loaded:  # later reads follow the file (paints ask here; they must not reload)
            self.refresh()
        row = self._find(applied)
        if row is None:
            return applied
        data = row.dump()
        if not data.get("via_gateway"):
            return applied
        try:
            routes = read_routes(self.paths).clients
        except KvSwitchError:
            return applied
        for client in clients_of_targets(list(data.get("targets") or [])):
            routed = self._find(routes.get(client, ""))
            if routed is not None:
                return routed.name
        return applied

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback()`` after every change; returns a function that unsubscribes."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._subscribers.remove(callback)

        return unsubscribe

    def refresh(self) -> bool:
        """Reload if the profiles file or the ledger changed on disk; returns whether anything changed."""
        signature = _stat_signature(self.paths.profiles_file)
        ledger_signature = _stat_signature(self.paths.state_file)
        first = not self._loaded
        changed = False
        if first:
            remove_stale_temps(self.paths.profiles_file)
        if first or signature != self._signature:
            self._rows = self._read()
            self._signature = signature
            self._loaded = True
            changed = not first
        if ledger_signature != self._ledger_signature:
            self._ledger_signature = ledger_signature
            changed = changed or not first
        if changed:
            self._notify()
        return changed

    # -- writing ---------------------------------------------------------------------------------
    def add(self, profile: Profile) -> None:
        """Add a new profile; a duplicate name (case-insensitive) is refused."""
        with self._locked():
            if self._find(profile.name) is not None:
                raise ProfileError(
                    f"a profile named {profile.name!r} already exists; choose another name "
                    f"or edit it with 'kvswitch profile edit {profile.name}'"
                )
            self._rows.append(Row(profile=profile.model_copy(deep=True)))
            self._write()
        self._notify()

    def update(self, old_name: str, profile: Profile) -> None:
        """Replace profile ``old_name`` by ``profile`` (which may carry a new name)."""
        with self._locked():
            index = self._index(old_name)
            clash = self._find(profile.name)
            if clash is not None and clash.name.casefold() != old_name.casefold():
                raise ProfileError(f"a profile named {profile.name!r} already exists; choose another name")
            self._rows[index] = Row(profile=profile.model_copy(deep=True))
            self._write()
        if profile.name != old_name:
            self._rename_in_ledger(old_name, profile.name)
        self._notify()

    def fill_context_window(self, name: str, tokens: int) -> None:
        """Record a context window read from the server, unless the profile got one meanwhile.

        Only that field changes (under the lock, on the file as it is now), so an edit made by
        another process since this one read the profile is kept.
        """
        with self._locked():
            found = self._find(name)
            if found is None or found.profile.context_window is not None:
                return
            found.profile.context_window = tokens
            self._write()
        self._notify()

    def remove(self, name: str) -> Profile:
        """Delete a profile (files it was applied to keep their values until the next switch or undo)."""
        with self._locked():
            removed = self._rows.pop(self._index(name)).profile
            self._write()
        self._notify()
        return removed

    def duplicate(self, name: str, new_name: str | None = None) -> Profile:
        """Copy a profile (key included) under a free name, placed right after the original.

        Without ``new_name`` the copy is called "NAME copy", then "NAME copy 2" and so on, so
        duplicating twice never collides.
        """
        with self._locked():
            index = self._index(name)
            original = self._rows[index].profile
            chosen = new_name if new_name is not None else self._free_copy_name(original.name)
            if self._find(chosen) is not None:
                raise ProfileError(f"a profile named {chosen!r} already exists; choose another name")
            data = original.model_dump(context={"secrets": True})
            data["name"] = chosen
            copy = type(original).model_validate(data, context={"stored": True})
            self._rows.insert(index + 1, Row(profile=copy))
            self._write()
        self._notify()
        return copy.model_copy(deep=True)

    def move(self, name: str, offset: int) -> int:
        """Move a profile ``offset`` places (negative: up) in the user's order; returns its new index.

        The order is the order of the list in profiles.json, so the CLI lists profiles the same way.
        """
        with self._locked():
            index = self._index(name)
            target = max(0, min(len(self._rows) - 1, index + offset))
            if target != index:
                self._rows.insert(target, self._rows.pop(index))
                self._write()
        if target != index:
            self._notify()
        return target

    def _free_copy_name(self, name: str) -> str:
        base = f"{name[:54]} copy"  # room left for " 999"
        candidate, number = base, 2
        while self._find(candidate) is not None:
            candidate, number = f"{base} {number}", number + 1
        return candidate

    def replace_all(self, profiles: list[Profile]) -> None:
        """Reorder or bulk-replace (the GUI's drag and drop); names must be unique."""
        names = [p.name.casefold() for p in profiles]
        if len(names) != len(set(names)):
            raise ProfileError("profile names must be unique")
        with self._locked():
            self._rows = [Row(profile=p.model_copy(deep=True)) for p in profiles]
            self._write()
        self._notify()

    # -- internals -------------------------------------------------------------------------------
    def _find(self, name: str) -> Row | None:
        key = name.strip().casefold()
        return next((row for row in self._rows if row.name.casefold() == key), None)

    def _index(self, name: str) -> int:
        key = name.strip().casefold()
        for index, row in enumerate(self._rows):
            if row.name.casefold() == key:
                return index
        raise ProfileError(f"no profile named {name!r}")

    @contextlib.contextmanager
    def _locked(self) -> Any:
        with FileLock(self._lock_path, timeout=10.0, what="saving profiles"):
            self._rows = self._read()  # the other process may have changed it
            yield

    def _read(self) -> list[Row]:
        path = self.paths.profiles_file
        try:
            data = quickread.read_profiles_document(path)
        except NotCanonical:
            data = self._read_other_layout(path)
        if data is None:
            return []
        items = data.get("profiles") or []
        if not isinstance(items, list):
            raise ConfigParseError(path, "'profiles' must be a list")
        rows = [Row.load(item, path, number) for number, item in enumerate(items, 1)]
        remember_secrets([secret for row in rows for secret in row.summary().secrets])
        return rows

    def _read_other_layout(self, path: Path) -> dict[str, Any] | None:
        """A file that is not in the current layout: its errors named, older schemas migrated."""
        raw = read_bytes(path)
        if raw is None or not raw.strip():
            return None
        try:
            data = loads_json(path, raw.decode("utf-8-sig"))
        except UnicodeDecodeError as exc:
            raise ConfigParseError(path, "not UTF-8 text") from exc
        except json.JSONDecodeError as exc:
            raise ConfigParseError(path, exc.msg, exc.lineno, exc.colno) from exc
        if not isinstance(data, dict):
            raise ConfigParseError(path, "expected a JSON object with 'schema_version' and 'profiles'")
        original_version = data.get("schema_version", 1)
        try:
            data = migrate(data)
        except ValueError as exc:
            raise ConfigParseError(path, str(exc)) from exc
        if original_version != SCHEMA_VERSION:
            keep = path.with_name(f"{path.name}.schema{original_version}.bak")
            if not keep.exists():
                atomic_write(keep, raw, secret=True)
        return data

    def _write(self) -> None:
        rows = [row.written() for row in self._rows]
        payload = {"schema_version": SCHEMA_VERSION, "profiles": [row.dump() for row in rows]}
        text = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
        atomic_write(self.paths.profiles_file, text.encode("utf-8"), secret=True)
        self._rows = rows
        self._signature = _stat_signature(self.paths.profiles_file)
        self._loaded = True

    def _rename_in_ledger(self, old: str, new: str) -> None:
        from kvswitch.core.ledger import Ledger  # noqa: PLC0415 - the engine's models, for a rename only

        ledger = Ledger(self.paths.state_file)
        with FileLock(self.paths.lock_file, timeout=10.0, what="applying a profile"):
            try:
                state = ledger.load()
            except ConfigParseError:
                return
            touched = False
            if state.active == old:
                state.active, touched = new, True
            records = [*state.targets.values()]
            for tx in state.history:
                if tx.profile == old:
                    tx.profile, touched = new, True
                if tx.previous_active == old:
                    tx.previous_active, touched = new, True
                records += [r for e in tx.entries for r in (e.before_record, e.after_record) if r is not None]
            for record in records:
                if record.profile == old:
                    record.profile, touched = new, True
            if touched:
                ledger.save(state)

    def _notify(self) -> None:
        for callback in list(self._subscribers):
            callback()


def _stat_signature(path: Path) -> Signature:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)
