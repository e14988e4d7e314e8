"""The managed block in real start-up files: placement, idempotence, exact removal, damage, modes."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kvswitch.core.errors import ConfigParseError, FileAccessError, UsageError
from kvswitch.core.models import Profile
from kvswitch.core.paths import AppPaths
from kvswitch.targets.base import Target
from kvswitch.targets.engine import Engine
from kvswitch.targets.shell import OPEN_SHELLS_NOTE, ShellRcTarget, rc_path, shell_target
from kvswitch.targets.shell_block import ADDED_BREAK_NOTE, END_MARKER, START_MARKER

ALL_SHELLS = ("bash", "zsh", "fish", "pwsh")
LOCAL = Profile(name="local", base_url="http://127.0.0.1:8080", model="qwen",
                env={"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}, targets=["claude", "bash"])
GATEWAY = Profile(name="gateway", base_url="https://gw.example.com", api_key="sk-test-1234567890abcdef",
                  env={"EXTRA": "it's $(x)"}, targets=["claude", "codex", "bash"])


def env_for(home: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), **extra}


def apply(target: Target, profile: Profile | None, owned: dict[str, str] | None = None) -> dict[str, str]:
    plan = target.plan(profile, owned or {})
    target.apply(plan)
    return plan.owned


# -- placement and idempotence -------------------------------------------------------------------------

@pytest.mark.parametrize("shell", ALL_SHELLS)
def test_apply_twice_changes_nothing_and_remove_leaves_no_trace(shell: str, tmp_path: Path) -> None:
    target = shell_target(shell, env_for(tmp_path))
    path = Path(target.location())
    assert not path.exists()
    owned = apply(target, LOCAL)
    first = path.read_bytes()
    assert first.startswith(START_MARKER.encode())
    assert first.endswith((END_MARKER + "\n").encode())
    assert b"profile: local" in first
    again = target.plan(LOCAL, owned)
    assert not again.changed
    assert again.after == again.before
    target.apply(again)
    assert path.read_bytes() == first
    owned = apply(target, GATEWAY, owned)
    assert b"gateway" in path.read_bytes()
    removal = target.plan(None, owned)
    assert removal.owned == {}
    target.apply(removal)
    if shell == "fish":
        assert not path.exists(), "the conf.d file is KV Switch's own and goes away when empty"
    else:
        assert path.read_bytes() == b""


def test_block_is_appended_after_user_content_and_replaced_in_place(tmp_path: Path) -> None:
    rc = tmp_path / ".bashrc"
    rc.write_bytes(b"# my bashrc\nalias ll='ls -l'\n")
    target = shell_target("bash", env_for(tmp_path))
    owned = apply(target, LOCAL)
    text = rc.read_text()
    assert text.startswith("# my bashrc\nalias ll='ls -l'\n" + START_MARKER + "\n")
    rc.write_text(text + "export AFTER=1\n")  # another tool appends below the block
    owned = apply(target, GATEWAY, owned)
    text = rc.read_text()
    assert text.startswith("# my bashrc\nalias ll='ls -l'\n" + START_MARKER + "\n")
    assert text.endswith(END_MARKER + "\nexport AFTER=1\n")
    assert text.count(START_MARKER) == 1
    assert "sk-test" in text
    apply(target, None, owned)
    assert rc.read_bytes() == b"# my bashrc\nalias ll='ls -l'\nexport AFTER=1\n"


def test_file_without_final_newline_gets_it_back_exactly(tmp_path: Path) -> None:
    rc = tmp_path / ".bashrc"
    rc.write_bytes(b"export PS1='$ '")
    target = shell_target("bash", env_for(tmp_path))
    owned = apply(target, LOCAL)
    text = rc.read_text()
    assert text.startswith("export PS1='$ '\n" + START_MARKER + "\n" + ADDED_BREAK_NOTE + "\n")
    owned = apply(target, GATEWAY, owned)  # replacing keeps the note
    assert ADDED_BREAK_NOTE in rc.read_text()
    apply(target, None, owned)
    assert rc.read_bytes() == b"export PS1='$ '"


def test_added_line_break_stays_when_a_tool_appended_below_the_block(tmp_path: Path) -> None:
    rc = tmp_path / ".bashrc"
    rc.write_bytes(b"echo hi")
    target = shell_target("bash", env_for(tmp_path))
    owned = apply(target, LOCAL)
    rc.write_bytes(rc.read_bytes() + b"export FROM_TOOL=1\n")
    apply(target, None, owned)
    assert rc.read_bytes() == b"echo hi\nexport FROM_TOOL=1\n"


def test_crlf_file_keeps_crlf_and_every_other_byte(tmp_path: Path) -> None:
    original = "\ufeff$env:Path += ';C:\\tools'\r\nSet-Alias ll Get-ChildItem\r\n".encode()
    target = ShellRcTarget("pwsh", rc_path("pwsh", env_for(tmp_path), windows=True))
    path = Path(target.location())
    assert path == tmp_path / "Documents" / "PowerShell" / "Microsoft.PowerShell_profile.ps1"
    path.parent.mkdir(parents=True)
    path.write_bytes(original)
    owned = apply(target, GATEWAY)
    data = path.read_bytes()
    assert data.startswith(original)
    block = data[len(original):]
    assert block.count(b"\r\n") == block.count(b"\n"), "every block line ends in CRLF"
    assert b"$env:EXTRA = 'it''s $(x)'\r\n" in block
    assert not target.plan(GATEWAY, owned).changed
    apply(target, None, owned)
    assert path.read_bytes() == original


def test_crlf_block_in_the_middle_is_found_and_replaced(tmp_path: Path) -> None:
    rc = tmp_path / ".bashrc"
    rc.write_bytes(f"a\r\n{START_MARKER}\r\nexport OLD='1'\r\n{END_MARKER}\r\nb\r\n".encode())
    target = shell_target("bash", env_for(tmp_path))
    plan = target.plan(LOCAL, {"OLD": "1"})
    assert "stop exporting OLD (in new shells)" in plan.changes
    target.apply(plan)
    data = rc.read_bytes()
    assert data.startswith(f"a\r\n{START_MARKER}\r\n".encode())
    assert data.endswith(f"{END_MARKER}\r\nb\r\n".encode())
    assert b"OLD" not in data
    assert b"\r\n" in data
    assert b"\n" not in data.replace(b"\r\n", b"")


def test_non_utf8_bytes_survive_exactly(tmp_path: Path) -> None:
    original = b"# caf\xe9 latin-1\nexport X=\xff\xfe\n"
    rc = tmp_path / ".bashrc"
    rc.write_bytes(original)
    target = shell_target("bash", env_for(tmp_path))
    owned = apply(target, LOCAL)
    assert rc.read_bytes().startswith(original)
    apply(target, None, owned)
    assert rc.read_bytes() == original


_line_chars = st.characters(codec="utf-8", exclude_characters="\n")
_near_misses = ["", "\r", "# >>> kvswitch", "#<<< kvswitch <<<x", "export A='b'"]
_lines = st.lists(st.one_of(st.text(_line_chars, max_size=20), st.sampled_from(_near_misses)), max_size=8)


@st.composite
def rc_contents(draw: st.DrawFn) -> bytes:
    if draw(st.booleans()):
        return draw(st.binary(max_size=60))
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    text = eol.join(draw(_lines)) + draw(st.sampled_from(["", eol]))
    return text.encode("utf-8")


def _has_marker(data: bytes) -> bool:
    lines = data.decode("utf-8", "surrogateescape").split("\n")
    return any(line.strip().lstrip("\ufeff").strip() in (START_MARKER, END_MARKER) for line in lines)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(original=rc_contents(), shell=st.sampled_from(["bash", "zsh", "pwsh"]), twice=st.booleans())
def test_apply_then_remove_gives_back_the_original_bytes(tmp_path: Path, original: bytes, shell: str,
                                                         twice: bool) -> None:
    assume(not _has_marker(original))
    target = shell_target(shell, env_for(tmp_path, ZDOTDIR=str(tmp_path / "z")))
    path = Path(target.location())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(original)
    owned = apply(target, LOCAL)
    assert path.read_bytes().startswith(original)
    assert not target.plan(LOCAL, owned).changed
    if twice:
        owned = apply(target, GATEWAY, owned)
        assert path.read_bytes().startswith(original)
    apply(target, None, owned)
    assert path.read_bytes() == original


# -- paths ---------------------------------------------------------------------------------------------

def test_paths_follow_home_zdotdir_and_xdg(tmp_path: Path) -> None:
    home = tmp_path
    assert rc_path("bash", env_for(home)) == home / ".bashrc"
    assert rc_path("zsh", env_for(home)) == home / ".zshrc"
    assert rc_path("zsh", env_for(home, ZDOTDIR=str(home / "zdot"))) == home / "zdot" / ".zshrc"
    assert rc_path("zsh", env_for(home, ZDOTDIR="~/cfg/zsh")) == home / "cfg" / "zsh" / ".zshrc"
    assert rc_path("fish", env_for(home)) == home / ".config" / "fish" / "conf.d" / "kvswitch.fish"
    assert rc_path("fish", env_for(home, XDG_CONFIG_HOME="/x")) == Path("/x/fish/conf.d/kvswitch.fish")
    assert rc_path("fish", env_for(home, XDG_CONFIG_HOME="rel")) == home / ".config/fish/conf.d/kvswitch.fish"
    unix_profile = home / ".config" / "powershell" / "Microsoft.PowerShell_profile.ps1"
    assert rc_path("pwsh", env_for(home), windows=False) == unix_profile
    windows_profile = home / "Documents" / "PowerShell" / "Microsoft.PowerShell_profile.ps1"
    assert rc_path("pwsh", env_for(home), windows=True) == windows_profile
    with pytest.raises(ValueError, match="unknown shell"):
        shell_target("tcsh", env_for(home))


def test_zdotdir_is_where_a_real_interactive_zsh_reads_the_block(tmp_path: Path) -> None:
    zdot = tmp_path / "zdot"
    target = shell_target("zsh", env_for(tmp_path, ZDOTDIR=str(zdot)))
    apply(target, GATEWAY)
    assert (zdot / ".zshrc").is_file()
    assert not (tmp_path / ".zshrc").exists()
    proc = subprocess.run(["zsh", "-i", "-c", "printf '%s\\0' \"$EXTRA\" \"$ANTHROPIC_BASE_URL\""],
                          env={"HOME": str(tmp_path), "ZDOTDIR": str(zdot), "PATH": os.environ["PATH"],
                               "TERM": "dumb"},
                          capture_output=True, timeout=30, check=False, stdin=subprocess.DEVNULL)
    assert proc.stdout == b"it's $(x)\0https://gw.example.com\0", proc.stderr


def test_fish_honours_xdg_config_home(tmp_path: Path) -> None:
    xdg = tmp_path / "elsewhere"
    target = shell_target("fish", env_for(tmp_path, XDG_CONFIG_HOME=str(xdg)))
    apply(target, GATEWAY)
    assert (xdg / "fish" / "conf.d" / "kvswitch.fish").is_file()
    proc = subprocess.run(["fish", "-c", "printf '%s\\0' $EXTRA"],
                          env=env_for(tmp_path, XDG_CONFIG_HOME=str(xdg), PATH=os.environ["PATH"]),
                          capture_output=True, timeout=30, check=False)
    assert proc.stdout == b"it's $(x)\0", proc.stderr


def test_fish_file_with_user_lines_is_kept_when_the_block_goes(tmp_path: Path) -> None:
    target = shell_target("fish", env_for(tmp_path))
    path = Path(target.location())
    owned = apply(target, LOCAL)
    path.write_bytes(path.read_bytes() + b"set -gx MINE 1\n")
    apply(target, None, owned)
    assert path.read_bytes() == b"set -gx MINE 1\n"


def test_removing_when_nothing_was_written_creates_nothing(tmp_path: Path) -> None:
    for shell in ALL_SHELLS:
        target = shell_target(shell, env_for(tmp_path))
        plan = target.plan(None, {})
        assert not plan.changed
        assert plan.changes == []
        target.apply(plan)
        assert not Path(target.location()).exists()


# -- symlinks, modes, snapshots ------------------------------------------------------------------------

def test_symlinked_bashrc_stays_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "bashrc"
    real.parent.mkdir()
    real.write_bytes(b"# dotfiles repo\n")
    link = tmp_path / ".bashrc"
    link.symlink_to(real)
    target = shell_target("bash", env_for(tmp_path))
    snap = target.snapshot()
    owned = apply(target, LOCAL)
    assert link.is_symlink()
    assert START_MARKER.encode() in real.read_bytes()
    apply(target, None, owned)
    assert link.is_symlink()
    assert real.read_bytes() == b"# dotfiles repo\n"
    apply(target, GATEWAY)
    target.restore(snap)
    assert link.is_symlink()
    assert real.read_bytes() == b"# dotfiles repo\n"


def test_key_makes_the_file_private_and_restore_puts_mode_and_bytes_back(tmp_path: Path) -> None:
    rc = tmp_path / ".bashrc"
    rc.write_bytes(b"# mine\n")
    rc.chmod(0o644)
    target = shell_target("bash", env_for(tmp_path))
    snap = target.snapshot()
    assert snap.content == b"# mine\n"
    assert snap.mode == 0o644
    plan = target.plan(GATEWAY, {})
    assert any("0600" in warning for warning in plan.warnings)
    assert OPEN_SHELLS_NOTE in plan.warnings
    target.apply(plan)
    assert stat.S_IMODE(rc.stat().st_mode) == 0o600
    target.restore(snap)
    assert rc.read_bytes() == b"# mine\n"
    assert stat.S_IMODE(rc.stat().st_mode) == 0o644


def test_restore_of_an_absent_file_deletes_what_was_created(tmp_path: Path) -> None:
    target = shell_target("fish", env_for(tmp_path))
    snap = target.snapshot()
    assert snap.content is None
    apply(target, GATEWAY)
    assert Path(target.location()).exists()
    target.restore(snap)
    assert not Path(target.location()).exists()


def test_secrets_cover_the_key_in_clear_and_as_quoted(tmp_path: Path) -> None:
    profile = Profile(name="p", base_url="http://h:1", api_key="sk-it's-secret-0123",
                      targets=["codex", "bash"])
    for shell, quoted in (("bash", "'sk-it'\\''s-secret-0123'"), ("fish", "'sk-it\\'s-secret-0123'"),
                          ("pwsh", "'sk-it''s-secret-0123'")):
        plan = shell_target(shell, env_for(tmp_path)).plan(profile, {})
        assert "sk-it's-secret-0123" in plan.secrets
        assert quoted in plan.secrets
        assert quoted in (plan.after or "")
        assert all("secret" not in change for change in plan.changes)


def test_stale_plan_is_refused(tmp_path: Path) -> None:
    rc = tmp_path / ".bashrc"
    target = shell_target("bash", env_for(tmp_path))
    plan = target.plan(LOCAL, {})
    rc.write_bytes(b"# written meanwhile\n")
    with pytest.raises(FileAccessError, match="changed since"):
        target.apply(plan)
    assert rc.read_bytes() == b"# written meanwhile\n"


def test_hand_edits_inside_the_block_are_announced(tmp_path: Path) -> None:
    target = shell_target("bash", env_for(tmp_path))
    owned = apply(target, LOCAL)
    rc = tmp_path / ".bashrc"
    rc.write_text(rc.read_text().replace("qwen", "llama"))
    plan = target.plan(LOCAL, owned)
    assert plan.changed
    assert any("not what KV Switch last wrote" in w for w in plan.warnings)
    target.apply(plan)
    assert "'qwen'" in rc.read_text()


# -- damage and bad values -----------------------------------------------------------------------------

@pytest.mark.parametrize(("content", "line", "words"), [
    (f"a\n{START_MARKER}\nexport A=1\n", 2, "no '# <<< kvswitch <<<'"),
    (f"{START_MARKER}\n{END_MARKER}\nx\n{START_MARKER}\n{END_MARKER}\n", 4, "second KV Switch block"),
    (f"{START_MARKER}\n{START_MARKER}\n{END_MARKER}\n", 2, "second '# >>> kvswitch >>>'"),
    (f"x\ny\n  {END_MARKER}\n", 3, "without a matching"),
])
def test_damaged_markers_are_reported_with_line_and_nothing_is_written(
        tmp_path: Path, content: str, line: int, words: str) -> None:
    rc = tmp_path / ".bashrc"
    rc.write_text(content)
    target = shell_target("bash", env_for(tmp_path))
    for profile in (LOCAL, None):
        with pytest.raises(ConfigParseError, match=words) as info:
            target.plan(profile, {})
        assert info.value.line == line
        assert str(info.value).startswith(f"{rc}:{line}: ")
    assert rc.read_text() == content


@pytest.mark.parametrize("shell", ALL_SHELLS)
def test_nul_and_surrogates_are_refused_without_showing_the_value(shell: str, tmp_path: Path) -> None:
    target = shell_target(shell, env_for(tmp_path))
    with_nul = Profile(name="p", base_url="http://h:1", api_key="sk-abc\x00def", targets=["bash"])
    with pytest.raises(UsageError, match="ANTHROPIC_AUTH_TOKEN.*NUL") as info:
        target.plan(with_nul, {})
    assert "sk-abc" not in str(info.value)
    with_surrogate = Profile(name="p", base_url="http://h:1", model="q\ud800", targets=["bash"])
    with pytest.raises(UsageError, match="ANTHROPIC_MODEL.*surrogate"):
        target.plan(with_surrogate, {})
    assert not Path(target.location()).exists()


def test_directory_in_place_of_the_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / ".bashrc").mkdir()
    with pytest.raises(FileAccessError, match="is a directory"):
        shell_target("bash", env_for(tmp_path)).plan(LOCAL, {})


def test_block_right_after_a_byte_order_mark_keeps_the_mark(tmp_path: Path) -> None:
    target = ShellRcTarget("pwsh", rc_path("pwsh", env_for(tmp_path), windows=True))
    path = Path(target.location())
    path.parent.mkdir(parents=True)
    path.write_bytes(f"\ufeff{START_MARKER}\r\n$env:OLD = '1'\r\n{END_MARKER}\r\nSet-Location ~\r\n".encode())
    owned = apply(target, LOCAL, {"OLD": "1"})
    assert path.read_bytes().startswith(f"\ufeff{START_MARKER}\r\n".encode())
    apply(target, None, owned)
    assert path.read_bytes() == "\ufeffSet-Location ~\r\n".encode()


def test_engine_apply_switch_and_undo_give_back_the_exact_files(fake_home: Path) -> None:
    original = b"# caf\xe9\r\nalias ll='ls -l'"  # latin-1 byte, CRLF, no final newline
    (fake_home / ".bashrc").write_bytes(original)
    fish_file = fake_home / ".config" / "fish" / "conf.d" / "kvswitch.fish"
    engine = Engine(AppPaths.default(), lock_timeout=2.0)
    local = LOCAL.model_copy(update={"targets": ["bash", "fish"]})
    remote = GATEWAY.model_copy(update={"targets": ["bash"]})
    engine.apply(local)
    assert fish_file.exists()
    engine.apply(remote)
    assert not fish_file.exists(), "fish is no longer a target: its block (and file) went away"
    assert b"gw.example.com" in (fake_home / ".bashrc").read_bytes()
    engine.undo()
    assert fish_file.exists()
    assert b"127.0.0.1:8080" in (fake_home / ".bashrc").read_bytes()
    engine.undo()
    assert not fish_file.exists()
    assert (fake_home / ".bashrc").read_bytes() == original
