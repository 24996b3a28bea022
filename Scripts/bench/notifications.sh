# The notifications case of Scripts/bench.sh (sourced by it): `status-poller notifications serve`
# (release build) taking Apple's V2 notifications as fast as a sender with 64 keep-alive
# connections can post them, on SQLite and on PostgreSQL.
#
#   The sender is Scripts/bench/notify_load (Go): a test PKI of its own in Apple's chain shape,
#   trusted by the receiver through --trusted-root-file (loopback only); every notification —
#   DID_RENEW with its nested signedTransactionInfo and signedRenewalInfo, all three signatures
#   checked by the receiver — is signed before the clock starts. 10,000 rows own the chains
#   bench-0…9,999; N notifications (20,000; --quick 5,000) renew them, each newer than the last of
#   its chain, so every one is applied (a row update and an audit row). Throughput = notifications
#   answered 200 ÷ the sender's seconds; latency from the sender (request to answer, the commit
#   included); the receiver's CPU from /proc. The sender shares the 2 cores.
#   Checked after each store: N notifications recorded as applied, N audit rows, every row's
#   apple_state_at set; the receiver leaves on SIGTERM with exit 0.
#   Targets (issue 23): ≥ 1,000 notifications/s, p99 ≤ 100 ms, on both stores.

notifications_case() {
  local count="$1" chains=10000 touched pki="$work/notify-pki" rows="$work/notify-rows.csv" store
  touched=$((count < chains ? count : chains))  # rows a notification reached (--quick sends fewer than there are rows)
  say "notifications: $count V2 notifications over 64 connections for $chains rows, SQLite then PostgreSQL"
  "$root/.bench/notify-load" -pki "$pki" -rows "$rows" -chains "$chains" -prepare-only
  notifications_csv="$results/$stamp-notifications.csv"
  echo "store,count,ok,other,seconds,per_second,p50_ms,p99_ms,max_ms,receiver_cpu_s,cpu_ms_per_notification,checked" > "$notifications_csv"
  for store in sqlite postgres; do
    local database="$work/notify.sqlite" pg=""
    if [ "$store" = sqlite ]; then
      "$poller_bin" migrate --database "$database" > /dev/null
      sqlite3 "$database" ".import --csv $rows r" \
        "INSERT INTO subscriptions (user_id, latest_receipt, original_transaction_id, product_id, environment, expires_at, auto_renew_status)
         SELECT user_id, 'R', original_transaction_id, 'com.example.premium.monthly', 'Production', expires_at, 1 FROM r" "DROP TABLE r"
    else
      pg=$("$root/Scripts/postgres.sh" start)
      database=$(. "$pg/env" && echo "$STATUS_POLLER_TEST_POSTGRES_URL")
      local psql_bin
      psql_bin="$(awk -F= '$1 == "bindir" { print $2 }' "$pg/.status-poller-pg")/psql"
      STATUS_POLLER_DATABASE="$database" "$poller_bin" migrate > /dev/null
      "$psql_bin" -X -q -v ON_ERROR_STOP=1 "$database" \
        -c "CREATE TEMP TABLE r (user_id text, original_transaction_id text, expires_at bigint)" \
        -c "\\copy r FROM '$rows' WITH (FORMAT csv, HEADER true)" \
        -c "INSERT INTO subscriptions (user_id, latest_receipt, original_transaction_id, product_id, environment, expires_at, auto_renew_status)
            SELECT user_id, 'R', original_transaction_id, 'com.example.premium.monthly', 'Production', expires_at, 1 FROM r" \
        -c "ANALYZE subscriptions"
    fi
    local out="$logs/notifications-$store.out" err="$logs/notifications-$store.err" receiver port="" ticks0 ticks1 load checked rc=0
    STATUS_POLLER_DATABASE="$database" "$poller_bin" notifications serve --listen 127.0.0.1:0 --bundle-id com.example.premium \
      --app-apple-id 1234567890 --trusted-root-file "$pki/root.pem" --log-level warning > "$out" 2> "$err" &
    receiver=$!
    for _ in $(seq 100); do
      port=$(sed -n 's|^listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$out")
      [ -n "$port" ] && break
      kill -0 "$receiver" 2>/dev/null || { cat "$err" >&2; echo "error: the receiver exited" >&2; exit 1; }
      sleep 0.1
    done
    [ -n "$port" ] || { echo "error: the receiver printed no address" >&2; exit 1; }
    ticks0=$(awk '{ print $14 + $15 }' "/proc/$receiver/stat")
    load=$("$root/.bench/notify-load" -pki "$pki" -url "http://127.0.0.1:$port/app-store/notifications" -count "$count" -chains "$chains" -connections 64)
    ticks1=$(awk '{ print $14 + $15 }' "/proc/$receiver/stat")
    kill -TERM "$receiver"
    wait "$receiver" || rc=$?
    echo "$load" > "$logs/notifications-$store.load.json"
    if [ "$store" = sqlite ]; then
      checked=$(sqlite3 "$database" "SELECT (SELECT count(*) FROM app_store_notifications WHERE outcome = 'applied') = $count
        AND (SELECT count(*) FROM subscription_events WHERE source = 'notification') = $count
        AND (SELECT count(*) FROM subscriptions WHERE apple_state_at IS NOT NULL) = $touched")
      rm -f "$database"*
    else
      checked=$("$psql_bin" -X -q -A -t "$database" -c "SELECT ((SELECT count(*) FROM app_store_notifications WHERE outcome = 'applied') = $count
        AND (SELECT count(*) FROM subscription_events WHERE source = 'notification') = $count
        AND (SELECT count(*) FROM subscriptions WHERE apple_state_at IS NOT NULL) = $touched)::int")
      "$root/Scripts/postgres.sh" stop "$pg" > /dev/null || true
    fi
    [ "$rc" -eq 0 ] || checked=0
    "$py" - "$store" "$count" "$ticks0" "$ticks1" "$clk_tck" "$checked" "$load" >> "$notifications_csv" <<'PY'
import json, sys
store, count, t0, t1, hz, checked, load = sys.argv[1:]
d = json.loads(load)
cpu = (int(t1) - int(t0)) / int(hz)
print(f"{store},{count},{d['ok']},{d['other']},{d['seconds']:.3f},{d['per_second']:.0f},{d['p50_ms']:.1f},{d['p99_ms']:.1f},{d['max_ms']:.1f},{cpu:.2f},{1000 * cpu / max(1, d['ok']):.3f},{checked}")
PY
  done
  print_notifications_table
}

print_notifications_table() {
  [ -n "${notifications_csv:-}" ] && [ -f "$notifications_csv" ] || return 0
  "$py" - "$notifications_csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("\nnotifications (V2, every signature verified, 64 connections; target ≥ 1,000/s, p99 ≤ 100 ms):")
print(f"  {'store':9} {'count':>7} {'200s':>7} {'other':>6} {'per s':>7} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'CPU s':>6} {'CPU ms each':>11}  checked")
for r in rows:
    ok = "yes" if r["checked"] == "1" else "NO"
    print(f"  {r['store']:9} {r['count']:>7} {r['ok']:>7} {r['other']:>6} {r['per_second']:>7} {r['p50_ms']:>7} {r['p99_ms']:>7} {r['max_ms']:>7} {r['receiver_cpu_s']:>6} {r['cpu_ms_per_notification']:>11}  {ok}")
PY
}
