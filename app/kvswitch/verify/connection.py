""""Test connection" and "Fetch models": one real request, and a verdict that names the likely fix.

A gateway that does not work fails in a handful of ways that look alike from the client (Claude Code
just says "API Error"): the name does not resolve, nothing listens, TLS is spoken to a plain port, the
key is refused or sent in the header the vendor does not read, the base URL has a path segment too many
or too few (404), the quota is spent (429), the server broke (5xx), or a web page or an error object
came back where JSON with ``content``/``data`` was expected. Each gets its own ``outcome`` code, the
server's own message (control characters stripped, key redacted) and a sentence saying what to change.
"""

from __future__ import annotations

import re
import socket
import ssl
import time
from dataclasses import asdict, dataclass, replace
from typing import Any
from urllib.parse import urlsplit

import httpx

from kvswitch import servers
from kvswitch.core import http_client
from kvswitch.core.catalog import vendors_for_host
from kvswitch.core.errors import ConfigParseError, KvSwitchError
from kvswitch.core.http import MB, DeadlineExceeded, HeadersTooSlow, NetworkLimitError, ResponseTooLarge
from kvswitch.core.models import Profile, mask_url
from kvswitch.core.presets import codex_base_url
from kvswitch.core.redact import MASK, mask_query
from kvswitch.core.strictparse import loads_json
from kvswitch.core.text import printable
from kvswitch.servers import (
    API_VERSION_HEADER,
    MESSAGES_API_LABEL,
    VENDOR_MESSAGES_SEGMENT,
    native_model_list,
)
from kvswitch.servers.base import ClientNeed

USER_AGENT = "kvswitch-connection-test"
MESSAGE_LIMIT = 300
#: a model list of a big vendor (OpenRouter: ~1.5 MB) fits; an error body needs only its start
BODY_LIMIT = 8 * MB
ERROR_BODY_LIMIT = 64 * 1024
#: status line and headers of a GET are due this soon (within --timeout): a model list is a file read
HEADER_TIMEOUT = 10.0


@dataclass(frozen=True)
class ConnectionReport:
    """``outcome`` is one of: ok, dns, refused, tls, timeout, network, too-large, bad-encoding, redirect,
    auth, route, rate-limited, bad-request, server-setup, server-error, non-json, error-body, unexpected-body.

    ``server-setup``: the server refused what the client will send because of how it was started (its
    own error names the missing flag: a server without tool choice, for Claude Code)."""

    ok: bool
    outcome: str
    url: str
    summary: str
    fix: str = ""
    status: int | None = None
    server_message: str = ""
    elapsed_ms: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def lines(self) -> list[str]:
        head = "OK" if self.ok else "FAILED"
        lines = [f"{head} [{self.outcome}] {self.url}: {self.summary} ({self.elapsed_ms} ms)"]
        if self.server_message:
            lines.append(f"server said: {self.server_message}")
        if self.fix:
            lines.append(f"fix: {self.fix}")
        return lines


@dataclass(frozen=True)
class ModelListing:
    url: str
    models: tuple[str, ...]


def uses_claude(profile: Profile) -> bool:
    return any(t == "claude" or t.startswith("claude-") for t in profile.targets)


def messages_url(profile: Profile) -> str:
    """Where Claude Code sends its requests: it appends ``/v1/messages`` to ``ANTHROPIC_BASE_URL``."""
    return profile.base_url.rstrip("/") + "/v1/messages"


def models_url(profile: Profile) -> str:
    native = native_model_list(profile.kind)
    if native is not None:
        root = profile.base_url.rstrip("/")
        return root.removesuffix("/v1") + native[0]
    base = codex_base_url(profile) if not uses_claude(profile) else profile.base_url.rstrip("/")
    return base + "/models" if base.endswith("/v1") else base + "/v1/models"


def auth_headers(profile: Profile) -> dict[str, str]:
    """What Claude Code sends: ``ANTHROPIC_API_KEY`` as ``x-api-key``, ``ANTHROPIC_AUTH_TOKEN`` as Bearer."""
    headers = {API_VERSION_HEADER[0]: API_VERSION_HEADER[1], "user-agent": USER_AGENT}
    if profile.key:
        if profile.key_env == "ANTHROPIC_API_KEY" and uses_claude(profile):
            headers["x-api-key"] = profile.key
        else:
            headers["authorization"] = f"Bearer {profile.key}"
    return headers


def _secrets(profile: Profile) -> tuple[str, ...]:
    """What must never be shown of a profile: its key and the password in its base URL."""
    return tuple(profile.secrets)


