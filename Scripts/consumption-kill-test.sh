#!/usr/bin/env bash
# The consumption sender under SIGKILL (issue 39): `status-poller consumption send` answers refund
# requests against a loopback stand-in for Send Consumption Information that fails 7 % of them
# (500, 429 with Retry-After), and is SIGKILLed at random moments and started again. Afterwards
# every consenting request in its window was accepted and recorded sent, none was sent again after
# its 202 was recorded, repeats are at most one per kill (a 202 never recorded), and nothing was sent
# without consent or past the deadline. (Scripts/reliability/consumption_kill_test.py.)
#
#   Scripts/consumption-kill-test.sh [--short] [--kills N] [--count N] [--seed S] [--binary PATH] [--keep]
#
# Default: 30 kills during 1,000 requests; --short (for CI): 6 kills during 200. Prints the totals
# as JSON; exits 1 on any violation, keeping the work directory under /tmp/consumption-kill-test-*.
set -euo pipefail
cd "$(dirname "$0")/.."

short=0 kills="" count="" seed=39 binary="" keep=0
need_value() { [ $# -ge 2 ] && [ -n "$2" ] || { echo "error: $1 needs a value (see --help)" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --short) short=1; shift ;;
    --kills) need_value "$@"; kills="$2"; shift 2 ;;
    --count) need_value "$@"; count="$2"; shift 2 ;;
    --seed) need_value "$@"; seed="$2"; shift 2 ;;
    --binary) need_value "$@"; binary="$(realpath "$2")"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
source Scripts/reliability/binary.sh
resolve_binary
[ -n "$kills" ] || { [ "$short" -eq 1 ] && kills=6 || kills=30; }
[ -n "$count" ] || { [ "$short" -eq 1 ] && count=200 || count=1000; }
work=$(mktemp -d /tmp/consumption-kill-test-XXXXXX)
rc=0
python3 Scripts/reliability/consumption_kill_test.py --binary "$binary" --workdir "$work" --kills "$kills" --count "$count" --seed "$seed" || rc=$?
if [ "$rc" -eq 0 ] && [ "$keep" -eq 0 ]; then rm -rf "$work"; else echo "kept $work" >&2; fi
exit "$rc"
