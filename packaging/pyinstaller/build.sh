#!/usr/bin/env bash
# Build the one-folder bundle and smoke-test it:
#   packaging/pyinstaller/build.sh [OUT_DIR]      (default: build/pyinstaller)
# Linux and macOS; on Windows run the same pyinstaller command from PowerShell (see README "Packaging").
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-build/pyinstaller}"
python="${PYTHON:-python3}"
"$python" -m PyInstaller --noconfirm --log-level WARN --distpath "$out/dist" --workpath "$out/work" \
  packaging/pyinstaller/kvswitch.spec
bin="$out/dist/kvswitch/kvswitch"
"$bin" --version
QT_QPA_PLATFORM=offscreen "$bin" --config-dir "$out/smoke-config" --smoke-test
echo "bundle: $out/dist/kvswitch"
