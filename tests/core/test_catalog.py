"""The vendor catalog (core/data/vendors.json), ``preset list``, ``profile add --preset`` and the
gateway lint that compares a profile's URL and key variable with the catalog."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from kvswitch.core.catalog import parse_catalog, vendor, vendors, vendors_for_host
from kvswitch.core.errors import KvSwitchError, UsageError
from kvswitch.core.models import Profile
from kvswitch.servers.preset_data import preset_profile_data
from kvswitch.targets.lint import lint_profile

APP = Path(__file__).resolve().parents[2] / "app"
KEY = "sk-catalog-0123456789abcdef"
REQUIRED = ("deepseek", "kimi", "kimi-coding", "zhipu-glm", "zai", "bailian", "bailian-coding", "minimax-cn",
            "minimax", "siliconflow-cn", "siliconflow", "openrouter", "modelscope", "stepfun",
            "volcengine-coding", "qianfan-coding", "mimo", "novita", "longcat")


def kvswitch(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(APP)}
    return subprocess.run([sys.executable, "-m", "kvswitch", *args], env=env, capture_output=True,
                          text=True, timeout=60)


def codes(**fields: object) -> list[str]:
    data: dict[str, object] = {"name": "p", "kind": "openai-compatible", "api_key": KEY, **fields}
    return [w.code for w in lint_profile(Profile.model_validate(data))]


def test_catalog_has_every_required_vendor_with_complete_entries() -> None:
    entries = vendors()
    assert len(entries) >= 25
    ids = [e.id for e in entries]
    assert len(ids) == len(set(ids))
    for required in REQUIRED:
        assert required in ids
    for entry in entries:
        assert urlsplit(entry.base_url).scheme == "https"
        assert entry.name.en
        assert entry.name.zh_CN
        assert entry.key_env in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY")
        assert entry.source
        for url in (entry.keys_url, entry.docs_url):
            assert url is None or "aff=" not in url
    deepseek = vendor("deepseek")
    assert deepseek.base_url == "https://api.deepseek.com/anthropic"
    assert deepseek.models["haiku"] == "deepseek-flash"  # newer DeepSeek pages retire deepseek-v4-flash
    assert deepseek.codex_base_url == "https://api.deepseek.com"
    assert vendor("anthropic").key_env == "ANTHROPIC_API_KEY"
    ark = {v.id for v in vendors_for_host("ark.cn-beijing.volces.com")}
    assert ark >= {"volcengine-coding", "doubao-seed"}


def test_catalog_file_errors_are_named() -> None:
    good = {"schema": 1, "vendors": [vendor("deepseek").model_dump(exclude_none=True)]}
    twice = {"schema": 1, "vendors": good["vendors"] * 2}
    with pytest.raises(KvSwitchError, match="appears twice"):
        parse_catalog(json.dumps(twice))
    with pytest.raises(KvSwitchError, match="vendors.json: the vendor catalog is invalid"):
        parse_catalog("{not json")
    bad_url = {"schema": 1, "vendors": [{**good["vendors"][0], "base_url": "ftp://x"}]}
    with pytest.raises(KvSwitchError, match="invalid base URL"):
        parse_catalog(json.dumps(bad_url))
    with pytest.raises(UsageError, match="preset list"):
        vendor("no-such-vendor")


@pytest.mark.parametrize("vendor_id", [v.id for v in vendors()])
def test_every_preset_makes_a_valid_profile_without_gateway_warnings(vendor_id: str) -> None:
    data = preset_profile_data("p", vendor_id, None, False, False)
    profile = Profile.model_validate({**data, "api_key": KEY})
    entry = vendor(vendor_id)
    assert profile.base_url == entry.base_url
    assert profile.key_env == entry.key_env
    assert profile.model == entry.models.get("main")
    found = [w.code for w in lint_profile(profile)]
    assert not [c for c in found if c.startswith("url-") or c in ("key-variable", "plain-http")], found
    if entry.codex_base_url:
        codex = Profile.model_validate(preset_profile_data("c", vendor_id, None, False, True))
        assert codex.targets == ["codex"]
        assert codex.base_url == entry.codex_base_url


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"base_url": "https://gw.example/v1/messages"}, "url-route-suffix"),
        ({"base_url": "https://gw.example/api/chat/completions", "targets": ["codex"]}, "url-route-suffix"),
        ({"base_url": "https://gw.example/v1/v1", "targets": ["codex"]}, "url-double-v1"),
        ({"base_url": "https://gw.example/v1"}, "url-trailing-v1"),
        ({"base_url": "https://api.deepseek.com"}, "url-vendor-path"),
        ({"base_url": "https://open.bigmodel.cn/api"}, "url-vendor-path"),
        ({"base_url": "http://gw.example", "api_key": None}, "plain-http"),
        ({"base_url": "https://api.anthropic.com", "kind": "anthropic"}, "key-variable"),
        ({"base_url": "https://api.anthropic.com", "kind": "anthropic", "api_key": None,
          "env": {"ANTHROPIC_AUTH_TOKEN": KEY}}, "key-variable"),
    ],
)
def test_gateway_lint_finds_each_mistake(fields: dict[str, object], code: str) -> None:
    assert code in codes(**fields)


@pytest.mark.parametrize(
    "fields",
    [
        {"base_url": "https://api.deepseek.com", "targets": ["codex"]},
        {"base_url": "https://api.anthropic.com", "kind": "anthropic", "key_env": "ANTHROPIC_API_KEY"},
        {"base_url": "http://127.0.0.1:8080", "kind": "llama.cpp", "api_key": None},
        {"base_url": "http://127.0.0.1:8080/v1", "kind": "llama.cpp", "targets": ["codex"]},
        {"base_url": "https://gw.example/openai/v1", "targets": ["codex"]},
    ],
)
def test_gateway_lint_stays_quiet_on_good_urls(fields: dict[str, object]) -> None:
    gateway = {"url-route-suffix", "url-double-v1", "url-trailing-v1", "url-vendor-path", "plain-http",
               "key-variable"}
    assert not gateway & set(codes(**fields))


def test_preset_list_and_profile_add_from_a_preset(fake_home: Path) -> None:
    listed = kvswitch("preset", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    entries = {e["id"]: e for e in json.loads(listed.stdout)}
    assert entries["llama.cpp"]["base_url"] == "http://127.0.0.1:8080"
    assert entries["llama.cpp"]["local"] is True
    assert entries["kimi"]["name"] == "Moonshot Kimi"
    assert all({"id", "name", "base_url"} <= set(e) for e in entries.values())
    chinese = json.loads(kvswitch("preset", "list", "--json", "--locale", "zh_CN").stdout)
    assert next(e for e in chinese if e["id"] == "kimi")["name"] == "月之暗面 Kimi"

    added = kvswitch("profile", "add", "ds", "--preset", "deepseek", "--api-key", KEY,
                     "--model-tier", "haiku=my-haiku", "--model-opus", "")
    assert added.returncode == 0, added.stderr
    assert "warning" not in added.stderr
    shown = json.loads(kvswitch("--show-secrets", "profile", "list", "--json").stdout)[0]
    assert shown["base_url"] == "https://api.deepseek.com/anthropic"
    assert shown["kind"] == "openai-compatible"
    assert shown["key_env"] == "ANTHROPIC_AUTH_TOKEN"
    assert shown["model"] == "deepseek-v4-pro"
    assert shown["models"]["haiku"] == "my-haiku"
    assert shown["models"]["sonnet"] == "deepseek-v4-pro"
    assert shown["models"]["opus"] is None
    assert shown["api_key"] == KEY

    overridden = kvswitch("profile", "add", "a", "--preset", "anthropic", "--base-url",
                          "https://proxy.example", "--key-env", "ANTHROPIC_AUTH_TOKEN")
    assert overridden.returncode == 0, overridden.stderr
    data = {p["name"]: p for p in json.loads(kvswitch("profile", "list", "--json").stdout)}
    assert data["a"]["base_url"] == "https://proxy.example"
    assert data["a"]["kind"] == "anthropic"
    assert data["a"]["key_env"] == "ANTHROPIC_AUTH_TOKEN"

    plain = kvswitch("profile", "add", "k", "--kind", "anthropic", "--api-key", KEY)
    assert plain.returncode == 0, plain.stderr
    assert "key-variable" not in plain.stderr
    keyed = {p["name"]: p for p in json.loads(kvswitch("profile", "list", "--json").stdout)}
    assert keyed["k"]["key_env"] == "ANTHROPIC_API_KEY"

    local = kvswitch("profile", "add", "l", "--preset", "ollama")
    assert local.returncode == 0, local.stderr
    assert "CLAUDE_CODE_ATTRIBUTION_HEADER=0" in kvswitch("profile", "show", "l").stdout

    unknown = kvswitch("profile", "add", "x", "--preset", "nope")
    assert unknown.returncode == 2
    assert "no vendor preset 'nope'" in unknown.stderr
    neither = kvswitch("profile", "add", "x")
    assert neither.returncode == 2
    assert "--kind KIND or --preset ID" in neither.stderr
    no_codex = kvswitch("profile", "add", "x", "--preset", "openrouter", "--for-codex")
    assert no_codex.returncode == 2
    assert "no Codex" in no_codex.stderr
