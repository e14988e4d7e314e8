"""The Usage tab's request log shows where a request's cached tokens came from (issue 37): the split by
cache tier the gateway recorded, in the cached figure's tooltip; a row without one has none."""

from __future__ import annotations

import json
import time
from typing import Any

from kvswitch.ui.usage.usage_view import UsageView

SPLIT = {"vllm_prefix_cache": 0, "lmcache_l1": 1024, "lmcache_l2": 256, "computed": 57,
         "lmcache_l2_adapters": {"resp": 2}, "chunk_size": 128}


def test_the_cached_figure_names_its_tiers(qtbot: Any, controller: Any, paths: Any) -> None:
    from kvswitch.gateway import control
    from kvswitch.usage.schema import UsageRow
    from kvswitch.usage.store import UsageStore

    store = UsageStore(control.usage_db_path(paths))
    try:
        for offset, tiers in ((30, None), (20, json.dumps(SPLIT))):
            store.add(UsageRow(time=time.time() - offset, client="pinned", profile="lm",
                               upstream="http://127.0.0.1:8000/v1/chat/completions", model="tiny", status=200,
                               input_tokens=1337, cached_tokens=1280, output_tokens=4, tiers=tiers))
    finally:
        store.close()
    view = UsageView(controller)
    qtbot.addWidget(view)
    view.show()
    view.refresh()
    qtbot.waitUntil(lambda: view.log is not None and not view.loading, timeout=10_000)
    table = view.request_log.requests_table
    assert table.rowCount() == 2
    assert table.item(0, 5).toolTip() == ("Prompt tokens by cache tier: vLLM 0 · L1 1024 · "
                                          "L2 256 (Redis resp 2 loads) · computed 57")  # newest first
    assert table.item(1, 5).toolTip() == ""
