"""Issue 20, item 6 (first half): bytes that are not UTF-8 in an argument or in an environment variable
KV Switch reads give one line naming it and exit 2, never exit 70.

The first cases pass real bytes to a real ``kvswitch`` process (``os.execv`` hands them on as they
are); the rest pass what Python makes of such bytes (lone surrogates) to the CLI in-process.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvswitch.cli import READ_ENVIRONMENT, main
from support.measured import run_kvswitch

BAD = b"\xff\xfe\xc3("
PROFILE = ["--kind", "custom", "--base-url", "http://127.0.0.1:9", "--model", "m", "--target", "claude"]


@pytest.mark.parametrize(("argv", "named"), [
    ([b"profile", b"add", b"p" + BAD, *map(str.encode, PROFILE)], "argument 3"),
    ([b"profile", b"add", b"p", b"--env", b"A=" + BAD], "the value of --env"),
    ([b"profile", b"add", b"p", b"--model", BAD], "the value of --model"),
    ([b"profile", b"add", b"p", b"--base-url=http://" + BAD], "the value of --base-url"),
    ([b"profile", b"add", b"p", b"--log-file", b"/tmp/" + BAD], "the value of --log-file"),
    ([b"use", BAD], "argument 2"),
])
def test_bytes_in_an_argument(child_env: dict[str, str], argv: list[bytes], named: str) -> None:
    got = run_kvswitch(argv, child_env, timeout=60)
    assert got.code == 2, got.output
    assert named in got.stderr
    assert "not UTF-8" in got.stderr
    assert got.stderr.count("\n") == 1
    assert "Traceback" not in got.stderr


@pytest.mark.parametrize("variable", ["CLAUDE_CONFIG_DIR", "CODEX_HOME", "HOME", "XDG_CONFIG_HOME",
                                      "KVSWITCH_CONFIG_DIR"])
def test_bytes_in_an_environment_variable(child_env: dict[str, str], variable: str) -> None:
    env: dict[str, str | bytes] = {**child_env, variable: b"/tmp/" + BAD}
    got = run_kvswitch(["current"], env, timeout=60)
    assert got.code == 2, got.output
    assert f"environment variable {variable}" in got.stderr
    assert "Traceback" not in got.stderr


@pytest.mark.parametrize("option", ["--model", "--base-url", "--env", "--log-file", "--key-env", "--kind"])
def test_surrogates_in_process(fake_home: Path, capsys: pytest.CaptureFixture[str], option: str) -> None:
    value = "x\udcff"
    assert main(["profile", "add", "p", *PROFILE, option, value]) == 2
    assert f"the value of {option}" in capsys.readouterr().err


def test_every_read_variable_is_checked(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for variable in READ_ENVIRONMENT:
        with monkeypatch.context() as patch:
            patch.setenv(variable, "/tmp/\udcfe")
            assert main(["current"]) == 2
        assert variable in capsys.readouterr().err
