"""Hypothesis over the contents of every file KV Switch reads: Claude Code's ``settings.json``, Codex's
``config.toml``, shell rc files, ``profiles.json``, the ownership ledger ``state.json`` and the verify
history. Random bytes, random text, random JSON and TOML values and the known-hostile shapes (deep
nesting, NaN, a 5,000-digit number, a BOM, NUL bytes, bytes that are not UTF-8).

The commands that read each file run in-process on it; the assertion: never exit 70, never a
traceback. Few examples per file, so CI time stays small.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvswitch.cli import main
from kvswitch.core.paths import AppPaths

EXAMPLES = int(os.environ.get("KVSWITCH_FUZZ_EXAMPLES", "10"))
#: nested 100,000 deep; the verify history reads it through strictparse once issue 20's item 6 lands
DEEP = [b"[" * 100_000, b'{"a":' * 5000]
HOSTILE_SHAPES = [
    b'{"env": {"A": NaN}}', b'{"n": ' + b"9" * 5000 + b"}", b"\xef\xbb\xbf{}",
    b"{\x00}", b"\xff\xfe{}", b'{"env": {"ANTHROPIC_BASE_URL": "\x1b[2J\xe2\x80\xae"}}', b"a = [" * 3000,
    b"x = 1\nx = 2\n", b'[model_providers.a]\nbase_url = "\xff"\n', b"export A='\n", b"\r\n" * 1000, b"",
    b'{"profiles": [{"name": "p", "kind": "custom", "base_url": "http://[::1"}]}',
    b'{"version": 99, "profiles": {}}', b'{"profile": "p", "started": "x"}\n' * 3,
]
JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)


def _content(name: str) -> st.SearchStrategy[bytes]:
    return st.one_of(
        st.sampled_from(HOSTILE_SHAPES + (DEEP if name != "history" else [])),
        st.binary(max_size=400),
        st.text(max_size=400).map(lambda text: text.encode("utf-8", "surrogatepass")),
        JSON_VALUE.map(lambda value: json.dumps(value).encode()),
        st.dictionaries(st.sampled_from(["env", "profiles", "model", "version", "permissions", "hooks"]),
                        JSON_VALUE, max_size=3).map(lambda value: json.dumps(value).encode()),
    )


def _paths(home: Path) -> dict[str, Path]:
    app = AppPaths.default()
    return {
        "settings.json": home / ".claude" / "settings.json",
        "config.toml": home / ".codex" / "config.toml",
        ".bashrc": home / ".bashrc",
        "profiles.json": app.profiles_file,
        "state.json": app.state_file,
        "history": app.data_dir / "verify-history" / "p.jsonl",
    }


#: what reads each file
COMMANDS: dict[str, list[list[str]]] = {
    "settings.json": [["use", "p", "--dry-run"], ["doctor"], ["import", "claude", "--name", "imp"]],
    "config.toml": [["use", "p", "--dry-run"], ["doctor"]],
    ".bashrc": [["use", "p", "--dry-run"], ["doctor"]],
    "profiles.json": [["profile", "list"], ["current"], ["doctor"], ["use", "p", "--dry-run"]],
    "state.json": [["current"], ["undo"], ["use", "p", "--dry-run"], ["doctor"]],
    "history": [["verify", "--history", "p"], ["verify", "--history", "p", "--csv"]],
}


def _run(capsys: pytest.CaptureFixture[str]) -> Callable[[list[str]], None]:
    def run(argv: list[str]) -> None:
        capsys.readouterr()
        try:
            code = main(argv)
        except SystemExit as exited:
            code = exited.code if isinstance(exited.code, int) else 2
        err = capsys.readouterr().err
        assert code != 70, (argv, err)
        assert "Traceback" not in err, (argv, err)
        assert "internal error" not in err, (argv, err)

    return run


@pytest.mark.parametrize("name", list(COMMANDS))
def test_no_file_content_makes_an_internal_error(
    name: str, fake_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["profile", "add", "p", "--kind", "custom", "--base-url", "http://127.0.0.1:9", "--model",
                 "m", "--target", "claude", "--target", "codex", "--target", "bash"]) == 0
    path = _paths(fake_home)[name]
    path.parent.mkdir(parents=True, exist_ok=True)
    saved = path.read_bytes() if path.exists() else None
    run = _run(capsys)

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(content=_content(name))
    def check(content: bytes) -> None:
        path.write_bytes(content)
        try:
            for argv in COMMANDS[name]:
                run(argv)
        finally:
            if saved is None:
                path.unlink(missing_ok=True)
            else:
                path.write_bytes(saved)

    check()
