"""One vLLM and one LMCache server on fixed ports, restarted together with other LMCache settings
(``tests/realserver/test_real_lmcache_tiers.py``): vLLM's connector survives one LMCache restart but its
engine died on the next request after a second one ("non-GPU context not registered", vLLM 0.32.0 with
LMCache 0.5.6), so each new LMCache gets a new vLLM."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kvswitch.commands.doctor_tiers import tier_findings
from kvswitch.core.models import ModelMap, Profile, ProfileKind
from kvswitch.verify.api_detect import OPENAI_CHAT, ServerInfo
from kvswitch.verify.target import Target
from support.net import free_port
from support.vllm import RestartableVllm, RunningLmcache, lmcache_server, metric_values


@dataclass
class Stack:
    """vLLM and LMCache on fixed ports; ``use`` restarts both with the LMCache settings given."""

    workdir: Path
    port: int = field(default_factory=free_port)
    http_port: int = field(default_factory=free_port)
    lmcache: RunningLmcache | None = None
    vllm: RestartableVllm | None = None
    chunk_size: int = 0
    #: the LMCache settings the stack runs now (``use`` again with the same ones starts nothing)
    settings: tuple[int, tuple[dict[str, Any], ...], float] | None = None
    _stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    def use(self, chunk_size: int, adapters: tuple[dict[str, Any], ...], l1_size_gb: float = 1.0) -> None:
        self.stop()
        self.lmcache = self._stack.enter_context(lmcache_server(
            self.workdir / "lmcache", chunk_size=chunk_size, l2_adapters=adapters, port=self.port,
            http_port=self.http_port, l1_size_gb=l1_size_gb))
        self.vllm = RestartableVllm(self.workdir / "vllm", lmcache=self.lmcache, tool_choice=False)
        self.vllm.start()
        self.chunk_size = chunk_size
        self.settings = (chunk_size, adapters, l1_size_gb)

    def stop_lmcache(self) -> None:
        """Only the LMCache server (the stack's context holds nothing else)."""
        self.settings = None
        self._stack.close()
        self._stack = contextlib.ExitStack()

    def stop(self) -> None:
        if self.vllm is not None:
            self.vllm.stop()
        self.settings = None
        self._stack.close()
        self._stack = contextlib.ExitStack()

    @property
    def url(self) -> str:
        assert self.vllm is not None
        assert self.vllm.server is not None
        return self.vllm.server.url

    def target(self) -> Target:
        profile = Profile(name="tiers", kind=ProfileKind.VLLM, base_url=self.url, model="tiny",
                          models=ModelMap(small_fast="tiny"), targets=["claude"])
        server = ServerInfo(server="vllm", metrics_url=f"{self.url}/metrics")
        return Target(profile, server, OPENAI_CHAT, "tiny")

    def doctor(self) -> list[str]:
        """What ``kvswitch doctor`` says about this stack's LMCache, at rest (no prompt sent)."""
        profile = self.target().profile
        return tier_findings([profile], profile)

    def pages(self) -> tuple[dict[str, float], dict[str, float]]:
        assert self.lmcache is not None
        return metric_values(f"{self.url}/metrics"), metric_values(self.lmcache.metrics_url)
