"""llama.cpp: recognised from real llama-server b11434 answers; its cache numbers read from them."""

from __future__ import annotations

from server_helpers import LLAMA_RESPONSES, recorded, table_get

from kvswitch import servers
from kvswitch.core.models import ProfileKind
from kvswitch.servers import llama_cpp
from kvswitch.verify.evidence import metrics_reading, parse_metrics, readings_from_payload


def test_real_props_answer_names_llama_server() -> None:
    get = table_get({"/props": (200, recorded("props.txt")), "/v1/models": (200, recorded("v1_models.txt"))})
    found = servers.identify(get)
    assert found is not None
    assert found.server.kind == ProfileKind.LLAMA_CPP
    assert found.facts.models == ("tiny",)
    assert found.facts.version is not None
    assert found.facts.version.startswith("b11434")
    assert get.asked == ["/props", "/v1/models"]  # type: ignore[attr-defined]


def test_loading_server_is_recognised_but_not_ready() -> None:
    get = table_get({"/props": (503, None),
                     "/health": (503, {"error": {"code": 503, "message": "Loading model"}})})
    found = servers.identify(get)
    assert found is not None
    assert (found.server.kind, found.facts.loading) == (ProfileKind.LLAMA_CPP, True)


def test_timings_give_reused_and_processed_tokens() -> None:
    hit = recorded("resp_chat_hit.json")
    assert llama_cpp.read_timings(hit)[0].describe() == "timings.cache_n = 1564 of 1601 prompt tokens"
    assert readings_from_payload(hit)[0].source == "timings.cache_n"


def test_metrics_counter_adds_cached_to_processed() -> None:
    after = parse_metrics((LLAMA_RESPONSES / "metrics.txt").read_text(encoding="utf-8"))
    before = dict.fromkeys(after, 0.0)
    reading = metrics_reading(before, after)
    assert reading is not None
    # llama-server's prompt_tokens_total excludes the cached tokens
    assert (reading.source, reading.cached, reading.prompt) == (
        "metrics llamacpp:prompt_tokens_cached", 10969, 10969 + 9430)


def test_command_line_flags() -> None:
    signature = llama_cpp.SERVER.process
    assert signature is not None
    assert servers.process_kind(["/opt/llama/llama-server", "-m", "x.gguf"]) == ProfileKind.LLAMA_CPP
    assert signature.private_under == (ProfileKind.OLLAMA,)


def test_advice_names_the_usual_causes() -> None:
    assert "--no-cache-prompt" in (llama_cpp.SERVER.advice.miss or "")
