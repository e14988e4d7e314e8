"""One identification routine: detection's short-timeout probe and verify's bounded reads agree on a
real llama-server (the binary the test tier builds, a tiny generated model)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvswitch.core.models import Profile, ProfileKind
from kvswitch.platform.probe import identify
from kvswitch.verify.api_detect import detect_server
from kvswitch.verify.probe import Guard
from support.llama import llama_server


@pytest.mark.real_server
def test_probe_and_verify_name_the_real_server_alike(tmp_path: Path) -> None:
    with llama_server(tmp_path, context=4096, parallel=2, metrics=True) as server:
        probed = identify("127.0.0.1", server.port, timeout=5)
        # a custom profile: the kind says nothing, so only the server's answers can name it
        profile = Profile(name="any", kind=ProfileKind.CUSTOM, base_url=f"http://127.0.0.1:{server.port}/v1")
        with Guard(30) as guard:
            verified = detect_server(guard, profile)
    assert probed is not None
    assert probed.kind == ProfileKind.LLAMA_CPP
    assert verified.server == probed.kind.value
    assert verified.models == list(probed.models) == ["tiny"]
    assert probed.version is not None
    assert verified.notes == [f"llama.cpp {probed.version}"]
    assert verified.metrics_url == f"http://127.0.0.1:{server.port}/metrics"
