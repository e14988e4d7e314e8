"""Export a profile's variables from the user's shell start-up file: bash, zsh, fish and PowerShell.

One managed block per file (see ``shell_block``), every value quoted so that it cannot run (see
``shell_quote``). Only new shells see a change: a terminal that is already open keeps the values it
started with until it re-reads its start-up file, and a variable the new profile no longer sets stays
exported there too. The plan says so, so nobody is surprised.

Files are handled as UTF-8 with ``surrogateescape``: a start-up file in another encoding still comes
back byte for byte, at the price of lone surrogates (U+DC80..U+DCFF) in ``Plan.before``/``after`` for
its non-UTF-8 bytes; display code should print with ``errors="replace"``.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

from kvswitch.core.envmap import shell_env
from kvswitch.core.errors import FileAccessError
from kvswitch.core.fsutil import SECRET_MODE, atomic_delete, atomic_write, read_bytes, resolve_for_write
from kvswitch.core.ledger import digest_bytes
from kvswitch.core.models import Profile, mask_secret, mask_url, url_password
from kvswitch.core.paths import home_dir
from kvswitch.targets.base import Plan, Snapshot, Target
from kvswitch.targets.filetarget import check_unchanged
from kvswitch.targets.shell_block import (
    END_MARKER,
    START_MARKER,
    BlockSpan,
    find_block,
    put_block,
    remove_block,
)
from kvswitch.targets.shell_quote import SHELLS, check_variable, export_line, quote_for

_PWSH_PROFILE = "Microsoft.PowerShell_profile.ps1"
_ENCODING = "utf-8"
_ERRORS = "surrogateescape"
#: Variables whose values are masked when a plan is shown, besides the profile's key itself.
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
OPEN_SHELLS_NOTE = "terminals that are already open keep their old values; open a new one to use this profile"


def rc_path(shell: str, env: Mapping[str, str] | None = None, *, windows: bool | None = None) -> Path:
    """The start-up file KV Switch writes for ``shell``, as that shell finds it.

    Args:
        shell: ``bash``, ``zsh``, ``fish`` or ``pwsh``.
        env: the environment to resolve ``HOME``, ``ZDOTDIR`` and ``XDG_CONFIG_HOME`` from
            (default: this process's).
        windows: resolve PowerShell's profile as on Windows (default: whether this is Windows).
    """
    # Only this process's own environment can ask Windows where Documents really is (OneDrive may
    # have moved it); a test's or a caller's made-up environment gets ``HOME\Documents``.
    use_real_documents = env is None or env is os.environ
    env = os.environ if env is None else env
    home = home_dir(env)
    windows = sys.platform == "win32" if windows is None else windows
    if shell == "bash":
        return home / ".bashrc"
    if shell == "zsh":
        zdotdir = env.get("ZDOTDIR")
        return (_expand_home(zdotdir, home) if zdotdir else home) / ".zshrc"
    if shell == "fish":
        return _xdg_config_home(env, home) / "fish" / "conf.d" / "kvswitch.fish"
    if shell == "pwsh":
        if windows:
            return _documents_dir(home, use_real_documents) / "PowerShell" / _PWSH_PROFILE
        return _xdg_config_home(env, home) / "powershell" / _PWSH_PROFILE
    raise ValueError(f"unknown shell {shell!r}; expected one of {', '.join(SHELLS)}")


def shell_target(shell: str, env: Mapping[str, str] | None = None) -> Target:
    """The target for ``shell`` (``bash``, ``zsh``, ``fish`` or ``pwsh``) in the user's home."""
    return ShellRcTarget(shell, rc_path(shell, env))


class ShellRcTarget(Target):
    """A managed block in one shell start-up file.

    Args:
        shell: the dialect to write (also the target id).
        path: the file; for fish this is a ``conf.d`` file of KV Switch's own, deleted when the
            block is removed and nothing else is left in it.
    """

    def __init__(self, shell: str, path: Path):
        if shell not in SHELLS:
            raise ValueError(f"unknown shell {shell!r}; expected one of {', '.join(SHELLS)}")
        self.target_id = shell
        self.shell = shell
        self.path = path
        self.owns_whole_file = shell == "fish"
        #: how here-documents look in this shell (see ``shell_heredoc``)
        self.dialect = {"fish": "none", "pwsh": "pwsh"}.get(shell, "posix")

    def location(self) -> str:
        return str(self.path)

    def snapshot(self) -> Snapshot:
        content = read_bytes(self.path)
        mode = None
        if content is not None:
            try:
                mode = stat.S_IMODE(resolve_for_write(self.path).stat().st_mode)
            except OSError as exc:
                raise FileAccessError(self.path, exc.strerror or str(exc)) from exc
        return Snapshot(target_id=self.target_id, location=self.location(), content=content, mode=mode)

    def plan(self, profile: Profile | None, owned: dict[str, str]) -> Plan:
        raw = read_bytes(self.path)
        before = "" if raw is None else raw.decode(_ENCODING, _ERRORS)
        exports = shell_env(profile) if profile is not None else {}
        for name, value in exports.items():
            check_variable(name, value, str(self.path))
        span = find_block(before, self.path, self.dialect)  # raises on damaged markers before anything else
        if profile is None:
            after: str | None = remove_block(before, self.path, self.dialect)
            if raw is None or (self.owns_whole_file and not after):
                after = None  # nothing to create; or KV Switch's own file, now empty
        else:
            after = put_block(before, self._body(profile.name, exports), self.path, self.dialect)
        plan = Plan(
            target_id=self.target_id,
            location=self.location(),
            before=before,
            after=after,
            owned=dict(exports),
            existed=raw is not None,
            source_digest=digest_bytes(raw),
        )
        plan.changes = _describe_changes(
            owned, exports, block_present=span is not None, removing=profile is None
        )
        plan.secrets = self._secrets(profile, owned, exports)
        if plan.changed:
            if not plan.changes:
                plan.changes.append("rewrite the KV Switch block (new profile name, or hand edits inside it)")
            if after is None:
                plan.changes.append(f"delete {self.path} (KV Switch created it and nothing else is in it)")
            plan.warnings.extend(self._warnings(before, span, owned, exports))
        return plan

    def apply(self, plan: Plan) -> None:
        self._check_plan(plan)
        check_unchanged(self.path, plan)
        if not plan.changed:
            return
        if plan.after is None:
            atomic_delete(self.path)
            return
        atomic_write(self.path, plan.after.encode(_ENCODING, _ERRORS), secret=_holds_secret(plan))

    def restore(self, snapshot: Snapshot) -> None:
        if snapshot.target_id != self.target_id or snapshot.location != self.location():
            raise ValueError(f"snapshot of {snapshot.location} cannot restore {self.location()}")
        if snapshot.content is None:
            atomic_delete(self.path)
            return
        real = atomic_write(self.path, snapshot.content, mode=snapshot.mode)
        if snapshot.mode is not None:
            try:
                os.chmod(real, snapshot.mode)
            except OSError as exc:
                raise FileAccessError(real, exc.strerror or str(exc)) from exc

    def _body(self, profile_name: str, exports: Mapping[str, str]) -> list[str]:
        label = "".join(ch if ch.isprintable() else "?" for ch in profile_name)
        note = (
            f"# Managed by KV Switch (profile: {label}). Edits inside this block are replaced; "
            "open shells keep their old values."
        )
        return [note, *(export_line(self.shell, name, value) for name, value in exports.items())]

    def _secrets(
        self, profile: Profile | None, owned: Mapping[str, str], exports: Mapping[str, str]
    ) -> list[str]:
        values = profile.secrets if profile is not None else []
        for mapping in (owned, exports):
            values.extend(value for name, value in mapping.items() if _SECRET_NAME.search(name) and value)
        secrets: list[str] = []
        for value in values:
            for form in (value, quote_for(self.shell, value)):
                if form not in secrets:
                    secrets.append(form)
        return secrets

    def _warnings(
        self, before: str, block: BlockSpan | None, owned: Mapping[str, str], exports: Mapping[str, str]
    ) -> list[str]:
        warnings = [OPEN_SHELLS_NOTE]
        if block is not None:
            expected = [export_line(self.shell, name, value) for name, value in owned.items()]
            found = [
                line.strip()
                for line in block.text(before).split("\n")
                if line.strip() and not line.strip().startswith("#")
            ]
            if found != expected:
                warnings.append(
                    f"the KV Switch block in {self.path} is not what KV Switch last wrote there (edited by "
                    "hand?); it will be replaced as a whole"
                )
        if exports and _holds_secret_values(exports) and self.path.exists():
            try:
                mode = stat.S_IMODE(resolve_for_write(self.path).stat().st_mode)
            except OSError:
                mode = SECRET_MODE
            if mode & 0o077:
                warnings.append(
                    f"{self.path} will be made readable by you only (0600): it will hold the API key"
                )
        return warnings

    def _check_plan(self, plan: Plan) -> None:
        if plan.target_id != self.target_id or plan.location != self.location():
            raise ValueError(f"plan for {plan.location} cannot be applied to {self.location()}")


def _describe_changes(
    owned: Mapping[str, str], exports: Mapping[str, str], *, block_present: bool, removing: bool
) -> list[str]:
    changes = []
    for name, value in exports.items():
        if name not in owned:
            changes.append(f"export {name} = {_show(name, value)}")
        elif owned[name] != value:
            changes.append(f"change {name} = {_show(name, value)}")
    changes.extend(f"stop exporting {name} (in new shells)" for name in owned if name not in exports)
    if removing and block_present and not owned:
        changes.append(f"remove the block between '{START_MARKER}' and '{END_MARKER}'")
    return changes


def _show(name: str, value: str) -> str:
    """A value for a change line: masked when the name says it is a secret, a URL's password masked."""
    if _SECRET_NAME.search(name):
        return mask_secret(value)
    return json.dumps(mask_url(value), ensure_ascii=False)


def _holds_secret(plan: Plan) -> bool:
    return _holds_secret_values(plan.owned)


def _holds_secret_values(exports: Mapping[str, str]) -> bool:
    """A credential-named export, or a URL with a password in it: the file is then kept 0600."""
    return any(value and (_SECRET_NAME.search(name) or url_password(value) is not None)
               for name, value in exports.items())


def _expand_home(value: str, home: Path) -> Path:
    if value == "~" or value.startswith("~/"):
        return home / value[2:]
    return Path(value)


def _xdg_config_home(env: Mapping[str, str], home: Path) -> Path:
    configured = env.get("XDG_CONFIG_HOME")
    # The XDG spec says relative values are invalid and must be ignored.
    if configured and Path(configured).is_absolute():
        return Path(configured)
    return home / ".config"


def _documents_dir(home: Path, use_real_documents: bool) -> Path:
    """``Documents`` as Windows knows it (it may be redirected, e.g. into OneDrive)."""
    if use_real_documents and sys.platform == "win32":
        import platformdirs

        return platformdirs.user_documents_path()
    return home / "Documents"
