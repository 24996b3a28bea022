# The events case of Scripts/bench.sh (sourced by it): the outbound event deliverer's rate and lag.
# A writer commits outbound events to a migrated SQLite database — in bursts (100 every 10 ms: up
# to 10,000/s offered, for the drain rate), then at the target's 2,000/s on schedule — while one
# `status-poller events deliver` (its own process, woken every 250 ms or sooner) POSTs them to a
# loopback endpoint that checks every Standard Webhooks signature and answers 204
# (Scripts/reliability/event_kill_test.py with --kills 0; the endpoint is its Go twin,
# Scripts/bench/event_sink, so that it does not take the CPU the deliverer needs). Reported: events
# delivered per second from the first commit to the last arrival, and the lag from each event's
# commit to its arrival (p50, p95, max). Targets (issue 38): ≥ 2,000 events/s, p95 < 1 s. Then
# both on PostgreSQL (a throwaway cluster each, Scripts/postgres.sh; the harness writes through
# psql as the poller's writers do: the outbox lock held to the commit, NOTIFY at the commit).

events_case() {
  local count="$1"
  mkdir -p "$work/events"
  # 1. The drain rate: bursts of 100 every 10 ms (up to 10,000/s offered), faster than one deliverer goes.
  say "events: $count events written in bursts of 100 every 10 ms while one \`events deliver\` posts them to a loopback endpoint"
  events_run "$logs/events.out" "bursts (drain rate)" --batch 100
  # 2. The target: 2,000 events/s offered on a schedule (20 every 10 ms); each event's lag.
  say "events: $count events offered at 2,000/s (20 every 10 ms, on schedule)"
  events_run "$logs/events-2000.out" "2,000/s offered" --batch 20 --rate 2000
  # 3. The same two on PostgreSQL, a new cluster for each: the writer as the poller's (the outbox
  #    lock, NOTIFY at the commit), the deliverer woken by NOTIFY.
  say "events: $count events in bursts on PostgreSQL"
  events_run_postgres "$logs/events-postgres-bursts.out" "bursts (drain rate), PostgreSQL" --batch 100
  say "events: $count events offered at 2,000/s on PostgreSQL"
  events_run_postgres "$logs/events-postgres.out" "2,000/s offered, PostgreSQL" --batch 20 --rate 2000
  rm -rf "$work/events"
}

# events_run OUT HOW HARNESS-ARGS...: one run of the harness on SQLite, then its summary.
events_run() {
  local out="$1" how="$2" rc=0
  shift 2
  "$py" "$root/Scripts/reliability/event_kill_test.py" --binary "$poller_bin" --workdir "$work/events" --sink "$sink_bin" --kills 0 \
    --count "$count" --failure-rate 0 "$@" > "$out" 2>&1 || rc=$?
  rm -rf "$work/events"/*
  events_summary "$out" "$rc" "$how"
}

events_run_postgres() {
  local out="$1" how="$2" rc=0
  shift 2
  postgres_start
  PGPASSWORD="$pg_poller_password" "$py" "$root/Scripts/reliability/event_kill_test.py" --binary "$poller_bin" --workdir "$work/events" \
    --postgres "$pg_url" --psql "$pg_bindir/psql -X -q -v ON_ERROR_STOP=1 -h $pg_dir/socket -p $pg_port -U poller -d status_poller" \
    --sink "$sink_bin" --kills 0 --count "$count" --failure-rate 0 "$@" > "$out" 2>&1 || rc=$?
  postgres_cleanup
  rm -rf "$work/events"/*
  events_summary "$out" "$rc" "$how"
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
