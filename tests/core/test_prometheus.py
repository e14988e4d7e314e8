"""One reader of the Prometheus text format (``core.prometheus``) for verify and the live panel, checked on
real pages: llama-server b11434's ``/metrics`` and vLLM 0.32.0's, both captured by the project's scripts
(``tests/fixtures/README.md``)."""

from __future__ import annotations

from pathlib import Path

from kvswitch.core.prometheus import parse_samples

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LLAMA_PAGE = FIXTURES / "llama.cpp-b11434" / "responses" / "metrics.txt"
VLLM_PAGE = FIXTURES / "vllm-0.32.0" / "metrics" / "02-repeat.prom"


def _sample_lines(text: str, name: str) -> list[float]:
    """The values of one metric's series, read independently of the code under test."""
    values = []
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            values.append(float(line.rsplit(" ", 1)[1]))
    return values


def test_vllm_label_sets_are_summed_and_comments_skipped() -> None:
    text = VLLM_PAGE.read_text(encoding="utf-8")
    values = parse_samples(text)
    for name in ("vllm:prefix_cache_hits_total", "vllm:prompt_tokens_total", "vllm:request_success_total"):
        assert values[name] == sum(_sample_lines(text, name)), name
    assert not any(name.startswith("#") for name in values)


def test_llama_server_page_reads_every_counter() -> None:
    text = LLAMA_PAGE.read_text(encoding="utf-8")
    values = parse_samples(text)
    assert values["llamacpp:prompt_tokens_total"] == sum(_sample_lines(text, "llamacpp:prompt_tokens_total"))
    assert len(values) == len({line.split("{")[0].split(" ")[0] for line in text.splitlines()
                               if line and not line.startswith("#")})


def test_name_filter_keeps_absent_names_absent() -> None:
    text = VLLM_PAGE.read_text(encoding="utf-8")
    values = parse_samples(text, {"vllm:prefix_cache_hits_total", "vllm:no_such_counter"})
    assert set(values) == {"vllm:prefix_cache_hits_total"}


def test_lines_that_do_not_parse_are_skipped_not_fatal() -> None:
    page = ("good_total 3\n  indented_total{a=\"1\"} 2 1700000000\nbroken_total notanumber\n"
            "{\"json\": 1}\n\n# TYPE x counter\ngood_total{b=\"2\"} 4\n")
    assert parse_samples(page) == {"good_total": 7.0, "indented_total": 2.0}
