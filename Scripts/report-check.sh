#!/usr/bin/env bash
# The report page in a real browser (issue 25): plays a short demo, writes its report, opens the
# page in Debian's chromium (headless; installed here when it is installable), takes a screenshot
# and fails on any console message of level error, or on a chart that draws no series.
#
#   Scripts/report-check.sh [--binary PATH] [--screenshot FILE] [--subscribers N] [--nights N] [--notifications]
#
# --notifications plays the demo with the App Store Server API and notifications (the page's
# changes by source and notification lag then show both). The README's screenshot, docs/report.png:
#   Scripts/report-check.sh --binary .build/release/status-poller --subscribers 3000 --nights 45 --notifications --screenshot docs/report.png
set -euo pipefail
cd "$(dirname "$0")/.."

binary=.build/debug/status-poller screenshot="" subscribers=400 nights=30 notifications=()
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="$2"; shift 2 ;;
    --screenshot) screenshot="$2"; shift 2 ;;
    --subscribers) subscribers="$2"; shift 2 ;;
    --nights) nights="$2"; shift 2 ;;
    --notifications) notifications=(--notifications --backend server-api); shift ;;
    *) echo "error: unknown option '$1' (--binary PATH, --screenshot FILE, --subscribers N, --nights N, --notifications)" >&2; exit 2 ;;
  esac
done

browser=$(command -v chromium || true)
if [ -z "$browser" ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  # A fresh machine's package lists may be empty or old: read them once before deciding. (The
  # policy is read whole first: `grep -q` would close the pipe early, and pipefail call it a failure.)
  candidate() { local policy; policy=$(apt-cache policy chromium 2>/dev/null || true); grep -q 'Candidate: [0-9]' <<< "$policy"; }
  candidate || $sudo apt-get update -qq > /dev/null 2>&1 || true
  if candidate; then
    echo "==> installing chromium" >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium > /dev/null
    browser=$(command -v chromium)
  else
    echo "report check skipped: chromium is not installable here" >&2
    exit 0
  fi
fi

. Scripts/reliability/binary.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$(demo_binary_of "$binary")" demo --database "$work/demo.sqlite" --subscribers "$subscribers" --nights "$nights" "${notifications[@]}" > "$work/demo.log" 2>&1 \
  || { tail -20 "$work/demo.log" >&2; echo "error: the demo failed" >&2; exit 1; }
"$binary" report --database "$work/demo.sqlite" --output "$work/report.html" >&2

# Every chart draws at least one series (an empty one would say "Nothing in this period").
charts=$(grep -o '<svg' "$work/report.html" | wc -l)
drawn=$(python3 - "$work/report.html" <<'PY'
import re, sys
page = open(sys.argv[1]).read()
print(sum(1 for svg in re.findall(r'<svg.*?</svg>', page, re.S) if 'class="series"' in svg))
PY
)
[ "$charts" -ge 6 ] && [ "$drawn" -eq "$charts" ] || { echo "error: $drawn of $charts charts draw a series" >&2; exit 1; }
grep -q '<script' "$work/report.html" && { echo "error: the page carries a script" >&2; exit 1; }
revenue=$(grep -o '<section id="revenue-[a-z]*"' "$work/report.html" | wc -l || true)
if [ ${#notifications[@]} -gt 0 ]; then
  # Apple's signed transactions carry prices and offers: a revenue chart and an MRR movement
  # chart per currency the simulator sells in (five storefronts), and the offers' conversion.
  movement=$(grep -o '<section id="mrr-movement-[a-z]*"' "$work/report.html" | wc -l || true)
  [ "$revenue" -ge 2 ] && [ "$movement" -ge 2 ] && grep -q '<section id="offers"' "$work/report.html" \
    || { echo "error: $revenue revenue charts, $movement MRR movement charts, or no offers chart, though Apple's answers carried prices" >&2; exit 1; }
fi

shot=${screenshot:-$work/report.png}
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --enable-logging=stderr --v=0 \
  --window-size=900,3900 --screenshot="$shot" "file://$work/report.html" > "$work/browser.log" 2>&1
[ -s "$shot" ] || { cat "$work/browser.log" >&2; echo "error: no screenshot" >&2; exit 1; }
if grep -E 'CONSOLE|Uncaught|Refused to' "$work/browser.log" | grep -v 'dbus' > "$work/console.log"; then
  cat "$work/console.log" >&2
  echo "error: the page logged to the browser's console" >&2
  exit 1
fi
echo "report check: $charts charts ($revenue of revenue, ${movement:-0} of MRR movement), each drawn; no console message; screenshot $shot" >&2
