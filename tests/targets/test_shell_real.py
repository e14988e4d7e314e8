"""Real bash, zsh and fish read the block KV Switch writes and get back every value byte for byte.

Each example writes a profile with several hostile values through the real target into a temporary
HOME, starts the real shell the way a user's terminal would source the file, and reads the exported
environment back with ``env -0``. Command substitutions in the values would create a sentinel file;
it must never appear.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kvswitch.core.envmap import shell_env
from kvswitch.core.models import PROFILE_NAME_RE, Profile
from kvswitch.targets.shell import shell_target
from support.require import require_tool

SENTINEL = "kvswitch-pwned"
#: Fragments that would run ``touch SENTINEL`` (in the shell's cwd or in ~) if any dialect let them.
HOSTILE = [
    f"$(touch {SENTINEL})",
    f"`touch {SENTINEL}`",
    f"(touch {SENTINEL})",
    f"'; touch {SENTINEL}; '",
    f'"; touch {SENTINEL}; "',
    f"\ntouch {SENTINEL}\n",
    f"\r\ntouch ~/{SENTINEL}\r\n",
    f"'$(touch ~/{SENTINEL})'",
    f"\\'; touch {SENTINEL}; #",
    f"$(touch {SENTINEL})'\\''",
    f"; touch {SENTINEL} &",
    f"| touch {SENTINEL}",
    f"&& touch {SENTINEL}",
    "'", '"', "\\", "\\'", "\\\\", "'\\''", "''", "\\n", "\\x41", "\\u0041", "`", "`n", "$", "${HOME}",
    "$HOME", "$env:HOME", "%PATH%", "%", "!", "!!", "!$", "!-1", "^a^b", "~", "~root", "-", "-e", "-h",
    "--help", "--", "*", "?", "[a-z]", "{a,b}", "#", " # comment", "\t", " ", "\n", "\r", "\r\n", "\n\n",
    "\x1b[31m", "\x01", "\x7f", "\x85", "\u2028", "\u2029", "\ufeff", "\u2018", "\u2019", "\u201a", "\u201b",
    "\u201c", "😀", "\U0010ffff", "\uf600", "\uf6ff", "\ue000", "é", "ß", "中文", "# >>> kvswitch >>>",
    "\n# <<< kvswitch <<<\n", "\n# >>> kvswitch >>>\n", "=", "a=b", ";", "&", "|", ">", "<", "<(x)", "()",
]
SHELLS = ("bash", "zsh", "fish")
VAR_NAMES = [f"KVS_V{i}" for i in range(8)]

_chars = st.characters(codec="utf-8", exclude_characters="\x00")
values = st.lists(st.one_of(st.text(_chars, max_size=12), st.sampled_from(HOSTILE)), max_size=5).map("".join)
_name_chars = st.characters(codec="utf-8", exclude_characters="/\\")
profile_names = st.text(_name_chars, min_size=1, max_size=12).filter(
    lambda name: PROFILE_NAME_RE.fullmatch(name.strip()) is not None
)


@st.composite
def profiles(draw: st.DrawFn, shell: str) -> Profile:
    return Profile(
        name=draw(profile_names),
        base_url=draw(st.sampled_from(["http://127.0.0.1:8080", "https://gw.example.com/v1/x%20y"])),
        api_key=draw(st.one_of(st.none(), values)) or None,
        model=draw(st.one_of(st.none(), values)) or None,
        env=draw(st.dictionaries(st.sampled_from(VAR_NAMES), values, min_size=1, max_size=6)),
        targets=["claude", "codex", shell],
    )


def _shell_env(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LC_ALL": "C.UTF-8",
        "ZDOTDIR": str(home / "zdot"),
        "XDG_CONFIG_HOME": str(home / "xdg"),
        "TERM": "dumb",
    }


def _command(shell: str, zsh_options: str = "") -> list[str]:
    if shell == "bash":
        return ["bash", "--norc", "--noprofile", "-c", 'source "$HOME/.bashrc" && exec env -0']
    if shell == "zsh":
        return ["zsh", "-f", "-c", f'{zsh_options}source "$ZDOTDIR/.zshrc" && exec env -0']
    # fish reads ``$XDG_CONFIG_HOME/fish/conf.d/*.fish`` itself at start-up, as in a terminal.
    return ["fish", "-c", "exec env -0"]


def exported(cmd: list[str], env: Mapping[str, str], cwd: Path) -> dict[str, bytes]:
    """Run ``cmd`` (which ends with ``env -0``) and return the environment it printed."""
    proc = subprocess.run(cmd, env=dict(env), cwd=cwd, capture_output=True, timeout=30, check=False)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    assert proc.stderr == b"", proc.stderr.decode(errors="replace")
    result: dict[str, bytes] = {}
    for entry in proc.stdout.split(b"\0"):
        if entry:
            name, _, value = entry.partition(b"=")
            result[name.decode()] = value
    return result


def write_profile(shell: str, home: Path, profile: Profile) -> None:
    target = shell_target(shell, _shell_env(home))
    plan = target.plan(profile, {})
    target.apply(plan)
    again = target.plan(profile, plan.owned)
    assert not again.changed, "applying the same profile twice must change nothing"


def check_round_trip(shell: str, home: Path, profile: Profile) -> None:
    for leftover in (home / SENTINEL, home / "cwd" / SENTINEL):
        leftover.unlink(missing_ok=True)
    write_profile(shell, home, profile)
    expected = shell_env(profile)
    runs = [_command(shell)]
    if shell == "zsh":
        runs.append(_command(shell, "setopt rc_quotes; "))
    for cmd in runs:
        env = exported(cmd, _shell_env(home), home / "cwd")
        for name, value in expected.items():
            assert env.get(name) == value.encode("utf-8"), f"{shell} read {name} back wrong via {cmd[-1]!r}"
        for name in VAR_NAMES:
            if name not in expected:
                assert name not in env
    assert not (home / SENTINEL).exists()
    assert not (home / "cwd" / SENTINEL).exists()


@pytest.fixture
def shell_home(tmp_path: Path) -> Path:
    (tmp_path / "cwd").mkdir()
    return tmp_path


def _needs(shell: str) -> None:
    require_tool(shell, "scripts/dev.sh test installs it")


@pytest.mark.slow
@pytest.mark.parametrize("shell", SHELLS)
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_real_shell_reads_back_hostile_values_exactly(
    shell: str, shell_home: Path, data: st.DataObject
) -> None:
    _needs(shell)
    check_round_trip(shell, shell_home, data.draw(profiles(shell)))


@pytest.mark.parametrize("shell", SHELLS)
def test_every_hostile_fragment_stays_a_string(shell: str, shell_home: Path) -> None:
    _needs(shell)
    env = {f"KVS_V{i % 8}_{i // 8}": fragment for i, fragment in enumerate(HOSTILE)}
    env["KVS_ALL"] = "".join(HOSTILE)
    profile = Profile(name="hostile", base_url="http://127.0.0.1:8080", api_key=f"k'$(touch {SENTINEL})`x`",
                      env=env, targets=["claude", "codex", shell])
    check_round_trip(shell, shell_home, profile)


@pytest.mark.parametrize("shell", ["bash", "zsh"])
@example(value="a'b!!c")
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.lists(st.sampled_from(["!", "!!", "!$", "'", "\n", "a", "^x^y", "\\", "$'", '"']), max_size=8)
       .map("".join))
def test_block_pasted_into_interactive_shell_with_history_expansion(shell: str, shell_home: Path,
                                                                     value: str) -> None:
    """Typing or pasting the block into an interactive prompt (history expansion on) gives the same value."""
    _needs(shell)
    profile = Profile(name="p", base_url="http://127.0.0.1:8080", env={"KVS_V0": value}, targets=[shell])
    write_profile(shell, shell_home, profile)
    path = shell_home / (".bashrc" if shell == "bash" else "zdot/.zshrc")
    lines = path.read_text(encoding="utf-8")
    if shell == "bash":
        cmd = ["bash", "--norc", "--noprofile", "-i"]
        script = "set -H\n" + lines + "exec env -0\n"
    else:
        cmd = ["zsh", "-f", "-i"]
        script = "setopt bang_hist\n" + lines + "exec env -0\n"
    proc = subprocess.run(cmd, input=script.encode(), env=_shell_env(shell_home), cwd=shell_home / "cwd",
                          capture_output=True, timeout=30, check=False)
    printed = dict(entry.partition(b"=")[::2] for entry in proc.stdout.split(b"\0") if entry)
    assert printed.get(b"KVS_V0") == value.encode(), proc.stderr.decode(errors="replace")


@pytest.mark.parametrize(("shell", "line"), [
    ("bash", f"export KVS_V0=$(touch {SENTINEL})"),
    ("zsh", f"export KVS_V0=`touch {SENTINEL}`"),
    ("fish", f"set -gx KVS_V0 (touch {SENTINEL})"),
])
def test_the_sentinel_catches_an_unquoted_value(shell: str, line: str, shell_home: Path) -> None:
    """The harness would notice: the same run with one hand-written unquoted line does create the file."""
    _needs(shell)
    path = shell_target(shell, _shell_env(shell_home)).location()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(line + "\n")
    exported(_command(shell), _shell_env(shell_home), shell_home / "cwd")
    assert (shell_home / "cwd" / SENTINEL).exists()
