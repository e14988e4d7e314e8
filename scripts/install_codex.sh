#!/usr/bin/env bash
# Install a pinned Codex CLI with npm into ~/.cache/kvswitch/codex/<version> (for the end-to-end tests)
# and print the path of its native `codex` binary on stdout (scripts/install_npm_client.sh).
# The npm package is a node launcher plus one optional dependency per platform that carries the native
# binary (a static musl build on Linux, an Apple one on macOS).
set -euo pipefail
VERSION="${CODEX_VERSION:-0.169.0}"
exec bash "$(dirname "$0")/install_npm_client.sh" codex @openai/codex "$VERSION" \
  "@openai/codex-{os}-{arch}/vendor/{cpu}-unknown-linux-musl/bin/codex" \
  "@openai/codex-{os}-{arch}/vendor/{cpu}-apple-darwin/bin/codex" \
  "@openai/codex/vendor/{cpu}-unknown-linux-musl/bin/codex" \
  "@openai/codex/vendor/{cpu}-apple-darwin/bin/codex"
