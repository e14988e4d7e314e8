"""The engines' sentences and words, as literals ``pyside6-lupdate`` collects into the ``EngineText``
context; ``engine_text`` matches an engine's text against them and translates it.

A table of its own, split out of ``engine_text`` (the matching) so that module stays under the project's
400-line size; a new engine sentence is added here.
"""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP

CONTEXT = "EngineText"

#: verdict and state words, as the engines spell them (verify upper case, logs and client runs lower)
WORDS = (
    QT_TRANSLATE_NOOP("EngineText", "HIT"),
    QT_TRANSLATE_NOOP("EngineText", "PARTIAL"),
    QT_TRANSLATE_NOOP("EngineText", "MISS"),
    QT_TRANSLATE_NOOP("EngineText", "UNKNOWN"),
    QT_TRANSLATE_NOOP("EngineText", "ERROR"),
    QT_TRANSLATE_NOOP("EngineText", "hit"),
    QT_TRANSLATE_NOOP("EngineText", "partial"),
    QT_TRANSLATE_NOOP("EngineText", "miss"),
    QT_TRANSLATE_NOOP("EngineText", "unknown"),
    QT_TRANSLATE_NOOP("EngineText", "error"),
    QT_TRANSLATE_NOOP("EngineText", "cold"),
    QT_TRANSLATE_NOOP("EngineText", "shared_prefix"),
    QT_TRANSLATE_NOOP("EngineText", "synthetic"),
    QT_TRANSLATE_NOOP("EngineText", "client"),
    QT_TRANSLATE_NOOP("EngineText", "not started"),
    QT_TRANSLATE_NOOP("EngineText", "Done"),
    QT_TRANSLATE_NOOP("EngineText", "Detecting the server"),
    QT_TRANSLATE_NOOP("EngineText", "Sending the cold request"),
    QT_TRANSLATE_NOOP("EngineText", "Sending the warm request (same prefix)"),
    QT_TRANSLATE_NOOP("EngineText", "Reading the cache numbers"),
    QT_TRANSLATE_NOOP("EngineText", "Replaying Claude Code-shaped requests"),
    QT_TRANSLATE_NOOP("EngineText", "verification cancelled"),
    QT_TRANSLATE_NOOP("EngineText", "{client}: conversation {conversation}, turn {turn}"),
    QT_TRANSLATE_NOOP("EngineText", "{client}: done"),
)

