#!/usr/bin/env bash
# Install KV Switch's desktop entry, AppStream metainfo and icons for the current user (or into DATA_DIR):
#   packaging/linux/install.sh [DATA_DIR]      (default: ${XDG_DATA_HOME:-~/.local/share})
# The `kvswitch` command itself comes from `pip install .` (or pipx); this makes it show up in menus.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
data="${1:-${XDG_DATA_HOME:-$HOME/.local/share}}"
id="io.github.kvswitch.KVSwitch"
install -Dm644 "$here/$id.desktop" "$data/applications/$id.desktop"
install -Dm644 "$here/$id.metainfo.xml" "$data/metainfo/$id.metainfo.xml"
install -Dm644 "$root/resources/icons/kvswitch.svg" "$data/icons/hicolor/scalable/apps/$id.svg"
for png in "$root"/resources/icons/png/kvswitch-*.png; do
  size="${png##*-}"
  size="${size%.png}"
  install -Dm644 "$png" "$data/icons/hicolor/${size}x${size}/apps/$id.png"
done
if command -v update-desktop-database >/dev/null; then update-desktop-database -q "$data/applications" || true; fi
echo "installed desktop entry and icons into $data"
