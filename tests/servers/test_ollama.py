"""Ollama: its /api/version answer, env-configured process, native cache fields and journal log."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from server_helpers import table_get

from kvswitch import servers
from kvswitch.core.models import ProfileKind
from kvswitch.servers import ollama
from kvswitch.servers.base import Reading

VERSION = {"version": "0.34.3"}
TAGS = {"models": [{"name": "qwen2.5-coder:7b", "model": "qwen2.5-coder:7b"}]}


def test_version_route_names_ollama_with_its_models() -> None:
    found = servers.identify(table_get({"/api/version": (200, VERSION), "/api/tags": (200, TAGS)}))
    assert found is not None
    assert (found.server.kind, found.facts.version, found.facts.models) == (
        ProfileKind.OLLAMA, "0.34.3", ("qwen2.5-coder:7b",))


def test_only_the_serve_subcommand_is_the_server() -> None:
    assert servers.process_kind(["ollama", "serve"]) == ProfileKind.OLLAMA
    assert servers.process_kind(["ollama", "run", "llama3"]) is None


def test_native_answer_cache_fields() -> None:
    assert ollama.read_prompt_eval({"prompt_eval_count": 12, "prompt_eval_cached_count": 900}) == [
        Reading("prompt_eval_cached_count", 900, 12)]
    assert ollama.read_prompt_eval({"prompt_eval_count": 40}) == [Reading("prompt_eval_count", None, 40)]
    assert ollama.read_prompt_eval({"done": True}) == []


def test_a_warm_count_under_half_the_cold_one_is_reuse() -> None:
    cold, warm = [Reading("prompt_eval_count", None, 1600)], [Reading("prompt_eval_count", None, 30)]
    inferred = servers.infer_reuse(cold, warm)
    assert inferred is not None
    assert inferred[0] == Reading("prompt_eval_count drop", 1570, 1600)
    assert servers.infer_reuse(cold, [Reading("prompt_eval_count", None, 1500)]) is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the journal is Linux's")
def test_journal_log_only_when_systemd_runs_it(tmp_path: Path) -> None:
    assert ollama.SERVER.find_log(None, [tmp_path]) is None
    (tmp_path / "ollama.service").write_text("[Service]\n", encoding="utf-8")
    log = ollama.SERVER.find_log(None, [tmp_path])
    assert log is not None
    assert (log.kind, log.unit) == ("journald", "ollama")


def test_log_formats_include_the_embedded_engine() -> None:
    assert ollama.SERVER.log_formats == ("ollama", "llama.cpp")
