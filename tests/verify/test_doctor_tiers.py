"""``doctor``'s LMCache checks on the pages real vLLM 0.32.0 + LMCache 0.5.6 gave (fixtures/lmcache-0.5.6/).

The captured pages are served over HTTP as they were captured; only where LMCache keeps its L2 data (the
adapters' folder and Redis port in ``/config``) is pointed at this test's own folder and a real
``redis-server``, so that each adapter's state is the one the test sets. Every figure a test expects is read
from the captured page by the test itself.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from kvswitch.commands.doctor_tiers import tier_findings
from kvswitch.core.models import ModelMap, Profile, ProfileKind
from kvswitch.servers import lmcache
from kvswitch.servers.tier_sources import pinned_tier
from support.net import free_port, serving
from support.redis import RunningRedis, redis_server

PAGES = Path(__file__).resolve().parent.parent / "fixtures" / "lmcache-0.5.6"


def _page(name: str) -> str:
    return (PAGES / name).read_text(encoding="utf-8")


def _line_value(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} not on the page")


@contextlib.contextmanager
def _serving(pages: dict[str, str]) -> Iterator[str]:
    """The pages on loopback, each at its route (404 elsewhere), until the block ends."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            body = pages.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.end_headers()
            self.wfile.write((body or "").encode())

        def log_message(self, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with serving(server) as url:
        yield url


def _config(base_path: Path, redis_port: int, chunk_size: int | None = None) -> str:
    """The captured ``/config`` with its adapters' folder and Redis port pointed where the test says."""
    config = json.loads(_page("config.json"))
    fs, resp = config["storage_manager"]["l2_adapter_config"]["adapters"]
    fs["base_path"], resp["port"] = str(base_path), redis_port
    if chunk_size is not None:
        config["mp"]["chunk_size"] = chunk_size
    return json.dumps(config)


@contextlib.contextmanager
def _doctor_view(lmcache_metrics: str, config: str) -> Iterator[list[str]]:
    """vLLM's captured page and LMCache's pages served; the findings doctor gives for a vLLM profile."""
    vllm = {"/metrics": _page("cold-vllm-after.txt")}
    lm = {"/metrics": lmcache_metrics, "/config": config, "/config/adapters": _page("config-adapters.json")}
    with _serving(vllm) as vllm_url, _serving(lm) as lm_url, pinned_tier("lmcache", f"{lm_url}/metrics"):
        profile = Profile(name="lm", kind=ProfileKind.VLLM, base_url=f"{vllm_url}/v1", model="tiny",
                          models=ModelMap(small_fast="tiny"), targets=["claude"])
        yield tier_findings([profile], profile)


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningRedis]:
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server


def test_a_healthy_lmcache_gives_no_finding(tmp_path: Path, redis: RunningRedis) -> None:
    page = _page("metrics-l1-hit.txt")
    assert "lmcache_mp_l1_allocation_failure_chunks_total{" not in page  # none failed on this page
    with _doctor_view(page, _config(tmp_path, redis.port)) as found:
        assert found == []


def test_an_l1_too_small_is_named_from_its_counters_since_start(tmp_path: Path, redis: RunningRedis) -> None:
    page = _page("metrics-l1-too-small.txt")
    failed = int(_line_value(page, "lmcache_mp_l1_allocation_failure_chunks_total"))
    assert failed > 0
    with _doctor_view(page, _config(tmp_path, redis.port)) as found:
        assert len(found) == 1, found
        line = found[0]
        assert line.startswith("profile 'lm' (http://127.0.0.1:")
        assert "is too small for the prompts it was given: since it started" in line
        assert f"{failed} could not be allocated" in line
        assert "evicted" not in line  # LRU at work is no trouble at rest
        assert "restart `lmcache server` with a larger --l1-size-gb" in line