def clean_message(text: str, secrets: tuple[str, ...] = ()) -> str:
    """The server's words fit for one terminal line: ``printable``, no key, bounded length."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    text = printable(text, multiline=False).strip()
    text = re.sub(r"\s{2,}", " ", text)
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 1] + "…"


def server_message(body: bytes) -> str:
    """``error.message`` (Messages API, OpenAI), ``message``, ``detail``, or the start of the text."""
    text = body.decode("utf-8", "replace")
    try:
        data = loads_json("the answer", text)
    except (ValueError, ConfigParseError):
        return text
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        for key in ("error", "message", "detail", "msg"):
            if isinstance(data.get(key), str) and data[key]:
                return str(data[key])
    return text


def _failure_cause(exc: BaseException) -> str:
    """dns / refused / tls / network, from the OS error at the bottom of httpx's exception chain."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, socket.gaierror):
            return "dns"
        if isinstance(seen, ConnectionRefusedError):
            return "refused"
        if isinstance(seen, ssl.SSLError):
            return "tls"
        seen = seen.__cause__ or seen.__context__
    text = str(exc).lower()
    if "name or service not known" in text or "nodename nor servname" in text or "getaddrinfo" in text:
        return "dns"
    if "refused" in text:
        return "refused"
    if "ssl" in text or "certificate" in text:
        return "tls"
    return "network"


def _vendor_hint(profile: Profile) -> str:
    host = urlsplit(profile.base_url).hostname or ""
    known = vendors_for_host(host)
    if not known or profile.base_url in {v.base_url for v in known}:
        return ""
    urls = " or ".join(v.base_url for v in known)
    return f" The catalog's {MESSAGES_API_LABEL} endpoint for {host} is {urls}."


def _transport_report(
    profile: Profile, url: str, exc: Exception, elapsed: int, timeout: float
) -> ConnectionReport:
    parts = urlsplit(url)
    host, port = parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)
    if isinstance(exc, httpx.TimeoutException):
        return ConnectionReport(False, "timeout", url, f"no answer within {timeout:g} s",
                                "The server is slow or a firewall drops the traffic; check the host and "
                                "port, or raise --timeout for a big local model.", elapsed_ms=elapsed)
    cause = _failure_cause(exc)
    detail = clean_message(str(exc), _secrets(profile))
    if cause == "dns":
        return ConnectionReport(False, "dns", url, f"the host name {host!r} does not resolve",
                                "Check the spelling of the base URL, your DNS or proxy."
                                + _vendor_hint(profile),
                                server_message=detail, elapsed_ms=elapsed)
    if cause == "refused":
        return ConnectionReport(False, "refused", url, f"nothing listens on {host}:{port}",
                                "Start the server, or fix the port in the base URL.", elapsed_ms=elapsed)
    if cause == "tls":
        fix = ("The TLS handshake failed: if the server speaks plain HTTP use http://; otherwise its "
               "certificate is not trusted by this machine (a proxy, or a self-signed certificate).")
        return ConnectionReport(False, "tls", url, "TLS handshake failed", fix, server_message=detail,
                                elapsed_ms=elapsed)
    return ConnectionReport(False, "network", url, "the connection failed", "Check the URL and the network.",
                            server_message=detail, elapsed_ms=elapsed)


def _status_report(profile: Profile, url: str, status: int, location: str, body: bytes,
                   elapsed: int) -> ConnectionReport | None:
    """A failed report for a non-2xx answer, or None when the status is a success."""
    said = clean_message(server_message(body), _secrets(profile))
    if 200 <= status < 300:
        return None
    if 300 <= status < 400:
        location = clean_message(mask_url(mask_query(location)), _secrets(profile))
        return ConnectionReport(False, "redirect", url, f"HTTP {status}: redirected to {location}",
                                "Use the address it redirects to as the base URL (clients do not follow "
                                "redirects for POST).", status, said, elapsed)
    if status in (401, 403):
        return ConnectionReport(False, "auth", url, f"HTTP {status}: the key was refused", _auth_fix(profile),
                                status, said, elapsed)
    if status in (404, 405):
        path = urlsplit(url).path
        return ConnectionReport(False, "route", url, f"HTTP {status}: the server has no route {path}",
                                "The base URL has a path segment too many or too few (Claude Code appends "
                                "/v1/messages itself)." + _vendor_hint(profile), status, said, elapsed)
    if status == 429:
        return ConnectionReport(False, "rate-limited", url, "HTTP 429: rate limit or quota reached",
                                "Wait and retry, or check the plan's quota and balance with the vendor.",
                                status, said, elapsed)
    if status >= 500:
        return ConnectionReport(False, "server-error", url, f"HTTP {status}: the server failed",
                                "A fault on the server's side: retry later; for a local server read its log.",
                                status, said, elapsed)
    return ConnectionReport(False, "bad-request", url, f"HTTP {status}: the request was refused",
                            f"Check the model name ('kvswitch models {profile.name}' lists what it serves).",
                            status, said, elapsed)


