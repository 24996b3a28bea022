#!/usr/bin/env bash
# The event deliverer under SIGKILL (issue 38): a writer adds bursts of outbound events while
# `status-poller events deliver` is SIGKILLed at random moments and started again, delivering to a
# loopback endpoint that checks every signature and fails 5 % of requests. Afterwards every event
# arrived (0 lost), and no user's event was accepted before an earlier one of that user (0 out of
# order); duplicates (at least once) are counted. (Scripts/reliability/event_kill_test.py.)
#
#   Scripts/event-kill-test.sh [--short] [--kills N] [--count N] [--seed S] [--binary PATH] [--keep]
#
# Default: 30 kills during 20,000 events of 400 users; --short (for CI): 6 kills during 2,000.
# Prints the totals as JSON; exits 1 on any violation, keeping the work directory under
# /tmp/event-kill-test-*.
set -euo pipefail
cd "$(dirname "$0")/.."

short=0 kills="" count="" seed=38 binary="" keep=0
need_value() { [ $# -ge 2 ] && [ -n "$2" ] || { echo "error: $1 needs a value (see --help)" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --short) short=1; shift ;;
    --kills) need_value "$@"; kills="$2"; shift 2 ;;
    --count) need_value "$@"; count="$2"; shift 2 ;;
    --seed) need_value "$@"; seed="$2"; shift 2 ;;
    --binary) need_value "$@"; binary="$(realpath "$2")"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
source Scripts/reliability/binary.sh
resolve_binary
[ -n "$kills" ] || { [ "$short" -eq 1 ] && kills=6 || kills=30; }
[ -n "$count" ] || { [ "$short" -eq 1 ] && count=2000 || count=20000; }
work=$(mktemp -d /tmp/event-kill-test-XXXXXX)
rc=0
python3 Scripts/reliability/event_kill_test.py --binary "$binary" --workdir "$work" --kills "$kills" --count "$count" --seed "$seed" || rc=$?
if [ "$rc" -eq 0 ] && [ "$keep" -eq 0 ]; then rm -rf "$work"; else echo "kept $work" >&2; fi
exit "$rc"