def test_a_redis_that_does_not_answer_and_a_folder_that_is_gone(tmp_path: Path) -> None:
    silent = free_port()  # nothing listens there
    gone = tmp_path / "gone"
    with _doctor_view(_page("metrics-l1-hit.txt"), _config(gone, silent)) as found:
        assert len(found) == 2, found
        folder, redis_line = found
        assert f"disk L2 adapter (fs): its folder {gone} is gone" in folder
        assert f"mkdir -p {gone}" in folder
        assert f"Redis L2 adapter (resp): nothing answers at 127.0.0.1:{silent}" in redis_line
        assert f"redis-server --port {silent}" in redis_line


def test_a_base_path_that_is_a_file(tmp_path: Path, redis: RunningRedis) -> None:
    """What made ``lmcache server`` 0.5.6 exit at start (captured log), seen on a server that runs."""
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with _doctor_view(_page("metrics-l1-hit.txt"), _config(blocker, redis.port)) as found:
        assert len(found) == 1, found
        assert f"its base_path {blocker} is not a folder" in found[0]


def test_a_chunk_size_the_block_size_does_not_divide(tmp_path: Path, redis: RunningRedis) -> None:
    """vLLM 0.32.0 refuses such a start (captured log); a server that runs one anyway is named with the
    size to use. The block size is the one on vLLM's captured page."""
    vllm_page = _page("cold-vllm-after.txt")
    block = int(vllm_page.split('vllm:cache_config_info{', 1)[1].split('block_size="', 1)[1].split('"')[0])
    with _doctor_view(_page("metrics-l1-hit.txt"), _config(tmp_path, redis.port, chunk_size=48)) as found:
        assert len(found) == 1, found
        assert f"chunk size 48 is not a multiple of vLLM's block size {block}" in found[0]
        assert f"--chunk-size {48 // block * block}" in found[0]


def test_an_lmcache_that_does_not_answer_is_named() -> None:
    with _serving({"/metrics": _page("cold-vllm-after.txt")}) as vllm_url:
        silent = f"http://127.0.0.1:{free_port()}/metrics"
        with pinned_tier("lmcache", silent):
            profile = Profile(name="lm", kind=ProfileKind.VLLM, base_url=vllm_url, model="tiny",
                              models=ModelMap(small_fast="tiny"), targets=["claude"])
            found = tier_findings([profile], None)
    assert len(found) == 1, found
    assert f"LMCache is connected to the server but its own page {silent} did not answer" in found[0]


def test_a_server_that_is_off_or_has_no_tier_gives_nothing() -> None:
    off = Profile(name="off", kind=ProfileKind.VLLM, base_url=f"http://127.0.0.1:{free_port()}/v1",
                  model="tiny", models=ModelMap(small_fast="tiny"), targets=["claude"])
    plain = _page("cold-vllm-after.txt").replace("vllm:lmcache_mp_", "vllm:other_")
    with _serving({"/metrics": plain}) as url:
        no_tier = Profile(name="plain", kind=ProfileKind.VLLM, base_url=url, model="tiny",
                          models=ModelMap(small_fast="tiny"), targets=["claude"])
        assert tier_findings([off, no_tier], None) == []


def test_evictions_are_a_trouble_only_when_no_l2_keeps_them() -> None:
    """Measured on 0.5.6 (0.0015 GB L1, fs L2): a prompt pushed out of L1 came back from disk, so verify
    and doctor name no trouble for it; with no L2 adapter the evicted chunks are lost, and named."""
    evicted = {lmcache.L1_EVICTED: 4.0}
    with_disk = lmcache.Settings(chunk_size=256, l1_size_gb=0.0015, adapters=("fs",))
    assert lmcache.troubles(with_disk, 32, {}, evicted) == []
    alone = lmcache.troubles(lmcache.Settings(chunk_size=256, l1_size_gb=0.0015), 32, {}, evicted)
    assert len(alone) == 1, alone
    assert "during the request 4 chunks were evicted" in alone[0]
    assert lmcache.troubles(lmcache.Settings(chunk_size=256), 32, None, evicted) == []  # at rest: LRU at work