#: sentences with named fields, exactly as the engines format them
TEMPLATES = (
    # verify: where two prompts part (verify.diagnose.PrefixDiagnosis.describe)
    QT_TRANSLATE_NOOP("EngineText", "First divergence: {part}, byte {part_offset} of the part (byte {offset} "
                                    "of the prompt); {share} of B's prompt is identical before it "
                                    "({identical} of {total} bytes)."),
    QT_TRANSLATE_NOOP("EngineText", "The two prompts are identical: the whole prompt can be reused."),
    QT_TRANSLATE_NOOP("EngineText", "B continues A (append only): all {count} bytes of A's prompt can be "
                                    "reused."),
    QT_TRANSLATE_NOOP("EngineText", "B is a prefix of A (shorter request): all of it can be reused."),
    QT_TRANSLATE_NOOP("EngineText", "  other parts that differ: {parts}"),
    QT_TRANSLATE_NOOP("EngineText", "  same:  …{text}"),
    QT_TRANSLATE_NOOP("EngineText", "  A:     {text}…"),
    QT_TRANSLATE_NOOP("EngineText", "  B:     {text}…"),
    QT_TRANSLATE_NOOP("EngineText", "Cause: {cause}"),
    QT_TRANSLATE_NOOP("EngineText", "Fix: set {env}"),
    QT_TRANSLATE_NOOP("EngineText", "Note: {note}"),
    # verify: outcome summaries (runner._judge)
    QT_TRANSLATE_NOOP("EngineText", "the server reused {cached} of {prompt} prompt tokens{share}: the "
                                    "prefix cache works."),
    QT_TRANSLATE_NOOP("EngineText", "the server reused only {cached} of {prompt} prompt tokens{share}."),
    QT_TRANSLATE_NOOP("EngineText", "the server re-processed the prompt ({cached} of {prompt} tokens "
                                    "reused{share}) although the prefix was identical."),
    QT_TRANSLATE_NOOP("EngineText", "the server answered but reports no prompt-cache numbers.{hint}"),
    QT_TRANSLATE_NOOP("EngineText", "The warm request's first token came {speedup}x faster, which suggests "
                                    "reuse, but timing alone proves nothing."),
    QT_TRANSLATE_NOOP("EngineText", "The warm request was not faster either."),
    # verify: reasons (runner hints)
    QT_TRANSLATE_NOOP("EngineText", "the server did not reuse the identical prefix; check that its "
                                    "prompt/prefix caching is enabled."),
    QT_TRANSLATE_NOOP("EngineText", "part of the identical prefix was re-processed: the cache may have "
                                    "been trimmed (context shift, --cache-reuse chunks) or evicted by "
                                    "another request in between."),
    QT_TRANSLATE_NOOP("EngineText", "attach the server's log to the profile so the log engine can count "
                                    "reused tokens."),
    QT_TRANSLATE_NOOP("EngineText", "nothing listens at that address: start the server or fix the port in "
                                    "the profile."),
    QT_TRANSLATE_NOOP("EngineText", "the server rejected the key: check the profile's API key."),
    QT_TRANSLATE_NOOP("EngineText", "the server's context is too small for the probe; start it with a "
                                    "larger -c / --ctx-size."),
    QT_TRANSLATE_NOOP("EngineText", "the server does not know that model name: fix the profile's model."),
    QT_TRANSLATE_NOOP("EngineText", "the server accepted the connection but did not answer in time (busy, "
                                    "loading, or hung)."),
    QT_TRANSLATE_NOOP("EngineText", "the server sent far more than any API answer; is this URL really an "
                                    "inference server?"),
    # verify: errors (probe)
    QT_TRANSLATE_NOOP("EngineText", "{url}: connection refused — is the server running on that port?"),
    QT_TRANSLATE_NOOP("EngineText", "{url}: cannot connect ({reason})"),
    QT_TRANSLATE_NOOP("EngineText", "{url}: no complete answer within the {seconds} s timeout"),
    QT_TRANSLATE_NOOP("EngineText", "{url}: the server closed the connection without a complete answer"),
    QT_TRANSLATE_NOOP("EngineText", "HTTP {status} from {url}: {message}"),
    QT_TRANSLATE_NOOP("EngineText", "{url}: the server answered 200 but sent no JSON events"),
    QT_TRANSLATE_NOOP("EngineText", "{url}: the server reported an error mid-stream: {message}"),
    QT_TRANSLATE_NOOP("EngineText", "{url}: not a JSON answer: {message}"),
    QT_TRANSLATE_NOOP("EngineText", "{url}: empty answer"),
    QT_TRANSLATE_NOOP("EngineText", "{url}: none of the known APIs answered ({errors}) — check the base URL"),
    # verify: evidence lines (runner._judge, servers.base.Reading.describe)
    QT_TRANSLATE_NOOP("EngineText", "warm request: {reading} (decided)"),
    QT_TRANSLATE_NOOP("EngineText", "warm request: {reading} (decided; {why})"),
    QT_TRANSLATE_NOOP("EngineText", "warm request: {reading}"),
    QT_TRANSLATE_NOOP("EngineText", "cold request: {reading}"),
    QT_TRANSLATE_NOOP("EngineText", "{source} = {cached} of {prompt} prompt tokens"),
    QT_TRANSLATE_NOOP("EngineText", "{source}: prompt {prompt} tokens, no cache count"),
    QT_TRANSLATE_NOOP("EngineText", "time to first token: cold {cold} ms, warm {warm} ms ({speedup}x)"),
    QT_TRANSLATE_NOOP("EngineText", "time to first token: cold {cold} ms, warm {warm} ms"),
    QT_TRANSLATE_NOOP("EngineText", "note: {source} disagrees ({cached} of {prompt}); another client may "
                                    "have used the server at the same time, or the log belongs to another "
                                    "server."),
    # verify: "as Claude Code sends it" (claude_replay) and the token-level diagnosis (tokendiag, causes)
    QT_TRANSLATE_NOOP("EngineText", "could not replay Claude Code's requests: {error}"),
    QT_TRANSLATE_NOOP("EngineText", "the server has no {api} /v1/messages endpoint ({error}); Claude Code "
                                    "needs one, or a gateway that translates"),
    QT_TRANSLATE_NOOP("EngineText", "the server reports no cache numbers for Claude Code-shaped requests."),
    QT_TRANSLATE_NOOP("EngineText", "a new conversation keeps {with_cached} of {with_prompt} tokens with "
                                    "the billing header, {without_cached} of {without_prompt} without it: "
                                    "the header makes no difference on this server."),
    QT_TRANSLATE_NOOP("EngineText", "a new conversation keeps {with_cached} of {with_prompt} tokens with "
                                    "the billing header, {without_cached} of {without_prompt} without it: "
                                    "the header breaks the prefix. Set CLAUDE_CODE_ATTRIBUTION_HEADER=0. "
                                    "(Claude Code puts the user's first words before its environment "
                                    "block, so even without the header a new conversation re-processes "
                                    "what follows them; later turns reuse all.)"),
    QT_TRANSLATE_NOOP("EngineText", "In the server's tokens ({server}): A has {a}, B has {b}. {cause}"),
    QT_TRANSLATE_NOOP("EngineText", "In the server's tokens ({server}): A has {a}, B has {b}."),
    QT_TRANSLATE_NOOP("EngineText", "Claude Code's x-anthropic-billing-header system block differs between "
                                    "conversations, so the server re-processes the whole prompt. "
                                    "CLAUDE_CODE_ATTRIBUTION_HEADER=0 removes it."),
    QT_TRANSLATE_NOOP("EngineText", "only whitespace differs (spaces, tabs or line breaks) — the tokens "
                                    "still change."),
    QT_TRANSLATE_NOOP("EngineText", "a date or time inside the prompt changed; anything after it is "
                                    "re-processed. Move it to the end of the prompt or keep it fixed."),
    QT_TRANSLATE_NOOP("EngineText", "a per-request id (uuid or hex token) inside the prompt changed."),
    QT_TRANSLATE_NOOP("EngineText", "the user's message comes before a large unchanged block ({label}, "
                                    "{size} bytes), so that block is re-processed every time the user's "
                                    "words differ."),
    QT_TRANSLATE_NOOP("EngineText", "the system prompt itself changed."),
    QT_TRANSLATE_NOOP("EngineText", "the tools list changed."),
    QT_TRANSLATE_NOOP("EngineText", "the tools list changed ({changes})."),
    # a server's own advice (servers.*.advice) and the log engine's diagnosis (logs.diagnose)
    QT_TRANSLATE_NOOP("EngineText", "{server} did not keep the prefix: prompt caching may be off "
                                    "(--no-cache-prompt, or a client sending cache_prompt:false), the warm "
                                    "request may have gone to another slot (-np > 1), or the model's "
                                    "memory (SWA/hybrid/recurrent) forces full re-processing."),
    QT_TRANSLATE_NOOP("EngineText", "Start {server} with --swa-full (SWA models) or keep more context "
                                    "checkpoints (--ctx-checkpoints), or use a model without SWA."),
    QT_TRANSLATE_NOOP("EngineText", "The last {count} requests each re-processed almost the whole prompt "
                                    "(about {prompt} tokens) and reused only the first ~{reused} tokens "
                                    "from the cache, then the prompt differs. Something at the very start "
                                    "of the prompt changes every conversation, for example Claude Code's "
                                    "billing header (x-anthropic-billing-header). Set "
                                    "CLAUDE_CODE_ATTRIBUTION_HEADER=0 in the profile's environment."),
    QT_TRANSLATE_NOOP("EngineText", "{count} of the last requests were fully re-processed because the "
                                    "model uses sliding-window attention or hybrid/recurrent memory and "
                                    "the cache could not be rolled back to where the prompt changed. "
                                    "{advice}"),
    QT_TRANSLATE_NOOP("EngineText", "Keep the full sliding-window cache or more context checkpoints if the "
                                    "server has a setting for it, or use a model without SWA."),
    QT_TRANSLATE_NOOP("EngineText", "The last {count} requests reused nothing, although the server already "
                                    "held the same prompt: the client disables prompt caching "
                                    "(\"cache_prompt\": false in the request) or the server runs with "
                                    "--no-cache-prompt."),
    QT_TRANSLATE_NOOP("EngineText", "The last {count} requests reused nothing from the cache: the prompt "
                                    "changes at its very first tokens, or prompt caching is disabled "
                                    "(\"cache_prompt\": false, --no-cache-prompt), or each request lands "
                                    "on a slot that never held it (try -np 1 or pin id_slot)."),
    # connection test (verify.connection)
    QT_TRANSLATE_NOOP("EngineText", "no answer within {seconds} s"),
    QT_TRANSLATE_NOOP("EngineText", "The server is slow or a firewall drops the traffic; check the host "
                                    "and port, or raise --timeout for a big local model."),
    QT_TRANSLATE_NOOP("EngineText", "the host name {host} does not resolve"),
    QT_TRANSLATE_NOOP("EngineText", "Check the spelling of the base URL, your DNS or proxy."),
    QT_TRANSLATE_NOOP("EngineText", "nothing listens on {address}"),
    QT_TRANSLATE_NOOP("EngineText", "Start the server, or fix the port in the base URL."),
    QT_TRANSLATE_NOOP("EngineText", "TLS handshake failed"),
    QT_TRANSLATE_NOOP("EngineText", "The TLS handshake failed: if the server speaks plain HTTP use "
                                    "http://; otherwise its certificate is not trusted by this machine (a "
                                    "proxy, or a self-signed certificate)."),
    QT_TRANSLATE_NOOP("EngineText", "the connection failed"),
    QT_TRANSLATE_NOOP("EngineText", "Check the URL and the network."),
    QT_TRANSLATE_NOOP("EngineText", "HTTP {status}: redirected to {location}"),
    QT_TRANSLATE_NOOP("EngineText", "HTTP {status}: the key was refused"),
    QT_TRANSLATE_NOOP("EngineText", "HTTP {status}: the server has no route {path}"),
    QT_TRANSLATE_NOOP("EngineText", "HTTP 429: rate limit or quota reached"),
    QT_TRANSLATE_NOOP("EngineText", "Wait and retry, or check the plan's quota and balance with the vendor."),
    QT_TRANSLATE_NOOP("EngineText", "HTTP {status}: the server failed"),
    QT_TRANSLATE_NOOP("EngineText", "A fault on the server's side: retry later; for a local server read "
                                    "its log."),
    QT_TRANSLATE_NOOP("EngineText", "HTTP {status}: the request was refused"),
    QT_TRANSLATE_NOOP("EngineText", "HTTP {status} but the body is not JSON"),
    QT_TRANSLATE_NOOP("EngineText", "HTTP {status}, answered as {model}"),
    QT_TRANSLATE_NOOP("EngineText", "HTTP {status}, listed its models"),
    QT_TRANSLATE_NOOP("EngineText", "Check the key, and that it belongs to this server (keys are per "
                                    "vendor and per plan)."),
    QT_TRANSLATE_NOOP("EngineText", "The profile has no key: kvswitch profile edit {name} --api-key-stdin"),
    QT_TRANSLATE_NOOP("EngineText", "Check the key; {vendor} issues keys at {url}."),
    QT_TRANSLATE_NOOP("EngineText", "Check the model name ('kvswitch models {name}' lists what it serves)."),
    QT_TRANSLATE_NOOP("EngineText", "OK [{outcome}] {url}: {summary} ({ms} ms)"),
    QT_TRANSLATE_NOOP("EngineText", "FAILED [{outcome}] {url}: {summary} ({ms} ms)"),
    QT_TRANSLATE_NOOP("EngineText", "server said: {message}"),
    QT_TRANSLATE_NOOP("EngineText", "fix: {fix}"),
    QT_TRANSLATE_NOOP("EngineText", "Use the address it redirects to as the base URL (clients do not "
                                    "follow redirects for POST)."),
    QT_TRANSLATE_NOOP("EngineText", "The base URL has a path segment too many or too few (Claude Code "
                                    "appends /v1/messages itself).{hint}"),
    QT_TRANSLATE_NOOP("EngineText", "The catalog's {api} endpoint for {host} is {urls}."),
    QT_TRANSLATE_NOOP("EngineText", "The base URL probably points at a web page or a proxy, not at the "
                                    "API.{hint}"),
    QT_TRANSLATE_NOOP("EngineText", "HTTP {status} with an error object instead of {expected}"),
    QT_TRANSLATE_NOOP("EngineText", "Read the server's message: the model name or the request shape is "
                                    "usually what it rejects."),
    QT_TRANSLATE_NOOP("EngineText", "HTTP {status} but no {expected} in the answer"),
    QT_TRANSLATE_NOOP("EngineText", "This URL does not serve the API the client speaks; check the base "
                                    "URL's path.{hint}"),
    QT_TRANSLATE_NOOP("EngineText", "{vendor} reads its key from {env}, the profile writes it to "
                                    "{profile_env}: kvswitch profile edit {name} --key-env {env}"),
    QT_TRANSLATE_NOOP("EngineText", "{vendor} is listed (unconfirmed) as reading its key from {env}, the "
                                    "profile writes it to {profile_env}: kvswitch profile edit {name} "
                                    "--key-env {env}"),
    QT_TRANSLATE_NOOP("EngineText", "no response headers within {seconds} s"),
    QT_TRANSLATE_NOOP("EngineText", "no complete answer within the {seconds} s timeout"),
    QT_TRANSLATE_NOOP("EngineText", "The server is slow or sends its answer a byte at a time; check the "
                                    "host and port, or raise --timeout for a big local model."),
    QT_TRANSLATE_NOOP("EngineText", "No API answer is that big: the base URL points at something else (a "
                                    "file server, a proxy) or the server is broken."),
    QT_TRANSLATE_NOOP("EngineText", "The server (or a proxy in front of it) compresses its answers in a "
                                    "way no API client expects; check what the base URL points at."),
    # log reading (logs.sources, logs.process)
    QT_TRANSLATE_NOOP("EngineText", "following {path}"),
    QT_TRANSLATE_NOOP("EngineText", "following {path} (truncated, reading from the start)"),
    QT_TRANSLATE_NOOP("EngineText", "following journal of {unit}"),
    QT_TRANSLATE_NOOP("EngineText", "waiting for file {path}"),
    QT_TRANSLATE_NOOP("EngineText", "waiting for a log file in {path}"),
    QT_TRANSLATE_NOOP("EngineText", "waiting for directory {path}"),
    # logs: a server's /metrics as a source (logs.parsers)
    QT_TRANSLATE_NOOP("EngineText", "waiting for {url}"),
    QT_TRANSLATE_NOOP("EngineText", "waiting for {url} (HTTP {status})"),
    QT_TRANSLATE_NOOP("EngineText", "{url} is not a metrics page with request counters (over 4 MB)"),
    QT_TRANSLATE_NOOP("EngineText", "{url} has no request counters"),
    QT_TRANSLATE_NOOP("EngineText", "reading the server's counters at {url}"),
    QT_TRANSLATE_NOOP("EngineText", "from the server's /metrics: the counters' increase over one finished "
                                    "request"),
    QT_TRANSLATE_NOOP("EngineText", "from the server's /metrics: {requests} requests finished between two "
                                    "scrapes; their totals, not split per request"),
    QT_TRANSLATE_NOOP("EngineText", "permission denied: {path}"),
    QT_TRANSLATE_NOOP("EngineText", "not a file (a directory): {path}"),
    QT_TRANSLATE_NOOP("EngineText", "not a directory: {path}"),
    QT_TRANSLATE_NOOP("EngineText", "cannot open {path}: {reason}"),
    QT_TRANSLATE_NOOP("EngineText", "cannot check {path}: {reason}"),
    QT_TRANSLATE_NOOP("EngineText", "cannot read {path}: {reason}"),
    QT_TRANSLATE_NOOP("EngineText", "cannot start {program}: {reason}"),
    QT_TRANSLATE_NOOP("EngineText", "running (pid {pid}): {command}"),
    QT_TRANSLATE_NOOP("EngineText", "stopped (exit code {code})"),
    QT_TRANSLATE_NOOP("EngineText", "process exited (code {code})"),
    QT_TRANSLATE_NOOP("EngineText", "cannot start: the command is empty"),
    QT_TRANSLATE_NOOP("EngineText", "cannot start: command not found: {program}"),
    QT_TRANSLATE_NOOP("EngineText", "cannot start: permission denied: {program}"),
    QT_TRANSLATE_NOOP("EngineText", "journalctl not found: this system has no systemd journal to follow"),
    QT_TRANSLATE_NOOP("EngineText", "journalctl for {unit} ended: {status}"),
    # moving profiles between machines (platform.transfer)
    QT_TRANSLATE_NOOP("EngineText", "imported {count} profile(s){names}"),
    QT_TRANSLATE_NOOP("EngineText", "  {old} already existed, imported as {new}"),
    QT_TRANSLATE_NOOP("EngineText", "  no API key in the file for: {names} (enter it before use)"),
    QT_TRANSLATE_NOOP("EngineText", "not a KV Switch profiles file: {reason}"),
    QT_TRANSLATE_NOOP("EngineText", "not a KV Switch profiles file (no 'profiles' list)"),
    QT_TRANSLATE_NOOP("EngineText", "written by a newer or different program; upgrade KV Switch to read it"),
    QT_TRANSLATE_NOOP("EngineText", "profile #{index} is not an object"),
    # why a request missed, as the log engine names it (the log parsers' reasons, shown per request)
    QT_TRANSLATE_NOOP("EngineText", "KV cache reuse failed: the whole prompt was processed again"),
    QT_TRANSLATE_NOOP("EngineText", "full re-processing forced: SWA or hybrid/recurrent model without a "
                                    "usable checkpoint"),
    QT_TRANSLATE_NOOP("EngineText", "the cached prompt and the new one differ (common part does not match "
                                    "fully)"),
    QT_TRANSLATE_NOOP("EngineText", "the cache could not be truncated (hybrid/recurrent model): memory "
                                    "cleared"),
    QT_TRANSLATE_NOOP("EngineText", "a context checkpoint was invalidated"),
    QT_TRANSLATE_NOOP("EngineText", "a context checkpoint could not be restored"),
    QT_TRANSLATE_NOOP("EngineText", "restored from a context checkpoint"),
    QT_TRANSLATE_NOOP("EngineText", "the slot's cached prompt was cleared"),
    QT_TRANSLATE_NOOP("EngineText", "the RAM prompt cache could not be loaded"),
    QT_TRANSLATE_NOOP("EngineText", "restored from the host-RAM prompt cache"),
    QT_TRANSLATE_NOOP("EngineText", "chunks reused by KV shifting (--cache-reuse)"),
    QT_TRANSLATE_NOOP("EngineText", "cache reuse (KV shifting) is not supported by this model"),
    QT_TRANSLATE_NOOP("EngineText", "one prefill batch of {count} sequences"),
    # files the apply reads (targets, core.strictparse): the reason after "path:line:column: "
    QT_TRANSLATE_NOOP("EngineText", "not valid JSON: {reason}"),
    QT_TRANSLATE_NOOP("EngineText", "not valid TOML: {reason}"),
    QT_TRANSLATE_NOOP("EngineText", "not JSON: {reason}"),
    QT_TRANSLATE_NOOP("EngineText", "the key {key} appears twice; keep one of them"),
    QT_TRANSLATE_NOOP("EngineText", "JSON does not allow comments; remove the comment"),
    QT_TRANSLATE_NOOP("EngineText", "trailing comma before '}'; remove it"),
    QT_TRANSLATE_NOOP("EngineText", "expected a JSON object {...} at the top level, found {kind}"),
    QT_TRANSLATE_NOOP("EngineText", "'env' must be an object of NAME: \"value\" entries"),
    QT_TRANSLATE_NOOP("EngineText", "'{where}' must be an object to hold '{key}'"),
    QT_TRANSLATE_NOOP("EngineText", "'{where}' must be a table to hold '{key}'"),
    QT_TRANSLATE_NOOP("EngineText", "not UTF-8 text (byte {byte}); save it as UTF-8"),
    QT_TRANSLATE_NOOP("EngineText", "Expecting property name enclosed in double quotes"),
    QT_TRANSLATE_NOOP("EngineText", "Expecting value"),
    QT_TRANSLATE_NOOP("EngineText", "Expecting ',' delimiter"),
    QT_TRANSLATE_NOOP("EngineText", "Expecting ':' delimiter"),
    QT_TRANSLATE_NOOP("EngineText", "Extra data"),
    QT_TRANSLATE_NOOP("EngineText", "{message}: line {line} column {column} (char {char})"),
)
