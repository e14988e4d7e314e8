"""Issue 20, item 4: with ``https://user:password@host`` as a base URL, the password appears in no
output (``use --dry-run`` of every target, ``test`` and ``models`` in text and JSON, their error
messages) and in no ``kvswitch.log`` line; the files that must hold it to work are 0600."""

from __future__ import annotations

import json
import logging
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from kvswitch.cli import main
from kvswitch.core.applog import scrub, setup_logging
from kvswitch.core.paths import AppPaths
from kvswitch.core.redact import mask_text
from support.hostile_servers import HostileServer

PASSWORD = "pw-7f3a9c2e11zz"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _add(url: str, *targets: str) -> None:
    flags = [arg for target in targets for arg in ("--target", target)]
    assert main(["profile", "add", "p", "--kind", "custom", "--base-url", url, "--model", "m", *flags]) == 0


def test_use_masks_the_password_in_every_diff_and_keeps_the_files_0600(
    fake_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _add(f"https://user:{PASSWORD}@gw.example", "codex", "claude", "bash")
    code, shown = _run(capsys, "use", "p", "--dry-run")
    assert code == 0, shown
    assert "config.toml" in shown
    assert "base_url" in shown
    assert PASSWORD not in shown
    code, shown = _run(capsys, "use", "p")
    assert code == 0, shown
    assert PASSWORD not in shown
    for path in (fake_home / ".codex" / "config.toml", fake_home / ".claude" / "settings.json",
                 fake_home / ".bashrc"):
        assert PASSWORD in path.read_text(), path  # the client needs it to authenticate
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


@pytest.mark.parametrize("mode", ["escapes", "escapes_error"])
def test_test_and_models_never_print_the_password(
    hostile_server: Callable[[str], HostileServer], fake_home: Path, capsys: pytest.CaptureFixture[str],
    mode: str,
) -> None:
    server = hostile_server(mode)
    _add(server.url.replace("http://", f"http://user:{PASSWORD}@"), "claude")
    for argv in (["test", "p"], ["test", "p", "--json"], ["models", "p"], ["models", "p", "--json"]):
        code, shown = _run(capsys, *argv, "--timeout", "5")
        assert code in (0, 1), shown
        assert PASSWORD not in shown, argv
        if argv[0] == "test":
            assert "user:" in shown  # the URL is shown, masked
        if argv[-1] == "--json" and code == 0:
            json.loads(shown)


def test_a_refused_connection_does_not_print_it_either(
    fake_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _add(f"http://user:{PASSWORD}@127.0.0.1:9", "claude")
    for argv in (["test", "p"], ["test", "p", "--json"], ["models", "p"], ["models", "p", "--json"]):
        _, shown = _run(capsys, *argv, "--timeout", "3")
        assert "refused" in shown
        assert PASSWORD not in shown


def test_the_log_and_error_messages_use_the_one_masking_rule(fake_home: Path) -> None:
    """``applog.scrub`` is ``redact.mask_text`` after the known secrets: a password KV Switch never saw,
    a credential header, query parameter or JSON key, a bearer token are hidden; counts are not."""
    lines = [
        f"proxy http://alice:{PASSWORD}@proxy.local:3128 used",
        f"GET /v1/models?key={PASSWORD}&limit=5",
        f'{{"api_key": "{PASSWORD}", "max_tokens": 100, "prompt_cache_key": "abc12345"}}',
        f"x-auth-token: {PASSWORD}",
        f"Authorization: Bearer {PASSWORD}",
    ]
    for line in lines:
        assert PASSWORD not in scrub(line), line
        assert PASSWORD not in mask_text(line), line
        assert scrub(line).replace("…[hidden]", "•") == mask_text(line).replace("••••••••", "•")
    assert "max_tokens\": 100" in scrub(lines[2])
    assert "abc12345" in scrub(lines[2])  # a cache key is what a cache diagnosis needs to see
    path = setup_logging(AppPaths.default())
    logger = logging.getLogger("kvswitch.hostile")
    for line in lines:
        logger.warning("%s", line)
    for handler in list(logging.getLogger("kvswitch").handlers):
        if getattr(handler, "_kvswitch_file", None) == str(path):
            handler.close()
            logging.getLogger("kvswitch").removeHandler(handler)
    written = path.read_text()
    assert "proxy.local" in written
    assert PASSWORD not in written
