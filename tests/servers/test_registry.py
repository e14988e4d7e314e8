"""The registry: one server per kind, presets and rankings assembled from the server modules."""

from __future__ import annotations

import pytest
from server_helpers import table_get

from kvswitch import servers
from kvswitch.core.models import LOCAL_KINDS, ProfileKind
from kvswitch.core.presets import CACHE_SAFE_ENV
from kvswitch.logs.parsers import KINDS as LOG_FORMATS


def test_every_kind_has_exactly_one_server() -> None:
    assert sorted(server.kind for server in servers.all()) == sorted(ProfileKind)
    for kind in ProfileKind:
        assert servers.get(kind).kind == kind
        assert servers.get(kind.value).kind == kind


def test_aliases_and_unknown_names() -> None:
    assert servers.get("LMStudio").kind == ProfileKind.LM_STUDIO
    assert servers.get("llamacpp").kind == ProfileKind.LLAMA_CPP
    assert servers.find("auto") is None
    with pytest.raises(KeyError):
        servers.get("unknown")


def test_local_servers_are_the_local_kinds_and_get_the_cache_safe_env() -> None:
    assert {server.kind for server in servers.local()} == set(LOCAL_KINDS)
    for server in servers.local():
        assert server.preset().env == CACHE_SAFE_ENV
        assert server.port is not None
        assert server.base_url.endswith(f":{server.port}")


def test_log_formats_are_ids_the_log_engine_knows() -> None:
    for server in servers.all():
        assert set(server.log_formats) <= set(LOG_FORMATS), server.kind


def test_source_priority_keeps_the_verdicts_order() -> None:
    assert servers.source_priority() == (
        "timings.cache_n",
        "usage.prompt_tokens_details.cached_tokens",
        "usage.cache_read_input_tokens",
        "usage.input_tokens_details.cached_tokens",
        "prompt_eval_cached_count",
        "metrics vllm:prefix_cache_hits",
        "log",
        "prompt_eval_count drop",
        "metrics llamacpp:prompt_tokens_cached",
        "metrics vllm:gpu_prefix_cache_hits",
    )


def test_a_port_answering_nothing_known_is_not_named() -> None:
    get = table_get({"/": (200, None), "/version": (200, {"name": "some web app"})})
    assert servers.identify(get) is None
    # every identifying route was asked once, in the registry's order
    assert get.asked == [s.port_answer.route for s in servers.all() if s.port_answer]  # type: ignore[attr-defined, union-attr]


def test_owned_by_hint() -> None:
    assert servers.by_owner("sglang") is servers.get(ProfileKind.SGLANG)
    assert servers.by_owner("organization_owner") is None


@pytest.mark.parametrize(("url", "kind"), [
    ("https://api.anthropic.com", ProfileKind.ANTHROPIC),
    ("https://API.Anthropic.com/v1/", ProfileKind.ANTHROPIC),
    ("https://api.openai.com/v1", ProfileKind.OPENAI_COMPATIBLE),
    ("http://127.0.0.1:8080", ProfileKind.LLAMA_CPP),
    ("http://localhost:1234/v1", ProfileKind.LM_STUDIO),
    ("http://[::1]:8000", ProfileKind.VLLM),
    ("http://0.0.0.0:30000", ProfileKind.SGLANG),
    ("http://localhost:11434", ProfileKind.OLLAMA),
    ("http://localhost", ProfileKind.CUSTOM),  # no port: no default port to go by
    ("http://10.0.0.5:8080", ProfileKind.CUSTOM),  # a default port, but not on this machine
    ("http://127.0.0.1:9999", ProfileKind.CUSTOM),
    ("https://gateway.example.com/v1", ProfileKind.CUSTOM),
    ("http://localhost:notaport", ProfileKind.CUSTOM),
])
def test_kind_for_url_by_hosted_host_and_local_default_port(url: str, kind: ProfileKind) -> None:
    assert servers.kind_for_url(url) == kind


def test_kind_for_url_knows_every_local_port_and_hosted_preset() -> None:
    for local_kind, port in servers.default_ports().items():
        assert servers.kind_for_url(f"http://127.0.0.1:{port}") == local_kind
    hosted = [s for s in servers.all() if not s.local and servers.kind_for_url(s.base_url) == s.kind]
    assert {s.kind for s in hosted} == {ProfileKind.ANTHROPIC, ProfileKind.OPENAI_COMPATIBLE}
