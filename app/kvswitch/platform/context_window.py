"""A local profile's context window, read from its own server: one answer for every path that makes or
uses a profile.

``kvswitch profile add`` and ``use`` always did this; the window's editor, gallery, setup assistant and
Use did not, so a profile made there left Claude Code assuming a window of 1m tokens (it compacts far
too late, and the server refuses the request) and Codex its default of 272k. All of them now call the
functions here. Kept free of httpx at import: the CLI loads it with every profile command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvswitch.core.profile_rules import CONTEXT_WINDOW_RANGE

if TYPE_CHECKING:
    from kvswitch.core.models import Profile
    from kvswitch.core.store import ProfileStore


def usable_context(tokens: int | None) -> int | None:
    """A server's per-request context if a profile may hold it; an absurd ``n_ctx`` gives no hint
    rather than a wrong one."""
    if tokens is None or not CONTEXT_WINDOW_RANGE[0] <= tokens <= CONTEXT_WINDOW_RANGE[1]:
        return None
    return tokens


def with_server_context(profile: Profile) -> tuple[Profile, str | None]:
    """``profile`` with ``context_window`` read from its local server when it has none yet.

    Returns the profile (a copy when filled) and a note for the user, or ``None`` when nothing was
    read: not a local kind, a window already set (by the user or an earlier read), or a server that is
    down or unknown (no error: the next ``use`` asks again).
    """
    if not profile.is_local or profile.context_window is not None:
        return profile, None
    from kvswitch.platform.probe import server_context_window  # noqa: PLC0415 - httpx only when needed

    found = usable_context(server_context_window(profile.base_url))
    if found is None:
        return profile, None
    filled = profile.model_copy(update={"context_window": found})
    return filled, f"context window: {found} tokens per request, read from the server's /props"


def stored_with_server_context(store: ProfileStore, name: str) -> tuple[Profile, str | None]:
    """The stored profile ``name`` about to be used, with the window its server reports recorded in the
    store (only that field, so an edit another process made meanwhile is kept); the note as above."""
    profile, note = with_server_context(store.get(name))
    if note is not None and profile.context_window is not None:
        store.fill_context_window(profile.name, profile.context_window)
    return profile, note
