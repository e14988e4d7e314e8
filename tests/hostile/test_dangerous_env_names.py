"""Issue 20, item 3: names that make a program run code, or redirect or intercept its traffic, need the
same confirmation as ``PATH`` or ``LD_PRELOAD``: through the CLI, exit 2 without
``--allow-dangerous-env``, the name and the flag in the message, nothing saved; accepted with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvswitch.cli import main
from kvswitch.core.dangerous_env import dangerous_reason
from kvswitch.core.paths import AppPaths
from kvswitch.core.store import ProfileStore

BASE = ["--kind", "openai-compatible", "--base-url", "https://a.b/v1", "--api-key", "sk-SECRET"]
RUNS_CODE = [
    "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0", "GIT_CONFIG_PARAMETERS", "GIT_SSH_COMMAND",
    "GIT_PROXY_COMMAND", "GIT_SSH", "GIT_PAGER", "GIT_EDITOR", "GIT_ASKPASS", "LESSOPEN", "LESSCLOSE",
    "PAGER", "MANPAGER", "EDITOR", "VISUAL", "BROWSER", "PYTHONWARNINGS", "PYTHONBREAKPOINT", "PYTHONSTARTUP",
    "GLIBC_TUNABLES", "LOCPATH", "HOSTALIASES", "SSH_ASKPASS",
]
REDIRECTS_TRAFFIC = [
    "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY",
    "no_proxy",
    "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
    "NODE_TLS_REJECT_UNAUTHORIZED", "SSLKEYLOGFILE", "GIT_SSL_NO_VERIFY",
]


@pytest.mark.parametrize("name", RUNS_CODE + REDIRECTS_TRAFFIC)
def test_the_name_needs_the_confirmation(
    fake_home: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    capsys.readouterr()
    assert main(["profile", "add", "p", *BASE, "--env", f"{name}=x"]) == 2
    said = capsys.readouterr().err
    assert name in said
    assert "--allow-dangerous-env" in said
    assert ProfileStore(AppPaths.default()).names() == []
    assert main(["profile", "add", "p", *BASE, "--env", f"{name}=x", "--allow-dangerous-env"]) == 0
    assert ProfileStore(AppPaths.default()).get("p").env[name] == "x"


@pytest.mark.parametrize("name", ["API_TIMEOUT_MS", "ANTHROPIC_MODEL", "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
                                  "DISABLE_TELEMETRY", "GIT_AUTHOR_NAME", "PROXY_MODE", "MY_PAGER_WIDTH"])
def test_ordinary_names_stay_ordinary(name: str) -> None:
    assert dangerous_reason(name) is None


def test_every_family_has_a_reason_that_says_why() -> None:
    assert "command" in (dangerous_reason("GIT_SSH_COMMAND") or "")
    assert "proxy" in (dangerous_reason("https_proxy") or "")
    assert "TLS" in (dangerous_reason("NODE_EXTRA_CA_CERTS") or "")
    assert "imports a module" in (dangerous_reason("PYTHONWARNINGS") or "")
