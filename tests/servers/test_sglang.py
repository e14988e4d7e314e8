"""SGLang: its /get_server_info answer and command lines."""

from __future__ import annotations

from server_helpers import table_get

from kvswitch import servers
from kvswitch.core.models import ProfileKind
from kvswitch.servers import sglang

INFO = {"model_path": "Qwen/Qwen3-8B", "context_length": 32768, "version": "0.5.3",
        "max_running_requests": 16}


def test_server_info_names_sglang_with_limits() -> None:
    found = servers.identify(table_get({"/get_server_info": (200, INFO)}))
    assert found is not None
    assert (found.server.kind, found.facts.models, found.facts.context, found.facts.parallel) == (
        ProfileKind.SGLANG, ("Qwen/Qwen3-8B",), 32768, 16)


def test_command_lines() -> None:
    assert servers.process_kind(["python3.11", "-u", "-m", "sglang.launch_server"]) == ProfileKind.SGLANG
    assert servers.process_kind(["sglang", "serve", "--model-path", "x"]) == ProfileKind.SGLANG
    assert servers.process_kind(["python3", "-m", "sglang.bench_serving"]) is None


def test_cache_report_advice() -> None:
    assert "--enable-cache-report" in (sglang.SERVER.advice.unknown or "")
