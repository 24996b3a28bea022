# The events case of Scripts/bench.sh (sourced by it): the outbound event deliverer's rate and lag.
# A writer commits outbound events to a migrated SQLite database in bursts (100 every 10 ms, as
# fast as the deliverer is meant to keep up with: up to 10,000/s offered) while one
# `status-poller events deliver` (its own process, woken every 250 ms or sooner) POSTs them to a
# loopback endpoint that checks every Standard Webhooks signature and answers 204
# (Scripts/reliability/event_kill_test.py with --kills 0). Reported: events delivered per second
# from the first commit to the last arrival, and the lag from each event's commit to its arrival
# (p50, p95, max). Targets (issue 38): ≥ 2,000 events/s, p95 < 1 s. SQLite only: the harness
# writes with Python's sqlite3 (no PostgreSQL driver in the standard library).

events_case() {
  local count="$1" out="$logs/events.out" rc=0
  say "events: $count events written in bursts of 100 every 10 ms while one \`events deliver\` posts them to a loopback endpoint"
  mkdir -p "$work/events"
  "$py" "$root/Scripts/reliability/event_kill_test.py" --binary "$poller_bin" --workdir "$work/events" --kills 0 --count "$count" \
    --failure-rate 0 --batch 100 > "$out" 2>&1 || rc=$?
  rm -rf "$work/events"
  "$py" - "$out" "$rc" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("{")]
if not lines:
    print(f"\nevents: no result (exit {sys.argv[2]}); see {sys.argv[1]}")
    sys.exit(0)
r = json.loads(lines[-1])
print(f"\nevents: {r['events']:,} events, one deliverer, SQLite, loopback endpoint checking signatures")
print(f"  delivered {r['accepted']:,} ({r['lost']} lost, {r['out_of_order']} out of order, {r['duplicates']} duplicates)"
      f" at {r['events_per_second']:,} events/s; lag p50 {r['lag_p50_s']} s, p95 {r['lag_p95_s']} s, max {r['lag_max_s']} s")
print("  targets: ≥ 2,000 events/s, p95 < 1 s")
PY
}
