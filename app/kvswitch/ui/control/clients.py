"""Which client a verify runs, what it is called, where its binary is, and how a switch names the clients
it wrote: shared by the controller, the Verify tab, the cards and the tray (the buttons themselves live in
``kvswitch.ui.verify.verify_clients``).

Plain functions over plain values: the controller calls them and emits what they answer, so this module
never needs the controller (the two used to import each other).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QCoreApplication

from kvswitch.core.errors import KvSwitchError

#: the clients offered next to Claude Code, in the order shown
MORE_CLIENTS = ("codex", "opencode")
_LABELS = {"claude": "Claude Code", "codex": "Codex", "opencode": "OpenCode"}
_SHELLS = ("bash", "zsh", "fish", "pwsh")


def client_label(client: str) -> str:
    return _LABELS.get(client, client)


def client_of_target(target_id: str) -> str:
    """The client a target writes for: ``claude-project:/x`` → ``claude``, ``zsh`` → ``shell``."""
    prefix = target_id.partition(":")[0]
    if prefix.startswith("claude"):
        return "claude"
    if prefix.startswith("opencode"):
        return "opencode"
    if prefix in _SHELLS or prefix == "windows-env":
        return "shell"
    return prefix.partition("-")[0]  # ``codex-auth``: Codex's key file


def client_name(client: str) -> str:
    """A client's name as the window says it (a shell is "shell" in the UI language)."""
    if client == "shell":
        return QCoreApplication.translate("ClientNames", "shell")
    return client_label(client)


def clients_text(target_ids: Iterable[str]) -> str:
    """``Claude Code and Codex`` / ``Claude Code, Codex and bash``: the clients a switch wrote, in order."""
    names: list[str] = []
    for target_id in target_ids:
        client = client_of_target(target_id)
        name = target_id.partition(":")[0] if client == "shell" else client_name(client)
        if name not in names:
            names.append(name)
    if not names:
        return ""
    if len(names) == 1:
        return names[0]
    joined = QCoreApplication.translate("ClientNames", "%1 and %2")
    return joined.replace("%1", ", ".join(names[:-1])).replace("%2", names[-1])


class ClientUnavailable(Exception):
    """No binary to run for a client; ``str()`` is the sentence the window shows."""


def locate_client_binary(client: str, option: str | None) -> Path:
    """The client to run (``option``: the binary the user chose, None for PATH); raises
    ``ClientUnavailable`` with the reason to show."""
    from kvswitch.verify.client_run import ClientMissing, find_client  # noqa: PLC0415

    try:
        return find_client(client, option)
    except ClientMissing as exc:
        if client == "claude":
            text = QCoreApplication.translate(
                "AppController", "Claude Code is not installed here (no “claude” on PATH), so nothing was "
                "verified. Install Claude Code, or use “Verify cache” for the synthetic check.")
        else:
            text = QCoreApplication.translate("VerifyClients", "Nothing was verified: %1")
            text = text.replace("%1", str(exc))
        raise ClientUnavailable(text) from exc
    except KvSwitchError as exc:
        raise ClientUnavailable(str(exc)) from exc


def cancelled_text(client: str) -> str:
    translate = QCoreApplication.translate
    if client == "claude":
        return translate("AppController", "Verify cancelled; the running Claude Code was stopped.")
    text = translate("VerifyClients", "Verify cancelled; the running %1 was stopped.")
    return text.replace("%1", client_label(client))


def target_client_key(target_id: str) -> str:
    """The ``LiveClient.key`` a target writes: ``claude`` → ``claude:user``, ``bash`` → ``shell:bash``,
    ``claude-project:/x`` → ``claude:project:/x`` (so a tray section lists the profiles it can switch)."""
    prefix, _, rest = target_id.partition(":")
    if prefix == "claude":
        return "claude:user"
    if prefix in ("claude-project", "claude-local"):
        return f"claude:project:{rest}"
    if client_of_target(target_id) == "shell":
        return f"shell:{prefix}"
    return prefix.partition("-")[0]


def serves_client(targets: Iterable[str], client_key: str, client: str) -> bool:
    """Whether a profile with these targets switches the live client ``client_key``."""
    keys = {target_client_key(t) for t in targets}
    return client_key in keys or (client == "opencode" and "opencode" in keys)
