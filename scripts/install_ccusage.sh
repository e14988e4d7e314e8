#!/usr/bin/env bash
# Install ccusage 18.0.11 (npm, plain JavaScript: 20.x needs a per-platform native package that could not be
# installed from npm) into ~/.cache/kvswitch/ccusage/18.0.11 and print the path of its entry script. The
# sessions tests compare KV Switch's per-session numbers with `ccusage session --json --offline` (issue 35).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/install_npm_client.sh" ccusage ccusage "${CCUSAGE_VERSION:-18.0.11}" ccusage/dist/index.js
