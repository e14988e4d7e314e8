#!/usr/bin/env bash
# Install a pinned OpenCode with npm into ~/.cache/kvswitch/opencode/<version> (for the end-to-end tests)
# and print the path of its native `opencode` binary on stdout. Re-runs are free once installed.
# The npm package's postinstall only picks one of its optional per-platform binaries (AVX2 or
# "baseline", glibc or musl) and links it; scripts are not run, and the first candidate that answers
# `--version` on this machine is the one printed.
set -euo pipefail
VERSION="${OPENCODE_VERSION:-1.18.33}"
CACHE="${KVSWITCH_CACHE:-$HOME/.cache/kvswitch}/opencode/$VERSION"

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) echo "install_opencode: unsupported OS $(uname -s)" >&2; exit 3 ;;
esac
case "$(uname -m)" in
  x86_64|amd64) arch=x64 ;;
  aarch64|arm64) arch=arm64 ;;
  *) echo "install_opencode: unsupported CPU $(uname -m)" >&2; exit 3 ;;
esac

find_bin() {
  local flavour candidate
  for flavour in "" -baseline -musl -baseline-musl; do
    candidate="$CACHE/node_modules/opencode-$os-$arch$flavour/bin/opencode"
    if [ -f "$candidate" ] && "$candidate" --version >/dev/null 2>&1; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

if bin="$(find_bin)"; then
  echo "$bin"
  exit 0
fi
command -v npm >/dev/null || { echo "install_opencode: npm is missing (install Node.js and npm)" >&2; exit 3; }
mkdir -p "$CACHE"
npm install --prefix "$CACHE" --no-audit --no-fund --ignore-scripts --loglevel=error \
  "opencode-ai@$VERSION" >&2
chmod +x "$CACHE"/node_modules/opencode-"$os"-"$arch"*/bin/opencode 2>/dev/null || true
bin="$(find_bin)" || { echo "install_opencode: no opencode binary for $os-$arch in $CACHE runs here" >&2; exit 4; }
echo "$bin"
