"""SGLang: reports cached tokens in OpenAI usage only when started with ``--enable-cache-report``."""

from __future__ import annotations

from typing import Any

from kvswitch.core.models import ProfileKind
from kvswitch.servers.base import (
    Advice,
    Get,
    Metrics,
    PortFacts,
    PortSignature,
    ProcessSignature,
    Server,
    model_ids,
    positive_int,
)


def _info_shape(status: int, info: Any) -> bool:
    return status == 200 and isinstance(info, dict) and ("model_path" in info or "version" in info)


def _info_facts(get: Get, info: Any) -> PortFacts:
    _, models = get("/v1/models")
    ids = model_ids(models) or ((str(info["model_path"]),) if info.get("model_path") else ())
    version = info.get("version")
    return PortFacts(
        str(version) if version else None,
        ids,
        positive_int(info.get("context_length")),
        positive_int(info.get("max_running_requests")),
    )


SERVER = Server(
    kind=ProfileKind.SGLANG,
    label="SGLang",
    short_label="SGLang",
    badge="SG",
    base_url="http://127.0.0.1:30000",
    description="SGLang; start it with --enable-cache-report to see cached tokens.",
    local=True,
    log_formats=("sglang",),
    process=ProcessSignature(
        programs=("sglang",),
        subcommand="serve",
        python_modules=("sglang.launch_server", "sglang.srt.server"),
        python_module_prefixes=("sglang.launch",),
        model_flags=(("--served-model-name",), ("--model-path", "--model")),
        context_flags=("--context-length",),
        parallel_flags=("--max-running-requests",),
    ),
    port_answer=PortSignature("/get_server_info", _info_shape, _info_facts),
    owned_by=("sglang",),
    metrics=Metrics(markers=("sglang:",)),
    advice=Advice(unknown="start SGLang with --enable-cache-report to get cached_tokens in usage."),
)
