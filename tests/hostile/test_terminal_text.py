"""Names a user (or an imported file) gave a profile reach the terminal through one gate,
``core.text.for_terminal``: a right-to-left override, a C1 control or an escape sequence in a profile
name is shown as ``\\uXXXX`` (or dropped, for an escape sequence), never written raw, and the JSON
forms stay the same data. Run as real ``kvswitch`` subprocesses on real files in the temporary HOME."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

#: what must never reach a terminal raw
RAW = ("\x1b", "\x07", "\x85", "\x9b", "\u202e", "\u2066", "\u2028", "\r")
#: a name that reads "evil-txt.exe" reversed on a bidi-aware terminal, with a C1 NEL and an 8-bit CSI
HOSTILE_NAME = "safe\u202eexe.txt\u2066\x85\x9b2J"


def _kvswitch(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kvswitch", *argv], env=env, capture_output=True,
                          text=True, encoding="utf-8", timeout=300, check=False)


def _no_raw(text: str) -> None:
    found = [char for char in RAW if char in text]
    assert not found, f"raw {found!r} in {text!r}"


@pytest.mark.parametrize("command", [("profile", "list"), ("profile", "show", HOSTILE_NAME),
                                     ("profile", "list", "--json")])
def test_profile_names_with_bidi_and_c1_are_shown_not_obeyed(child_env: dict[str, str],
                                                              command: tuple[str, ...]) -> None:
    added = _kvswitch(child_env, "profile", "add", HOSTILE_NAME, "--kind", "llama.cpp",
                      "--base-url", "http://127.0.0.1:9", "--model", "m\u202eodel\x1b]0;pwned\x07")
    assert added.returncode == 0, added.stderr
    _no_raw(added.stdout + added.stderr)
    shown = _kvswitch(child_env, *command)
    assert shown.returncode == 0, shown.stderr
    _no_raw(shown.stdout + shown.stderr)
    if "--json" in command:  # the same data: \u202e inside a JSON string is the character itself
        views = json.loads(shown.stdout)
        assert views[0]["name"] == HOSTILE_NAME
        assert views[0]["model"] == "m\u202eodel\x1b]0;pwned\x07"
    else:
        assert "safe\\u202eexe.txt\\u2066\\u0085\\u009b2J" in shown.stdout


def test_an_error_naming_a_hostile_profile_is_shown_not_obeyed(child_env: dict[str, str]) -> None:
    missing = _kvswitch(child_env, "use", "nosuch\u202e\x9b2J")
    assert missing.returncode != 0
    assert "nosuch\\u202e" in missing.stderr
    _no_raw(missing.stdout + missing.stderr)


def test_for_terminal_keeps_every_language_and_emoji() -> None:
    from kvswitch.core.text import for_terminal  # noqa: PLC0415

    assert for_terminal("本地 llama — café 😀\tok\n") == "本地 llama — café 😀\tok\n"
    assert for_terminal("a\x1b[31mred\x1b[0m\x1b]8;;http://x\x07link") == "aredlink"


def test_every_command_module_prints_through_the_gate() -> None:
    """No command writes to stdout/stderr except through ``out``/``err`` (or the log follower's own
    renderer, which colours lines it has already stripped of the server's escapes)."""
    commands = Path(__file__).resolve().parents[2] / "app" / "kvswitch" / "commands"
    offenders = []
    for module in sorted(commands.glob("*.py")):
        for number, line in enumerate(module.read_text(encoding="utf-8").splitlines(), 1):
            if "print(" in line and not line.lstrip().startswith("#"):
                offenders.append(f"{module.name}:{number}: {line.strip()}")
    assert not offenders, offenders


def test_the_dry_run_diff_of_a_hostile_settings_file_is_shown_not_obeyed(child_env: dict[str, str]) -> None:
    """``use --dry-run`` prints the planned diff of the user's own files, whose text may hold escape
    sequences and bidi marks (a value pasted from a terminal): through the same gate."""
    settings = Path(child_env["HOME"]) / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"env": {"NOTE": "x\x1b]0;pwned\x07\u202ey"}}, ensure_ascii=False),
                        encoding="utf-8")
    added = _kvswitch(child_env, "profile", "add", "local", "--kind", "llama.cpp",
                      "--base-url", "http://127.0.0.1:9", "--model", "m", "--target", "claude")
    assert added.returncode == 0, added.stderr
    planned = _kvswitch(child_env, "use", "local", "--dry-run")
    assert planned.returncode == 0, planned.stderr
    assert "ANTHROPIC_BASE_URL" in planned.stdout
    _no_raw(planned.stdout + planned.stderr)


