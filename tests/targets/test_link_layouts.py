"""Random symlink layouts in front of every target kind: regular files are written through the links,
everything else is refused with nothing written anywhere, and the layout itself never changes.

A layout is a chain of 0-3 symlinks (absolute or relative) from the path a target writes to an
endpoint: a regular file, nothing (a dangling link), a directory, a FIFO, a character device (made
with ``mknod`` in the temporary directory, root only) or the start of the chain again (a loop).
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvswitch.core.errors import KvSwitchError
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.targets.engine import Engine

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, device nodes and POSIX symlinks")

#: target kind -> (profile target spec, the file it writes relative to HOME, content a user might have)
KINDS: dict[str, tuple[str, str, bytes]] = {
    "claude": ("claude", ".claude/settings.json", b'{"theme": "dark"}\n'),
    "claude-project": ("claude-project:{home}/proj", "proj/.claude/settings.json", b"{}\n"),
    "codex-config": ("codex", ".codex/config.toml", b'# mine\napproval_policy = "never"\n'),
    "codex-auth": ("codex", ".codex/auth.json", b'{"tokens": null}\n'),
    "bash": ("bash", ".bashrc", b"# my bashrc\nalias ll='ls -l'\n"),
    "zsh": ("zsh", ".zshrc", b"# my zshrc\n"),
    "fish": ("fish", ".config/fish/conf.d/kvswitch.fish", b"# mine\n"),
    "pwsh": ("pwsh", ".config/powershell/Microsoft.PowerShell_profile.ps1", b"# mine\n"),
}
WRITABLE = ("regular", "missing")
ENDPOINTS = [*WRITABLE, "directory", "fifo", "loop", *(["device"] if os.geteuid() == 0 else [])]


def make_endpoint(kind: str, where: Path, content: bytes) -> None:
    where.parent.mkdir(parents=True, exist_ok=True)
    if kind == "regular":
        where.write_bytes(content)
    elif kind == "directory":
        where.mkdir()
    elif kind == "fifo":
        os.mkfifo(where)
    elif kind == "device":
        os.mknod(where, 0o666 | stat.S_IFCHR, os.makedev(1, 3))


def build(home: Path, path: Path, endpoint: str, links: list[bool], content: bytes) -> list[Path]:
    """Make the layout; returns every name in it (links first, then the endpoint)."""
    if not links:
        if endpoint in ("missing", "loop"):
            endpoint = "missing"  # a loop needs a link
        make_endpoint(endpoint, path, content)
        return [path]
    names = [path, *(home / "links" / f"l{i}" for i in range(1, len(links)))]
    real = home / "real" / "endpoint"
    make_endpoint(endpoint, real, content)
    for index, (name, relative) in enumerate(zip(names, links, strict=True)):
        following = names[index + 1] if index + 1 < len(names) else (path if endpoint == "loop" else real)
        name.parent.mkdir(parents=True, exist_ok=True)
        name.symlink_to(os.path.relpath(following, name.parent) if relative else following)
    return [*names, real]


def picture(names: list[Path]) -> list[Any]:
    """What must stay the same about a layout: links and their text, special files' identity."""
    shot: list[Any] = []
    for name in names:
        try:
            info = os.lstat(name)
        except FileNotFoundError:
            shot.append(None)
            continue
        if stat.S_ISLNK(info.st_mode):
            shot.append(("link", os.readlink(name)))
        elif stat.S_ISREG(info.st_mode):
            shot.append(("file",))
        else:
            shot.append((stat.S_IFMT(info.st_mode), info.st_ino, info.st_rdev, info.st_mtime_ns))
    return shot


def contents(home: Path) -> dict[str, bytes | None]:
    """Every regular file KV Switch could write, read through the links."""
    found: dict[str, bytes | None] = {}
    for _, rel, _ in KINDS.values():
        path = home / rel
        try:
            found[rel] = path.read_bytes() if stat.S_ISREG(os.stat(path).st_mode) else None
        except OSError:
            found[rel] = None
    return found


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(sorted(KINDS)),
    endpoint=st.sampled_from(ENDPOINTS),
    links=st.lists(st.booleans(), max_size=3),
)
def test_every_target_kind_behind_every_link_layout(kind: str, endpoint: str, links: list[bool]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        spec, rel, content = KINDS[kind]
        spec = spec.format(home=home)
        (home / "proj").mkdir()
        path = home / rel
        names = build(home, path, endpoint, links, content)
        layout = picture(names)
        before = contents(home)
        engine = Engine(AppPaths(home / "cfg", home / "cfg" / "data", home / "cfg" / "logs"),
                        env={"HOME": str(home)}, lock_timeout=5.0)
        profile = Profile(name="p", kind="openai-compatible", base_url="https://api.openai.com/v1",
                          api_key="sk-layout-0123456789", targets=[spec])
        effective = "missing" if not links and endpoint == "loop" else endpoint
        if effective not in WRITABLE:
            with pytest.raises(KvSwitchError) as info:
                engine.apply(profile)
            assert str(path) in str(info.value)
            assert picture(names) == layout, "a refused layout must be left exactly as it was"
            assert contents(home) == before, "nothing is written anywhere when one target is refused"
            return
        engine.apply(profile)
        assert picture(names)[:-1] == layout[:-1], "every symlink stays, pointing where it pointed"
        final = Path(os.path.realpath(path))
        if final.exists():
            assert stat.S_ISREG(os.lstat(final).st_mode)
            if b"sk-layout-0123456789" in final.read_bytes():
                assert stat.S_IMODE(os.stat(final).st_mode) == 0o600
        engine.undo()
        assert picture(names)[:-1] == layout[:-1]
        assert contents(home) == before, "undo puts every file back through the links"
