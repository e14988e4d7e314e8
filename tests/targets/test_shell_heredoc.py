"""KV Switch's markers inside a here-document are the user's text, not KV Switch's block.

Each case writes a start-up file whose here-document body contains marker lines, applies a profile
through the real target, then has the real shell source the file: the here-document must print the
user's text unchanged and the variables must come from KV Switch's (appended) block.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from kvswitch.core.errors import ConfigParseError
from kvswitch.core.models import Profile
from kvswitch.targets.shell import shell_target
from kvswitch.targets.shell_block import END_MARKER, START_MARKER, find_block
from kvswitch.targets.shell_heredoc import heredoc_lines
from support.require import require_tool

PROFILE = Profile(name="p", kind="custom", base_url="https://a.b/v1", api_key="sk-heredoc-0123456789",
                  targets=["bash"])
FAKE_BLOCK = f"{START_MARKER}\nexport ANTHROPIC_BASE_URL=http://not-ours\n{END_MARKER}\n"
HEREDOCS = {
    "plain": f"cat <<EOF > \"$HOME/out\"\n{FAKE_BLOCK}EOF\n",
    "quoted": f"cat <<'EOF' > \"$HOME/out\"\n{FAKE_BLOCK}EOF\n",
    "double-quoted": f"cat << \"END\" > \"$HOME/out\"\n{FAKE_BLOCK}END\n",
    "tab-stripped": "cat <<-EOF > \"$HOME/out\"\n"
    + "".join(f"\t{line}\n" for line in FAKE_BLOCK.splitlines())
    + "\tEOF\n",
    "two on a line": f"cat <<A <<B > \"$HOME/out\"\nignored\nA\n{FAKE_BLOCK}B\n",
    "after a here-string and arithmetic": (
        f"x=$((1<<2)); cat <<<'<<NOT' >/dev/null\ncat <<EOF > \"$HOME/out\"\n{FAKE_BLOCK}EOF\n"
    ),
}


def _env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8",
            "ZDOTDIR": str(home), "TERM": "dumb"}


def _source(shell: str, home: Path) -> str:
    rc = ".bashrc" if shell == "bash" else ".zshrc"
    cmd = [shell, "--norc", "--noprofile", "-c"] if shell == "bash" else [shell, "-f", "-c"]
    proc = subprocess.run([*cmd, f'source "$HOME/{rc}" && printf %s "$ANTHROPIC_BASE_URL"'],
                          env=_env(home), capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return proc.stdout


@pytest.mark.parametrize("shell", ["bash", "zsh"])
@pytest.mark.parametrize("case", sorted(HEREDOCS))
def test_markers_in_a_heredoc_are_left_alone_and_the_real_shell_reads_our_block(
        shell: str, case: str, tmp_path: Path) -> None:
    require_tool(shell, "scripts/dev.sh test installs it")
    rc = tmp_path / (".bashrc" if shell == "bash" else ".zshrc")
    original = f"# mine\n{HEREDOCS[case]}alias ll='ls -l'\n"
    rc.write_text(original)
    assert _source(shell, tmp_path) == "", "the fake block is text: it exports nothing"
    printed = (tmp_path / "out").read_text()
    target = shell_target(shell, _env(tmp_path))
    plan = target.plan(PROFILE, {})
    assert plan.after is not None
    assert plan.after.startswith(original), "the user's text is kept verbatim"
    target.apply(plan)
    assert _source(shell, tmp_path) == "https://a.b/v1"
    assert (tmp_path / "out").read_text() == printed
    removal = target.plan(None, plan.owned)
    target.apply(removal)
    assert rc.read_text() == original


def test_fish_has_no_heredocs_and_still_sources_its_file(tmp_path: Path) -> None:
    require_tool("fish", "scripts/dev.sh test installs it")
    env = {**_env(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    target = shell_target("fish", env)
    target.apply(target.plan(PROFILE, {}))
    proc = subprocess.run(["fish", "-c", 'printf %s "$ANTHROPIC_BASE_URL"'], env=env, capture_output=True,
                          text=True, timeout=30, check=False)
    assert proc.stdout == "https://a.b/v1", proc.stderr


def test_an_unclosed_heredoc_at_the_end_is_refused(tmp_path: Path) -> None:
    rc = tmp_path / ".bashrc"
    rc.write_text("# mine\ncat <<EOF\nnever closed\n")
    with pytest.raises(ConfigParseError, match="here-document") as info:
        shell_target("bash", _env(tmp_path)).plan(PROFILE, {})
    assert info.value.line == 2


def test_our_real_block_after_a_heredoc_is_still_found() -> None:
    content = f"cat <<EOF\n{FAKE_BLOCK}EOF\n{START_MARKER}\nexport X=1\n{END_MARKER}\n"
    span = find_block(content, "rc")
    assert span is not None
    assert span.text(content) == f"{START_MARKER}\nexport X=1\n{END_MARKER}\n"


def test_powershell_here_strings_are_text() -> None:
    content = f"$t = @'\n{FAKE_BLOCK}'@\n"
    assert find_block(content, "profile.ps1", "pwsh") is None
    assert heredoc_lines(content, "pwsh").body == frozenset({2, 3, 4, 5})
    assert find_block(content, "profile.ps1", "posix") is not None, "without the dialect it would be taken"
