"""A password in the base URL is a secret like the key: masked on screen, left out of exports, scrubbed
from the app log (with every other secret KV Switch knows, whatever its shape)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from kvswitch.cli import main
from kvswitch.core.applog import setup_logging
from kvswitch.core.paths import AppPaths
from kvswitch.core.store import ProfileStore

PASSWORD = "hunter2pass"
URL = f"https://bob:{PASSWORD}@gw.example/v1"
KEY = "gw-live-7f3a9c2e11"  # not sk-shaped: only knowing it lets the scrubber hide it


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    capsys.readouterr()
    assert main(list(argv)) == 0
    captured = capsys.readouterr()
    return captured.out + captured.err


def test_url_password_is_masked_everywhere_it_is_shown(
    fake_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shown = [
        _run(capsys, "profile", "add", "u", "--kind", "openai-compatible", "--base-url", URL,
             "--api-key", KEY, "--target", "claude", "--target", "bash"),
        _run(capsys, "profile", "list"),
        _run(capsys, "profile", "list", "--json"),
        _run(capsys, "profile", "show", "u"),
        _run(capsys, "use", "u", "--dry-run"),
    ]
    for output in shown:
        assert PASSWORD not in output, output
        assert KEY not in output
    assert "https://bob:hu…@gw.example/v1" in shown[3]
    assert PASSWORD in _run(capsys, "--show-secrets", "profile", "show", "u")

    plain = tmp_path / "plain.json"
    _run(capsys, "export", str(plain))
    assert PASSWORD not in plain.read_text()
    document = json.loads(plain.read_text())
    assert document["profiles"][0]["base_url"] == "https://bob@gw.example/v1"
    assert document["keys_omitted"] == ["u"]
    with_keys = tmp_path / "keys.json"
    _run(capsys, "export", str(with_keys), "--include-keys")
    assert json.loads(with_keys.read_text())["profiles"][0]["base_url"] == URL


def test_app_log_scrubs_every_known_secret(fake_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(capsys, "profile", "add", "u", "--kind", "openai-compatible", "--base-url", URL, "--api-key", KEY)
    paths = AppPaths.default()
    ProfileStore(paths).profiles()  # loading registers the profile's secrets
    log_path = setup_logging(paths)
    log = logging.getLogger("kvswitch.test")
    log.warning("request to %s with key %s", URL, KEY)
    log.warning("headers: {'Authorization': 'Basic dXNlcjpwYXNz', 'x-api-key': 'abcd1234'}")
    log.warning("proxy http://alice:s3cr3t@proxy.local:3128 used")
    for handler in list(logging.getLogger("kvswitch").handlers):
        if getattr(handler, "_kvswitch_file", None) == str(log_path):
            handler.close()
            logging.getLogger("kvswitch").removeHandler(handler)
    text = log_path.read_text()
    for secret in (PASSWORD, KEY, "dXNlcjpwYXNz", "abcd1234", "s3cr3t"):
        assert secret not in text, text
    assert "gw.example" in text
    assert "proxy.local:3128" in text
