#!/usr/bin/env bash
# The main job on its embedded default, on a fresh Debian machine with Swift 6.3: installs what the
# build needs, builds, then plays `status-poller run` night after night against the built-in App
# Store simulator and a local SQLite file (status-poller-demo.sqlite), and ends by writing the
# recovery and churn report of those nights beside it (status-poller-report.html). No network is
# used. The simulator and the demo are a program of their own, status-poller-demo (the
# status-poller a team installs carries neither). Extra arguments go to `status-poller-demo demo` (e.g. --subscribers 10000 --nights 60
# --outage-night 20).
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/bootstrap.sh
echo "==> building status-poller and status-poller-demo (first build: ~6 min on 2 cores)" >&2
swift build --product status-poller
swift build --product status-poller-demo
echo "==> playing the demo (about a minute and a half)" >&2
.build/debug/status-poller-demo demo "$@"
database=status-poller-demo.sqlite
previous=""
for argument in "$@"; do
  [ "$previous" = "--database" ] && database="$argument"
  previous="$argument"
done
case "$database" in postgres://*|postgresql://*) report="status-poller-report.html" ;; *) report="${database%.sqlite}-report.html"; [ "$database" = status-poller-demo.sqlite ] && report=status-poller-report.html ;; esac
.build/debug/status-poller report --database "$database" --environment all --output "$report" >&2
echo "==> the report of these nights: $(pwd)/$report (open it in a browser)" >&2