#: what a hostile log line carries: clear screen, a colour, a window title (OSC ... BEL), an OSC 8 link,
#: a carriage return, an 8-bit CSI as a character (U+009B) and as a raw byte, a C1 NEL, a bidi override
LOG_EVIL = ("\x1b[2J\x1b[31mred\x1b]0;pwned\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\rover"
            "\x9b2J\x85\u202eexe.txt")
#: the only escape sequences ``log tail --color always`` may print: its own (``logs.render``)
OWN_COLOURS = ("\x1b[0m", "\x1b[1m", "\x1b[1;31m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[34m",
               "\x1b[35m", "\x1b[36m")


def _hostile_log(tmp_path: Path) -> Path:
    """The first 30 lines of a real llama-server b11434 log (cache lines, timings, a warning), with the
    hostile text appended to a timing line (inside a coloured line with bold spans), to a request line,
    and as a line of its own; one raw 0x9b byte, which is not UTF-8."""
    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    real = fixtures / "llama.cpp-b11434" / "llama_server_cc_cache_ram0.log"
    lines = real.read_bytes().splitlines()[:30]
    evil = LOG_EVIL.encode("utf-8")
    lines[15] += b" " + evil  # 0.33.803.329 I slot print_timing: ... prompt eval time = ...
    lines[21] += b" " + evil  # launch_slot_: ... processing task
    lines.insert(5, evil + b" \x9b31m raw byte")
    log = tmp_path / "hostile-server.log"
    log.write_bytes(b"\n".join(lines) + b"\n")
    return log


def _without_own_colours(text: str) -> str:
    for code in OWN_COLOURS:
        text = text.replace(code, "")
    return text


@pytest.mark.parametrize("color", ["always", "never"])
def test_log_tail_shows_hostile_log_text_neutralised_and_keeps_its_own_colours(
    child_env: dict[str, str], tmp_path: Path, color: str,
) -> None:
    log = _hostile_log(tmp_path)
    shown = _kvswitch(child_env, "log", "tail", str(log), "--no-follow", "-n", "100", "--color", color)
    assert shown.returncode == 0, shown.stderr
    _no_raw(_without_own_colours(shown.stdout) + shown.stderr)
    assert "\\u202eexe.txt" in shown.stdout  # shown as what it is, not obeyed
    assert "\\u009b2J" in shown.stdout
    assert "\\u0085" in shown.stdout
    assert "prompt eval time" in shown.stdout  # the rest of the line is intact
    if color == "always":
        assert "\x1b[36m" in shown.stdout  # the timing lines still in their colour
        assert "\x1b[1m" in shown.stdout  # and their spans in bold
    else:
        assert "\x1b" not in shown.stdout


def test_log_scan_table_shows_hostile_log_text_neutralised(child_env: dict[str, str], tmp_path: Path) -> None:
    log = _hostile_log(tmp_path)
    table = _kvswitch(child_env, "log", "scan", str(log))
    assert table.returncode == 0, table.stderr
    _no_raw(table.stdout + table.stderr)
    assert "requests:" in table.stdout
    jsonl = _kvswitch(child_env, "log", "scan", str(log), "--jsonl")
    assert jsonl.returncode == 0, jsonl.stderr
    _no_raw(jsonl.stdout)  # JSON escapes every control: the same data, nothing raw
    assert json.loads(jsonl.stdout.splitlines()[-1])["summary"]["requests"] >= 1
