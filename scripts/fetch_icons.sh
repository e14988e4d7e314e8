#!/usr/bin/env bash
# Copy the icon subset KV Switch uses from two npm packages into resources/icons/, with their licences:
#   lucide-static (ISC)               -> resources/icons/lucide/<name>.svg    toolbar and state icons
#   @lobehub/icons-static-svg (MIT)   -> resources/icons/vendors/<name>.svg   vendor and server logos
# The copies are committed; run this again only to change the subset or the versions. The tarballs are
# fetched with `npm pack` once and cached under ~/.cache/kvswitch/npm-icons.
set -euo pipefail
cd "$(dirname "$0")/.."
LUCIDE_VERSION=1.62.0
LOBEHUB_VERSION=1.95.1
LUCIDE=(plus file-diff undo-2 shield-check download settings circle-alert circle-check triangle-alert
  refresh-cw pencil search grip-vertical key-round external-link)
VENDORS=(claude-color deepseek-color kimi zhipu-color zai bailian-color minimax-color siliconcloud-color
  openrouter-color modelscope-color stepfun-color volcengine-color doubao-color baiducloud-color xiaomimimo
  novita-color longcat-color ppio-color nvidia-color qiniu-color bytedance-color antgroup-color ollama lmstudio
  vllm-color openai)

cache="${HOME}/.cache/kvswitch/npm-icons"
mkdir -p "$cache"
unpack() {  # package version dir
  local tarball="$cache/$3.tgz"
  if [ ! -d "$cache/$3/package" ]; then
    if [ ! -f "$tarball" ]; then
      (cd "$cache" && npm pack "$1@$2" --silent >/dev/null)
      mv "$cache/$(echo "$1" | sed 's/^@//; s/\//-/')-$2.tgz" "$tarball"
    fi
    mkdir -p "$cache/$3"
    tar -xzf "$tarball" -C "$cache/$3"
  fi
}
unpack lucide-static "$LUCIDE_VERSION" "lucide-$LUCIDE_VERSION"
unpack @lobehub/icons-static-svg "$LOBEHUB_VERSION" "lobehub-$LOBEHUB_VERSION"

lucide_src="$cache/lucide-$LUCIDE_VERSION/package"
out=resources/icons/lucide
mkdir -p "$out"
for name in "${LUCIDE[@]}"; do cp "$lucide_src/icons/$name.svg" "$out/"; done
cp "$lucide_src/LICENSE" "$out/LICENSE"
echo "lucide-static $LUCIDE_VERSION (https://lucide.dev), ISC: see LICENSE" > "$out/SOURCE"

lobe_src="$cache/lobehub-$LOBEHUB_VERSION/package"
out=resources/icons/vendors
mkdir -p "$out"
for name in "${VENDORS[@]}"; do cp "$lobe_src/icons/$name.svg" "$out/"; done
# the npm package names its licence (MIT, package.json) but ships no LICENSE file: write the MIT text
license=$(node -p "require('$lobe_src/package.json').license")
[ "$license" = "MIT" ] || { echo "fetch_icons: @lobehub/icons-static-svg is now '$license'" >&2; exit 1; }
cat > "$out/LICENSE" <<'MIT'
MIT License

Copyright (c) 2023 LobeHub

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
MIT
echo "@lobehub/icons-static-svg $LOBEHUB_VERSION (https://github.com/lobehub/lobe-icons), MIT: see LICENSE" \
  > "$out/SOURCE"
echo "fetch_icons: $(ls resources/icons/lucide/*.svg | wc -l) lucide icons, $(ls resources/icons/vendors/*.svg | wc -l) vendor logos"
