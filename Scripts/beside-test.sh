#!/usr/bin/env bash
# The web service beside a run (issue 11): while `status-poller run` verifies and writes ROWS new
# subscriptions (3 KB receipts, against the lean stand-in `status-poller-demo simulate --lean` at a
# fixed latency), separate processes do what the web service does, each on its own connection
# with the README's 10 s busy timeout: readers run `SELECT ... FROM entitlements WHERE user_id = ?`
# for random users in a loop, an enroller inserts a new subscriber every 0–10 ms
# (`INSERT INTO subscriptions (user_id, latest_receipt)`, the database contract's enrolment).
# Reports reads, reader errors and p50/p99 latency, enrolments and enroller errors (with their
# write-lock waits), SQLITE_BUSY / "database is locked" for each (target: zero).
#
#   Scripts/beside-test.sh [--short] [--rows N] [--readers N] [--latency-ms L] [--concurrency C]
#                          [--busy-timeout-ms MS] [--binary PATH] [--keep]
#
# Default: 150,000 rows at concurrency 32; --short (for CI): 10,000 rows. --busy-timeout-ms sets the
# web service's timeout (default 10000, as the README says of every connection). --binary defaults
# to .build/debug/status-poller when present (after `swift build --build-tests`), else
# .build/release/status-poller, else builds the debug binary. Exits 1 on any error, a poller exit
# other than 0, or a row the run selected and did not write; the database and logs are then kept
# under /tmp/beside-test-*.
set -euo pipefail
cd "$(dirname "$0")/.."

short=0 rows="" readers=1 latency=5 concurrency=32 busy=10000 binary="" keep=()
need_value() { [ $# -ge 2 ] && [ -n "$2" ] || { echo "error: $1 needs a value (see --help)" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --short) short=1; shift ;;
    --rows) need_value "$@"; rows="$2"; shift 2 ;;
    --readers) need_value "$@"; readers="$2"; shift 2 ;;
    --latency-ms) need_value "$@"; latency="$2"; shift 2 ;;
    --concurrency) need_value "$@"; concurrency="$2"; shift 2 ;;
    --busy-timeout-ms) need_value "$@"; busy="$2"; shift 2 ;;
    --binary) need_value "$@"; binary="$(realpath "$2")"; shift 2 ;;
    --keep) keep=(--keep); shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$rows" ] || { [ "$short" -eq 1 ] && rows=10000 || rows=150000; }
for v in "$rows" "$readers" "$latency" "$concurrency"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "error: --rows, --readers, --latency-ms and --concurrency take positive whole numbers" >&2; exit 2; }
done
[[ "$busy" =~ ^[0-9]+$ ]] || { echo "error: --busy-timeout-ms takes a whole number" >&2; exit 2; }

. Scripts/reliability/binary.sh
resolve_binary
"$(demo_binary_of "$binary")" simulate --help | grep -q -- --lean || { echo "error: $(demo_binary_of "$binary") has no 'simulate --lean'; rebuild" >&2; exit 2; }
echo "==> beside test: $rows rows, $readers reader(s), binary $binary" >&2
exec python3 Scripts/reliability/beside_test.py --binary "$binary" --rows "$rows" --readers "$readers" --latency-ms "$latency" \
  --concurrency "$concurrency" --busy-timeout-ms "$busy" "${keep[@]}"