def _auth_fix(profile: Profile) -> str:
    if not profile.key:
        return f"The profile has no key: kvswitch profile edit {profile.name!r} --api-key-stdin"
    host = urlsplit(profile.base_url).hostname or ""
    for entry in vendors_for_host(host):
        if entry.key_env != profile.key_env:
            said = "reads" if "key_env" in entry.verified else "is listed (unconfirmed) as reading"
            return (f"{entry.name.en} {said} its key from {entry.key_env}, the profile writes it to "
                    f"{profile.key_env}: kvswitch profile edit {profile.name!r} --key-env {entry.key_env}")
        if entry.keys_url:
            return f"Check the key; {entry.name.en} issues keys at {entry.keys_url}."
    return "Check the key, and that it belongs to this server (keys are per vendor and per plan)."


def _body_report(profile: Profile, url: str, status: int, body: bytes, expected: str,
                 elapsed: int) -> tuple[ConnectionReport | None, Any]:
    try:
        data = loads_json(url, body.decode("utf-8", "replace"))
    except (ValueError, ConfigParseError):
        said = clean_message(body.decode("utf-8", "replace"), _secrets(profile))
        return ConnectionReport(False, "non-json", url, f"HTTP {status} but the body is not JSON",
                                "The base URL probably points at a web page or a proxy, not at the API."
                                + _vendor_hint(profile), status, said, elapsed), None
    if isinstance(data, dict) and data.get("error"):
        said = clean_message(server_message(body), _secrets(profile))
        return ConnectionReport(False, "error-body", url, f"HTTP {status} with an error object instead of "
                                f"{expected!r}", "Read the server's message: the model name or the request "
                                "shape is usually what it rejects.", status, said, elapsed), None
    if not isinstance(data, dict) or expected not in data:
        return ConnectionReport(False, "unexpected-body", url, f"HTTP {status} but no {expected!r} in the "
                                "answer", "This URL does not serve the API the client speaks; check the base "
                                "URL's path." + _vendor_hint(profile), status, clean_message(body.decode(
                                    "utf-8", "replace"), _secrets(profile)), elapsed), None
    return None, data


_Answer = tuple[ConnectionReport | None, int, bytes, int]


def _limit_report(url: str, exc: NetworkLimitError, elapsed: int, timeout: float) -> ConnectionReport:
    """A report for an answer that broke a limit: too slow, too big, or a coding that is not decoded."""
    said = printable(str(exc), multiline=False)
    if isinstance(exc, DeadlineExceeded):
        said = (f"no response headers within {exc.seconds:g} s" if isinstance(exc, HeadersTooSlow)
                else f"no complete answer within the {timeout:g} s timeout")
        return ConnectionReport(False, "timeout", url, said,
                                "The server is slow or sends its answer a byte at a time; check the host "
                                "and port, or raise --timeout for a big local model.", elapsed_ms=elapsed)
    if isinstance(exc, ResponseTooLarge):
        return ConnectionReport(False, "too-large", url, said,
                                "No API answer is that big: the base URL points at something else (a file "
                                "server, a proxy) or the server is broken.", elapsed_ms=elapsed)
    return ConnectionReport(False, "bad-encoding", url, said,
                            "The server (or a proxy in front of it) compresses its answers in a way no API "
                            "client expects; check what the base URL points at.", elapsed_ms=elapsed)


def _request(profile: Profile, method: str, url: str, timeout: float,
             payload: dict[str, Any] | None = None) -> _Answer:
    """``(failure or None, status, body, elapsed ms)``: the body decoded and capped at ``BODY_LIMIT``,
    status line and headers due within ``HEADER_TIMEOUT`` for a GET, all of it within ``timeout``."""
    started = time.monotonic()
    shown = mask_url(url)
    header_timeout = HEADER_TIMEOUT if method == "GET" else None
    try:
        with http_client.request(method, url, timeout=timeout, limit=BODY_LIMIT,
                                 header_timeout=header_timeout, headers=auth_headers(profile), json=payload,
                                 what="the server") as answer:
            status, location = answer.status, answer.headers.get("location", "?")
            body = answer.read() if 200 <= status < 300 else answer.read_prefix(ERROR_BODY_LIMIT)
    except NetworkLimitError as exc:
        elapsed = int((time.monotonic() - started) * 1000)
        return _limit_report(shown, exc, elapsed, timeout), 0, b"", elapsed
    except (httpx.HTTPError, OSError) as exc:
        elapsed = int((time.monotonic() - started) * 1000)
        return _transport_report(profile, shown, exc, elapsed, timeout), 0, b"", elapsed
    elapsed = int((time.monotonic() - started) * 1000)
    return _status_report(profile, shown, status, location, body, elapsed), status, body, elapsed


