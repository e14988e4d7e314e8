"""A damaged ``mcp-costs.json`` (issue 36): ``kvswitch mcp list`` still lists the servers, each cost
"unknown" (the file holds only measured figures to show), and ``record`` refuses to write over it
with a clear error naming the file, so nothing in it is lost."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from kvswitch.cli import main
from kvswitch.core.errors import ConfigParseError
from kvswitch.core.mcp_costs import McpCostStore
from kvswitch.core.paths import AppPaths

DAMAGE = [b"{not json", b'{"costs": 7}', b"\xff\xfe", b'{"costs": [{"server": 1}]}']


@pytest.mark.parametrize("damage", DAMAGE)
def test_list_still_works_and_record_refuses(damage: bytes, fake_home: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "add", "one", "--", sys.executable, "-V"]) == 0
    store = McpCostStore(AppPaths.default())
    store.file.write_bytes(damage)
    capsys.readouterr()
    assert main(["mcp", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["cost"]["claude"] is None
    assert main(["mcp", "list"]) == 0
    assert "cost: unknown" in capsys.readouterr().out
    if damage.startswith(b'{"costs": [{'):
        store.record([])  # an entry that is not a measurement is dropped, the file stays readable
        assert json.loads(store.file.read_text())["costs"] == []
        return
    with pytest.raises(ConfigParseError, match="mcp-costs.json"):
        store.record([])
    assert store.file.read_bytes() == damage
