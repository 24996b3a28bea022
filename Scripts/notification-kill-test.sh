#!/usr/bin/env bash
# The notification receiver under SIGKILL (issue 23): senders post signed V2 notifications and
# retry each until it is answered 200, as Apple does, while the receiver is SIGKILLed at random
# moments and started again. Afterwards every notification is recorded once and applied once (one
# audit row each), each row holds its chain's newest notification, and the file is intact.
# (Scripts/reliability/notification_kill_test.py says precisely what is checked.)
#
#   Scripts/notification-kill-test.sh [--short] [--kills N] [--count N] [--seed S] [--binary PATH] [--keep]
#
# Default: 30 kills during 20,000 notifications for 500 rows; --short (for CI): 8 kills during
# 2,000. --binary defaults to the debug build when present, else the release build. Prints the
# totals as JSON; exits 1 on any violation, keeping the database and the receiver's log under
# /tmp/notification-kill-test-*.
set -euo pipefail
cd "$(dirname "$0")/.."

short=0 kills="" count="" seed=7 binary="" keep=0
need_value() { [ $# -ge 2 ] && [ -n "$2" ] || { echo "error: $1 needs a value (see --help)" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --short) short=1; shift ;;
    --kills) need_value "$@"; kills="$2"; shift 2 ;;
    --count) need_value "$@"; count="$2"; shift 2 ;;
    --seed) need_value "$@"; seed="$2"; shift 2 ;;
    --binary) need_value "$@"; binary="$(realpath "$2")"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
source Scripts/reliability/binary.sh
resolve_binary
[ -n "$kills" ] || { [ "$short" -eq 1 ] && kills=8 || kills=30; }
[ -n "$count" ] || { [ "$short" -eq 1 ] && count=2000 || count=20000; }
work=$(mktemp -d /tmp/notification-kill-test-XXXXXX)
rc=0
python3 Scripts/reliability/notification_kill_test.py --binary "$binary" --workdir "$work" --kills "$kills" --count "$count" --seed "$seed" || rc=$?
if [ "$rc" -eq 0 ] && [ "$keep" -eq 0 ]; then rm -rf "$work"; else echo "kept $work" >&2; fi
exit "$rc"
