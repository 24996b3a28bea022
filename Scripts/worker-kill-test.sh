#!/usr/bin/env bash
# Several workers under SIGKILL (PostgreSQL): nothing verified twice at once, nothing lost. It starts
# a throwaway PostgreSQL cluster (Scripts/postgres.sh) and `status-poller-demo simulate` on a free
# loopback port (a seeded population, latency uniform:5ms-25ms, a small rate of faults that fail a
# request, a request log), migrates, enrols through the database contract, then plays simulated
# nights: the web service enrols some subscribers and uploads some receipts, 4 `run` processes start
# at once (distinct --worker-name, --lease-seconds 12) and are SIGKILLed at random moments (seeded),
# a killed worker being restarted under the same name at once (takeover), under a new name after a
# pause, or not at all (its leases expire); each night ends when every worker process has exited.
# Then a clean night with every worker alive, and a backfill of every row shared by 4 workers.
# Checks: no subscription asked by two worker processes at once (overlapping request intervals in
# the simulator's log); a lease passes to another run only once expired, or to the same worker name
# once its holder is dead (a trigger of the harness records each handover); every killed run's
# leased rows asked again; every night's shared work done and no lease left after it; every row
# equal to the simulator's truth; every worker process's run in the history.
# (Scripts/reliability/worker_kill_test.py says precisely what each check means.)
#
#   Scripts/worker-kill-test.sh [--short] [--seed S] [--binary PATH] [--keep]
#
# Default: 10 nights, 30 kills, 4,000 subscribers; --short (for CI): 4 nights, 8 kills, 1,500
# subscribers. --binary as for Scripts/crash-test.sh (the debug build when present). Prints the
# totals; exits 1 on any violation, keeping the simulator's request log, each process's output and
# the tables (CSV) under /tmp/worker-kill-test-*. --keep keeps them after a pass too, and leaves the
# PostgreSQL cluster running (the script prints how to reach and stop it).
set -euo pipefail
cd "$(dirname "$0")/.."

short=0 seed=21 binary="" keep=0
need_value() { [ $# -ge 2 ] && [ -n "$2" ] || { echo "error: $1 needs a value (see --help)" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --short) short=1; shift ;;
    --seed) need_value "$@"; seed="$2"; shift 2 ;;
    --binary) need_value "$@"; binary="$(realpath "$2")"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$seed" =~ ^[0-9]+$ ]] || { echo "error: --seed takes a whole number" >&2; exit 2; }
if [ "$short" -eq 1 ]; then
  sizes=(--nights 4 --kills 8 --subscribers 1500 --enrol-per-night 150 --uploads-per-night 600)
else
  sizes=(--nights 10 --kills 30 --subscribers 4000 --enrol-per-night 160 --uploads-per-night 1000)
fi

. Scripts/reliability/binary.sh
resolve_binary
command -v psql > /dev/null || Scripts/bootstrap.sh > /dev/null

workdir=$(mktemp -d /tmp/worker-kill-test-XXXXXX)
pg_dir=""
finish() {
  local rc=$?
  if [ -n "$pg_dir" ] && [ "$keep" -eq 1 ]; then
    echo "==> PostgreSQL left running: source $pg_dir/env (STATUS_POLLER_TEST_POSTGRES_URL); stop it with Scripts/postgres.sh stop $pg_dir" >&2
  elif [ -n "$pg_dir" ]; then
    Scripts/postgres.sh stop "$pg_dir" || true
  fi
  if [ "$rc" -eq 0 ] && [ "$keep" -eq 0 ]; then rm -rf "$workdir"; else echo "==> evidence kept in $workdir" >&2; fi
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
pg_dir=$(Scripts/postgres.sh start)
# The URL with its password stays in this environment; the harness gives the poller PGPASSWORD.
database_url=$(. "$pg_dir/env" && printf '%s' "$STATUS_POLLER_TEST_POSTGRES_URL")

echo "==> worker kill test: seed $seed, binary $binary, ${sizes[*]}" >&2
started=$(date +%s)
rc=0
STATUS_POLLER_KILL_TEST_DATABASE_URL="$database_url" python3 Scripts/reliability/worker_kill_test.py \
  --binary "$binary" --seed "$seed" --workdir "$workdir" "${sizes[@]}" || rc=$?
if [ "$rc" -ne 0 ]; then
  for table in poll_runs work_targets "subscriptions ORDER BY id" "subscription_events ORDER BY id"; do
    (. "$pg_dir/env" && PGPASSWORD=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.urlsplit(sys.argv[1]).password)' "$STATUS_POLLER_TEST_POSTGRES_URL") \
      psql -X -q -h 127.0.0.1 -p "$STATUS_POLLER_TEST_POSTGRES_PORT" -U poller -d status_poller \
      -c "\\copy (SELECT * FROM ${table}) TO '$workdir/${table%% *}.csv' WITH (FORMAT csv, HEADER true)") || true
  done
fi
echo "==> worker kill test took $(($(date +%s) - started)) s" >&2
exit "$rc"
