"""A base URL names its catalog vendor and the protocol served there, from the packaged catalog itself."""

from __future__ import annotations

import pytest

from kvswitch.core.catalog import vendors
from kvswitch.servers.vendor_match import PROTOCOL_LABELS, vendor_for_url

CATALOG = vendors()


@pytest.mark.parametrize("entry", CATALOG, ids=[entry.id for entry in CATALOG])
def test_every_vendor_url_names_its_own_vendor_and_protocol(entry: object) -> None:
    found = vendor_for_url(entry.base_url)  # type: ignore[attr-defined]
    assert found is not None
    assert found.vendor.id == entry.id  # type: ignore[attr-defined]
    assert found.protocol == entry.claude_protocol  # type: ignore[attr-defined]
    assert found.protocol_label == PROTOCOL_LABELS[found.protocol]
    # as people type it: a trailing slash, an upper-case host
    typed = entry.base_url.rstrip("/") + "/"  # type: ignore[attr-defined]
    head, _, rest = typed.partition("://")
    host, _, path = rest.partition("/")
    again = vendor_for_url(f"{head}://{host.upper()}/{path}")
    assert again is not None
    assert again.vendor.id == entry.id


@pytest.mark.parametrize("entry", [e for e in CATALOG if e.codex_base_url],
                         ids=[e.id for e in CATALOG if e.codex_base_url])
def test_a_codex_url_names_its_vendor_and_the_codex_protocol(entry: object) -> None:
    found = vendor_for_url(entry.codex_base_url)  # type: ignore[attr-defined]
    assert found is not None
    assert found.vendor.id == entry.id  # type: ignore[attr-defined]
    assert found.protocol == entry.codex_protocol  # type: ignore[attr-defined]


def test_plans_sharing_one_host_are_told_apart_by_their_path() -> None:
    ark = [e for e in CATALOG if e.host == "ark.cn-beijing.volces.com"]
    assert len(ark) >= 2  # the reason the path decides
    for entry in ark:
        found = vendor_for_url(entry.base_url + "/v1/messages")  # a route below the endpoint
        assert found is not None
        assert found.vendor.id == entry.id
    # a path under none of the plans still names a vendor on that host (the first the catalog lists)
    other = vendor_for_url("https://ark.cn-beijing.volces.com/api/codingx")
    assert other is not None
    assert other.vendor.host == "ark.cn-beijing.volces.com"


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080", "https://gateway.example.org/anthropic",
                                 "not a url", "", "http://[::1"])
def test_urls_of_no_vendor_name_none(url: str) -> None:
    assert vendor_for_url(url) is None