def _probe_model(profile: Profile) -> str:
    models = profile.models
    return profile.model or models.sonnet or models.opus or models.haiku or "claude-sonnet-4-5"


def _claude_needs(profile: Profile) -> tuple[ClientNeed, ...]:
    return tuple(need for need in servers.get(profile.kind).client_needs if need.client == "claude")


def _unmet_need(profile: Profile, report: ConnectionReport) -> ConnectionReport:
    """A refused request that the server's own words tie to a need of the client: say what to change."""
    for need in _claude_needs(profile) if uses_claude(profile) else ():
        if report.status == 400 and need.refusal in report.server_message:
            return replace(report, outcome="server-setup", summary=f"HTTP 400: {need.message}", fix=need.fix)
    return report


def check_connection(profile: Profile, timeout: float = 20.0) -> ConnectionReport:
    """One real request on the route the profile's client uses: ``POST /v1/messages`` (1 token) for
    Claude Code, ``GET /models`` for a Codex-only profile. Never raises for a network or server fault."""
    if uses_claude(profile):
        url, expected = messages_url(profile), "content"
        ping: dict[str, Any] = {"model": _probe_model(profile), "max_tokens": 1,
                                "messages": [{"role": "user", "content": "ping"}]}
        for need in _claude_needs(profile):  # what Claude Code sends (tools, tool_choice auto)
            ping.update(need.probe)
        payload: dict[str, Any] | None = ping
        method = "POST"
    else:
        url, expected, payload, method = models_url(profile), "data", None, "GET"
    failed, status, body, elapsed = _request(profile, method, url, timeout, payload)
    if failed is not None:
        return _unmet_need(profile, failed)
    url = mask_url(url)
    failed, data = _body_report(profile, url, status, body, expected, elapsed)
    if failed is not None:
        return failed
    model = clean_message(str(data.get("model") or ""), _secrets(profile)) or "the model"
    what = f"answered as {model}" if expected == "content" else "listed its models"
    return ConnectionReport(True, "ok", url, f"HTTP {status}, {what}", status=status, elapsed_ms=elapsed)


def models_urls(profile: Profile) -> list[str]:
    """Where to ask for the model list, best first: many vendors serve their Messages route under a
    path (``VENDOR_MESSAGES_SEGMENT``) but list models only on their OpenAI root."""
    urls = [models_url(profile)]
    parts = urlsplit(profile.base_url)
    path = parts.path.rstrip("/")
    if native_model_list(profile.kind) is None and path.endswith(VENDOR_MESSAGES_SEGMENT):
        root = profile.base_url.rstrip("/")[: -len(path)] + path[: -len(VENDOR_MESSAGES_SEGMENT)]
        urls.append(root.rstrip("/") + "/v1/models")
    return urls


def list_models(profile: Profile, timeout: float = 10.0) -> ModelListing:
    """The model ids the backend serves (``/v1/models``, or the server's own list); a failure raises a
    ``KvSwitchError`` carrying the same diagnosis as ``check_connection``. A 404 on the profile's own
    path falls back to the vendor's root (see ``models_urls``)."""
    native = native_model_list(profile.kind)
    expected, key = native[1:] if native is not None else ("data", "id")
    first_failure: ConnectionReport | None = None
    for url in models_urls(profile):
        failed, status, body, elapsed = _request(profile, "GET", url, timeout)
        if failed is None:
            failed, data = _body_report(profile, mask_url(url), status, body, expected, elapsed)
        if failed is None:
            entries = data.get(expected) if isinstance(data.get(expected), list) else []
            ids = tuple(printable(str(e[key]), multiline=False)
                        for e in entries if isinstance(e, dict) and e.get(key))
            return ModelListing(mask_url(url), ids)
        first_failure = first_failure or failed
        if failed.outcome != "route":
            break
    assert first_failure is not None
    raise KvSwitchError(" — ".join(first_failure.lines()))
