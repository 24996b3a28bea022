# The catch-up case of Scripts/bench.sh (sourced by it): `status-poller notifications catch-up`
# (release build) reading Apple's notification history from the full simulator, whose every
# delivery was lost, so the history holds every notification of the stretch.
#
#   The simulator (`simulate --notify-url` to a closed port, `--notify-fault lost=1`) plays
#   SUBSCRIBERS subscribers over DAYS simulated days (20,000 over 25 days; --quick 5,000), its
#   tries all failing; then the catch-up reads the whole stretch into an empty SQLite database
#   (every notification unmatched: verified, stored with its payload) at its default rate, which
#   for Get Notification History is Apple's 50 requests per second. The simulator counts the
#   requests and the most that arrived within any one second (`POST /simulator/arrivals`).
#   Rate = pages ÷ the catch-up's wall seconds (process start included).
#   Targets (issue 24): ≥ 0.95 of 50 requests per second, and never above 50 in any second.

catchup_case() {
  local subscribers="$1" days=25 keys="$work/catchup-keys" out="$logs/catchup-simulator.log" simulator base="" database="$work/catchup.sqlite"
  say "catch-up: the notification history of $subscribers simulated subscribers over $days days, every delivery lost"
  "$sim_bin" simulate --port 0 --subscribers "$subscribers" --key-dir "$keys" --start 2026-01-01T00:00:00Z \
    --notify-url http://127.0.0.1:9/closed --notify-fault lost=1 > "$out" 2>&1 &
  simulator=$!
  for _ in $(seq 300); do
    base=$(grep -m1 -o 'http://127.0.0.1:[0-9]*' "$out" || true)
    [ -n "$base" ] && break
    kill -0 "$simulator" 2>/dev/null || { cat "$out" >&2; echo "error: the simulator exited" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "$base" ] || { echo "error: the simulator printed no address" >&2; exit 1; }
  curl -s -X POST "$base/simulator/clock?advance_days=$days" > /dev/null
  # The pusher logs once it has made every try of the stretch (signing them takes a while).
  for _ in $(seq 3000); do grep -q 'lost=' "$out" && break; sleep 0.1; done
  grep -q 'lost=' "$out" || { echo "error: the simulator made no tries" >&2; exit 1; }
  "$poller_bin" migrate --database "$database" > /dev/null
  curl -s -X POST "$base/simulator/arrivals" > /dev/null
  local issuer report start end arrivals rc=0
  issuer=$(awk '$1 == "issuer" && $2 == "id" { print $3; exit }' "$out")
  start=$(date +%s.%N)
  report=$("$poller_bin" notifications catch-up --database "$database" --server-api-url "$base" --server-api-sandbox-url "$base/sandbox" \
    --issuer-id "$issuer" --key-id SIMKEY0001 --private-key-file "$keys/SubscriptionKey_SIMKEY0001.p8" --app-apple-id 1234567890 \
    --trusted-root-file "$keys/simulator-root.der" --bundle-id com.example.premium --allow-insecure-http --environment production \
    --since-hours $((days * 24)) --now 2026-01-26T00:00:00Z --report json --log-level error 2> "$logs/catchup.err") || rc=$?
  end=$(date +%s.%N)
  arrivals=$(curl -s -X POST "$base/simulator/arrivals")
  kill -TERM "$simulator"; wait "$simulator" || true
  local stored
  stored=$(sqlite3 "$database" "SELECT count(*) FROM app_store_notifications")
  rm -f "$database"*
  catchup_csv="$results/$stamp-catchup.csv"
  "$py" - "$subscribers" "$days" "$start" "$end" "$rc" "$stored" "$report" "$arrivals" > "$catchup_csv" <<'PY'
import json, sys
subscribers, days, start, end, rc, stored, report, arrivals = sys.argv[1:]
r = json.loads(report)[0] if report.strip() else {"pages": 0, "records": 0}
a = json.loads(arrivals)
seconds = float(end) - float(start)
checked = int(rc == "0" and int(stored) == r["records"] and a["notification_history_requests"] == r["pages"])
print("subscribers,days,pages,records,seconds,per_second,most_in_one_second,limit,checked")
print(f"{subscribers},{days},{r['pages']},{r['records']},{seconds:.2f},{r['pages'] / seconds:.1f},{a['most_in_one_second']},50,{checked}")
PY
  print_catchup_table
}

print_catchup_table() {
  [ -n "${catchup_csv:-}" ] && [ -f "$catchup_csv" ] || return 0
  "$py" - "$catchup_csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    ratio = float(r["per_second"]) / float(r["limit"])
    print(f"\ncatch-up (Get Notification History, {r['subscribers']} subscribers over {r['days']} days; target ≥ 0.95 of 50/s, never above 50 in a second):")
    print(f"  {r['pages']} pages, {r['records']} records in {r['seconds']} s: {r['per_second']} requests/s = {ratio:.2f} of the limit; most in one second {r['most_in_one_second']}; checked {'yes' if r['checked'] == '1' else 'NO'}")
PY
}
