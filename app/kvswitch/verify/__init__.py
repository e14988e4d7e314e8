"""Verify cache (pure Python, no Qt): prove whether a backend reuses the prompt prefix, and say why not.

Public API used by the desktop app and the CLI::

    run_verify(profile, *, timeout=30.0, cancel=None, progress=None, log_events=None) -> VerifyResult
    VerifyResult / ReplayResult                 # frozen, .to_json(), .describe()
    diagnose.diagnose_requests(a, b) -> PrefixDiagnosis
    recorder.Recorder(upstream, ...)            # transparent recording proxy (start/stop, port, captures)
    recorder.routed_profile(profile, url)       # the same profile, pointed at the recorder
    processes.find_agent_processes(expected_env) -> list[AgentProcess]

``run_verify`` blocks (run it off the GUI thread), never raises for a server problem (the verdict is
ERROR and ``message`` carries the server's own words) and stops within ``timeout`` or soon after
``cancel`` is set.
"""

from __future__ import annotations

from kvswitch.verify.result import VERDICTS, ReplayCase, ReplayResult, VerifyResult
from kvswitch.verify.runner import run_verify

__all__ = ["VERDICTS", "ReplayCase", "ReplayResult", "VerifyResult", "run_verify"]
