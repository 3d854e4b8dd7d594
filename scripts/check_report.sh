#!/usr/bin/env bash
# Renders an HTML report (from `tb report`) with headless Chromium and writes a PNG screenshot,
# so the layout can be looked at without a desktop browser. Network access is disabled for the
# browser: a report that needs anything from outside shows up broken.
#
# Usage: scripts/check_report.sh REPORT.html [OUT.png] [WIDTHxHEIGHT]
# Installs chromium with apt-get when it is missing (Debian/Ubuntu, as root).
set -euo pipefail

report="${1:?usage: scripts/check_report.sh REPORT.html [OUT.png] [WIDTHxHEIGHT]}"
out="${2:-${report%.html}.png}"
size="${3:-1400x3200}"

if [ ! -f "$report" ]; then
  echo "check_report: no such file: $report" >&2
  exit 1
fi

browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser="$b"; break; fi
done
if [ -z "$browser" ]; then
  echo "check_report: installing chromium" >&2
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  browser=chromium
fi

# The report must not reference anything outside itself.
if grep -Eq '(src|href)=|<link|@import|url\(' "$report"; then
  echo "check_report: $report references external resources" >&2
  exit 1
fi

profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
abs="$(cd "$(dirname "$report")" && pwd)/$(basename "$report")"
rm -f "$out"
"$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" \
  --hide-scrollbars --window-size="${size/x/,}" --screenshot="$out" "file://$abs" >/dev/null 2>&1 || true
if [ ! -s "$out" ]; then
  echo "check_report: no screenshot written ($browser failed)" >&2
  exit 1
fi
echo "screenshot: $out"
