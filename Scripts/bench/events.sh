# The events case of Scripts/bench.sh (sourced by it): the outbound event deliverer's rate and lag.
# A writer commits outbound events to a migrated SQLite database — in bursts (100 every 10 ms: up
# to 10,000/s offered, for the drain rate), then at the target's 2,000/s on schedule — while one
# `status-poller events deliver` (its own process, woken every 250 ms or sooner) POSTs them to a
# loopback endpoint that checks every Standard Webhooks signature and answers 204
# (Scripts/reliability/event_kill_test.py with --kills 0). Reported: events delivered per second
# from the first commit to the last arrival, and the lag from each event's commit to its arrival
# (p50, p95, max). Targets (issue 38): ≥ 2,000 events/s, p95 < 1 s. Then 2,000/s on PostgreSQL (a
# throwaway cluster, Scripts/postgres.sh; the harness writes through psql as the poller's writers
# do: the outbox lock held to the commit, NOTIFY at the commit).

events_case() {
  local count="$1" rc
  mkdir -p "$work/events"
  # 1. The drain rate: bursts of 100 every 10 ms (up to 10,000/s offered), faster than one deliverer goes.
  say "events: $count events written in bursts of 100 every 10 ms while one \`events deliver\` posts them to a loopback endpoint"
  rc=0
  "$py" "$root/Scripts/reliability/event_kill_test.py" --binary "$poller_bin" --workdir "$work/events" --kills 0 --count "$count" \
    --failure-rate 0 --batch 100 > "$logs/events.out" 2>&1 || rc=$?
  rm -rf "$work/events"/*
  events_summary "$logs/events.out" "$rc" "bursts (drain rate)"
  # 2. The target: 2,000 events/s offered on a schedule (20 every 10 ms); each event's lag.
  say "events: $count events offered at 2,000/s (20 every 10 ms, on schedule)"
  rc=0
  "$py" "$root/Scripts/reliability/event_kill_test.py" --binary "$poller_bin" --workdir "$work/events" --kills 0 --count "$count" \
    --failure-rate 0 --batch 20 --rate 2000 > "$logs/events-2000.out" 2>&1 || rc=$?
  rm -rf "$work/events"/*
  events_summary "$logs/events-2000.out" "$rc" "2,000/s offered"
  # 3. The same on PostgreSQL: the writer as the poller's (the outbox lock, NOTIFY at the commit),
  #    the deliverer woken by NOTIFY.
  say "events: $count events offered at 2,000/s on PostgreSQL"
  postgres_start
  rc=0
  PGPASSWORD="$pg_poller_password" "$py" "$root/Scripts/reliability/event_kill_test.py" --binary "$poller_bin" --workdir "$work/events" \
    --postgres "$pg_url" --psql "$pg_bindir/psql -X -q -v ON_ERROR_STOP=1 -h $pg_dir/socket -p $pg_port -U poller -d status_poller" \
    --kills 0 --count "$count" --failure-rate 0 --batch 20 --rate 2000 > "$logs/events-postgres.out" 2>&1 || rc=$?
  postgres_cleanup
  rm -rf "$work/events"
  events_summary "$logs/events-postgres.out" "$rc" "2,000/s offered, PostgreSQL"
}

events_summary() {
  "$py" - "$@" <<'PY'
import json, sys
out, rc, how = sys.argv[1:4]
lines = [l for l in open(out) if l.startswith("{")]
if not lines:
    print(f"\nevents ({how}): no result (exit {rc}); see {out}")
    sys.exit(0)
r = json.loads(lines[-1])
print(f"\nevents ({how}): {r['events']:,} events, one deliverer, loopback endpoint checking signatures")
print(f"  written at {r['commits_per_second']:,}/s; delivered {r['accepted']:,} ({r['lost']} lost, {r['out_of_order']} out of order,"
      f" {r['duplicates']} duplicates) at {r['events_per_second']:,} events/s (first commit to last arrival;"
      f" {r['arrivals_per_second']:,}/s first to last arrival); lag p50 {r['lag_p50_s']} s, p95 {r['lag_p95_s']} s, max {r['lag_max_s']} s")
print("  targets: ≥ 2,000 events/s, p95 < 1 s")
PY
}
