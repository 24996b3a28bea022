# The App Store Server API case of Scripts/bench.sh (sourced by it): status-poller alone — the peers
# speak verifyReceipt only — with --backend server-api against the lean stand-in's Server API. Its
# bound is not C ÷ L but the rate limit: Apple allows 50 requests per second, so the case runs at
# --server-api-rate 50 and reports throughput against 50/s. Every row already has an
# original_transaction_id and is due (it expires within the hour), so each costs one request;
# every answer carries two signed payloads (transaction, renewal info) that are verified. After each
# run the stand-in says how many Server API requests it received and the most within any one
# second (`POST /simulator/arrivals`, stamped as each request arrives): at most the rate.
#   server-api: 1,500 rows (--quick: 500), c = 8, L = 50 ms, rate 50/s.

server_api_case() {
  local rows="$1" rate=50 c=8 l=50 rep template="$work/server-api.sqlite" keys="$work/keys"
  say "server-api: $rows due rows with original_transaction_ids, c = $c, L = $l ms, --server-api-rate $rate, $repetitions repetition(s)"
  "$poller_bin" migrate --database "$template" > /dev/null
  sqlite3 "$template" > /dev/null <<SQL
PRAGMA journal_mode = DELETE;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $rows)
INSERT INTO subscriptions (id, user_id, latest_receipt, original_transaction_id, product_id, environment,
                           expires_at, auto_renew_status, last_verified_at, last_attempt_at)
SELECT i, 'bench-user-' || i, 'MIIT' || printf('%010d', i), '2' || printf('%015d', i), 'com.example.premium.monthly',
       'Production', $now_ms + 3600000, 1, $now_ms - 30 * 86400000, $now_ms - 30 * 86400000
FROM n;
COMMIT;
PRAGMA journal_mode = WAL;
SQL
  local out="$logs/standin-server-api.out"
  "$sim_bin" simulate --lean --host 127.0.0.1 --port 0 --latency "fixed:${l}ms" --bundle-id "$bundle" --key-dir "$keys" > "$out" 2> "$logs/standin-server-api.err" &
  standin_pid=$!
  local base
  base=$(await_endpoint server-api "$out" "$logs/standin-server-api.err" 10)
  local key_id issuer
  key_id=$(awk '$1 == "key" && $2 == "id" { print $3 }' "$out")
  issuer=$(awk '$1 == "issuer" && $2 == "id" { print $3 }' "$out")
  for ((rep = 1; rep <= repetitions; rep++)); do
    cp "$template" "$work/run.sqlite"
    local log="$logs/server-api-status-poller-$rep" rc=0 ticks0 ticks1 t0 t1
    ticks0=$(standin_ticks)
    t0=$(date +%s%N)
    /usr/bin/time -o "$log.time" -f '%U %S %M' "$poller_bin" run --database "$work/run.sqlite" --bundle-id "$bundle" --backend server-api \
      --server-api-url "$base" --server-api-sandbox-url "$base/sandbox" --issuer-id "$issuer" --key-id "$key_id" \
      --private-key-file "$keys/SubscriptionKey_$key_id.p8" --trusted-root-file "$keys/simulator-root.der" \
      --server-api-rate "$rate" --concurrency "$c" --report json --now "$now_iso" > "$log.out" 2> "$log.err" || rc=$?
    t1=$(date +%s%N)
    ticks1=$(standin_ticks)
    local counts selected verified failed own user sys rss wall standin unwritten
    counts=$("$py" -c '
import json, sys
d = json.loads(open(sys.argv[1]).read())
print(d["selected"], d["verified"], d["failed"], d["duration_seconds"])' "$log.out" 2>/dev/null || echo "")
    read -r selected verified failed own <<< "$counts" || true
    read -r user sys rss < <(tail -n 1 "$log.time") || true
    unwritten=$(sqlite3 "$work/run.sqlite" "SELECT count(*) FROM subscriptions WHERE last_verified_at < $now_ms")
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
    standin=$(awk -v a="$ticks0" -v b="$ticks1" -v hz="$clk_tck" 'BEGIN { printf "%.2f", (b - a) / hz }')
    local arrivals received most
    arrivals=$(curl -s -X POST "$base/simulator/arrivals")
    received=$("$py" -c 'import json, sys; print(json.loads(sys.argv[1])["server_api_requests"])' "$arrivals" 2>/dev/null || echo "")
    most=$("$py" -c 'import json, sys; print(json.loads(sys.argv[1])["most_in_one_second"])' "$arrivals" 2>/dev/null || echo "")
    echo "$stamp,server-api,$c,$l,$rows,$rows,status-poller,$rep,$rc,$selected,$verified,$failed,$unwritten,$wall,$own,$user,$sys,$rss,$standin,$most,$received,," >> "$csv"
    printf '    %-14s rep %d: %6s s, %s verified, %s failed, %s requests at the stand-in, at most %s in one second, exit %d\n' \
      status-poller "$rep" "$wall" "${verified:-?}" "${failed:-?}" "${received:-?}" "${most:-?}" "$rc" >&2
    [ -n "$most" ] && [ "$most" -le "$rate" ] || warn "the stand-in received ${most:-?} Server API requests within one second, more than --server-api-rate $rate"
    [ "$unwritten" = "0" ] || warn "status-poller left $unwritten of $rows due rows unverified in server-api (exit $rc); see $log.err"
    rm -f "$work"/run.sqlite*
  done
  stop_standin
  rm -rf "$template"* "$keys"
  print_server_api_table "$rate"
}

# print_server_api_table RATE: throughput against the rate limit, CPU per 1,000 rows, and the most
# requests the stand-in saw in any one second. The bound is the fastest a client that spaces its
# requests evenly (one every 1 ÷ RATE s, as status-poller does so that no second at the server
# holds more than RATE) can finish N requests: the last starts (N − 1) ÷ RATE s after the first and
# ends one latency later.
print_server_api_table() {
  "$py" - "$csv" "$1" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["case"] == "server-api" and r["verified"]]
rate = float(sys.argv[2])
if rows:
    throughput = statistics.median(float(r["verified"]) / float(r["own_s"]) for r in rows)
    cpu = statistics.median((float(r["user_s"]) + float(r["sys_s"])) / float(r["verified"]) * 1000 for r in rows)
    wall = statistics.median(float(r["wall_s"]) for r in rows)
    standin = statistics.median(float(r["standin_cpu_s"]) / float(r["verified"]) * 1000 for r in rows)
    n, latency = float(rows[0]["due"]), float(rows[0]["latency_ms"]) / 1000
    bound = n / ((n - 1) / rate + latency)
    most = max((int(r["most_per_second"]) for r in rows if r.get("most_per_second")), default=None)
    print(f"\nserver-api: {rows[0]['due']} rows, c = {rows[0]['concurrency']}, L = {rows[0]['latency_ms']} ms, --server-api-rate {rate:.0f}: bound {bound:.1f} rows/s ((N − 1) ÷ rate + L), median of {len(rows)}")
    print(f"  {'poller':<15}{'rows':>7}{'wall s':>8}{'rows/s':>8}{'bound':>7}{'of bound':>9}{'CPU s/1k':>9}{'stand-in CPU s/1k':>18}{'most in 1 s':>12}")
    print(f"  {'status-poller':<15}{int(float(rows[0]['verified'])):>7,}{wall:>8.2f}{throughput:>8.1f}{bound:>7.1f}{throughput / bound:>9.2f}{cpu:>9.2f}{standin:>18.2f}{most if most is not None else '?':>12}")
PY
}
