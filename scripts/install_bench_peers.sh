#!/usr/bin/env bash
# Install the peers that benchmarks/gateway.py compares the KV Switch gateway with, pinned, into
# ~/.cache/kvswitch/peers/ (not part of `scripts/dev.sh test`: only the benchmark needs them):
#   ccr/<version>      npm @musistudio/claude-code-router (3.x needs a package the registry lacks)
#   litellm/<version>  a venv of its own with PyPI litellm[proxy] (about 750 MB, kept apart)
# Prints one line per peer on stdout: `ccr <path of its cli.js>` / `litellm <path of its binary>`, or
# `skip <peer>: <reason>` when it does not install. Re-runs are free once installed.
set -uo pipefail
CACHE="${KVSWITCH_CACHE:-$HOME/.cache/kvswitch}/peers"
CCR_VERSION="${CCR_VERSION:-2.0.0}"
LITELLM_VERSION="${LITELLM_VERSION:-1.108.7}"
ONLY="${1:-all}"

install_ccr() {
  local dir="$CACHE/ccr/$CCR_VERSION" cli
  cli="$dir/node_modules/@musistudio/claude-code-router/dist/cli.js"
  if [ ! -f "$cli" ]; then
    command -v npm >/dev/null || { echo "skip ccr: npm is missing"; return; }
    mkdir -p "$dir"
    if ! npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
        "@musistudio/claude-code-router@$CCR_VERSION" >"$dir/install.log" 2>&1; then
      echo "skip ccr: npm install failed ($(tail -n 1 "$dir/install.log"))"
      return
    fi
  fi
  [ -f "$cli" ] || { echo "skip ccr: no dist/cli.js in the package"; return; }
  echo "ccr $cli"
}

install_litellm() {
  local dir="$CACHE/litellm/$LITELLM_VERSION" bin
  bin="$dir/venv/bin/litellm"
  if [ ! -x "$bin" ] || ! "$dir/venv/bin/python" -c "import litellm.proxy.proxy_server" >/dev/null 2>&1; then
    mkdir -p "$dir"
    if ! { python3 -m venv "$dir/venv" &&
           "$dir/venv/bin/pip" install -q "litellm[proxy]==$LITELLM_VERSION"; } >"$dir/install.log" 2>&1; then
      echo "skip litellm: pip install failed ($(grep -m1 -i error "$dir/install.log" || tail -n 1 "$dir/install.log"))"
      return
    fi
  fi
  [ -x "$bin" ] || { echo "skip litellm: no litellm binary in the venv"; return; }
  echo "litellm $bin"
}

case "$ONLY" in
  ccr) install_ccr ;;
  litellm) install_litellm ;;
  all) install_ccr; install_litellm ;;
  *) echo "usage: install_bench_peers.sh [ccr|litellm|all]" >&2; exit 2 ;;
esac
