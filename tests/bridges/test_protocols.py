"""Protocol per backend as data: the catalog's and the server kinds' word, the override, the CLI."""

from __future__ import annotations

import json

import pytest

from kvswitch.cli import main
from kvswitch.core.catalog import vendor, vendors
from kvswitch.core.models import Profile
from kvswitch.servers.protocols import bridged, served_protocols, upstream_protocol, upstream_url


def test_every_codex_endpoint_names_its_protocol_and_checked_entries_say_when_and_where() -> None:
    for entry in vendors():
        assert (entry.codex_protocol is None) == (entry.codex_base_url is None), entry.id
        if entry.protocol_checked:
            assert entry.protocol_source, entry.id
            assert entry.protocol_source.startswith("https://"), entry.id


def test_the_entries_the_issue_names() -> None:
    assert vendor("taotoken").claude_protocol == "openai_chat"
    assert vendor("taotoken").base_url == "https://taotoken.net/api"
    assert vendor("nvidia").claude_protocol == "openai_chat"
    assert vendor("deepseek").codex_protocol == "openai_chat"
    assert vendor("deepseek").models["haiku"] == "deepseek-flash"
    assert vendor("qianfan-token-plan").key_env == "ANTHROPIC_API_KEY"
    assert vendor("kimi-coding").key_env == "ANTHROPIC_API_KEY"
    assert set(vendor("minimax").models.values()) == {"MiniMax-M3"}
    assert vendor("minimax").codex_protocol == "openai_responses"


@pytest.mark.parametrize(
    ("kind", "url", "override", "claude", "codex"),
    [
        ("llama.cpp", "http://127.0.0.1:8080", None, "anthropic", "openai_responses"),
        ("llama.cpp", "http://127.0.0.1:8080", "openai_chat", "openai_chat", "openai_chat"),
        ("openai-compatible", "https://taotoken.net/api", None, "openai_chat", "openai_chat"),
        ("openai-compatible", "https://taotoken.net/api/v1", None, "openai_chat", "openai_chat"),
        ("openai-compatible", "https://api.deepseek.com", None, "openai_chat", "openai_chat"),
        ("openai-compatible", "https://api.deepseek.com/anthropic", None, "anthropic", "openai_responses"),
        ("openai-compatible", "https://api.minimax.io/v1", None, "anthropic", "openai_responses"),
        ("anthropic", "https://api.anthropic.com", None, "anthropic", "openai_responses"),
    ],
)
def test_upstream_protocol(kind: str, url: str, override: str | None, claude: str, codex: str) -> None:
    profile = Profile(name="p", kind=kind, base_url=url, protocol=override)
    assert upstream_protocol(profile, "claude") == claude
    assert upstream_protocol(profile, "codex") == codex
    assert bridged(profile, "claude") == (claude != "anthropic")


def test_the_anthropic_kind_serves_only_messages() -> None:
    assert served_protocols(Profile(name="a", kind="anthropic", base_url="https://api.anthropic.com")) == (
        "anthropic",
    )
    # a URL the catalog does not list: the kind's word
    unlisted = Profile(name="b", kind="anthropic", base_url="https://proxy.example")
    assert served_protocols(unlisted) == ("anthropic",)


def test_upstream_url_for_both_url_styles() -> None:
    assert (
        upstream_url("https://taotoken.net/api", "openai_chat")
        == "https://taotoken.net/api/v1/chat/completions"
    )
    assert (
        upstream_url("https://api.minimax.io/v1/", "openai_responses")
        == "https://api.minimax.io/v1/responses"
    )
    assert upstream_url("http://127.0.0.1:8080", "anthropic") == "http://127.0.0.1:8080/v1/messages"


def test_cli_protocol_and_stable_prefix(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["profile", "add", "loc", "--kind", "llama.cpp", "--protocol", "openai_chat", "--stable-prefix"])
        == 0
    )
    assert main(["profile", "show", "loc"]) == 0
    shown = capsys.readouterr().out
    assert (
        "protocol: Claude Code: bridged anthropic -> openai_chat through the gateway (set by --protocol)"
        in shown
    )
    assert "stable prefix: on" in shown
    assert main(["profile", "edit", "loc", "--no-stable-prefix", "--protocol", "anthropic"]) == 0
    capsys.readouterr()
    assert main(["profile", "show", "loc"]) == 0
    shown = capsys.readouterr().out
    assert "protocol: Claude Code: anthropic (no bridge)" in shown
    assert "stable prefix" not in shown


def test_preset_list_json_shows_protocols(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["preset", "list", "--json"]) == 0
    entries = {e["id"]: e for e in json.loads(capsys.readouterr().out)}
    assert entries["taotoken"]["protocols"] == {"claude": ["openai_chat"], "codex": ["openai_chat"]}
    assert entries["llama.cpp"]["protocols"]["claude"] == ["anthropic", "openai_chat", "openai_responses"]
    assert entries["deepseek"]["protocols"]["codex"] == ["openai_chat"]


def test_the_client_may_be_named_by_its_protocol() -> None:
    profile = Profile(name="t", kind="openai-compatible", base_url="https://taotoken.net/api")
    assert upstream_protocol(profile, "anthropic") == upstream_protocol(profile, "claude") == "openai_chat"
    assert upstream_protocol(profile, "openai_chat") == "openai_chat"
