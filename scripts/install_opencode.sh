#!/usr/bin/env bash
# Install a pinned OpenCode with npm into ~/.cache/kvswitch/opencode/<version> (for the end-to-end tests)
# and print the path of its native `opencode` binary on stdout (scripts/install_npm_client.sh).
# The package's postinstall only picks one of its optional per-platform binaries (AVX2 or "baseline",
# glibc or musl) and links it; here the first of them that answers `--version` on this machine wins.
set -euo pipefail
VERSION="${OPENCODE_VERSION:-1.18.33}"
exec bash "$(dirname "$0")/install_npm_client.sh" opencode opencode-ai "$VERSION" \
  "opencode-{os}-{arch}/bin/opencode" \
  "opencode-{os}-{arch}-baseline/bin/opencode" \
  "opencode-{os}-{arch}-musl/bin/opencode" \
  "opencode-{os}-{arch}-baseline-musl/bin/opencode"
