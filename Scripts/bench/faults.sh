# The fault case of Scripts/bench.sh (sourced by it): status-poller alone against the full App
# Store simulator (not the lean stand-in: only it injects faults) at a fixed 50 ms, c = 64, the
# same new rows each time, with only the simulator's faults changing:
#   faults-0   no faults;
#   faults-3   --fault http_503=0.015 --fault status_211xx_retryable=0.015 (3 % of requests);
#   faults-10  --fault http_503=0.05 --fault status_211xx_retryable=0.05 (10 % of requests).
# Both kinds are noise that a retry clears (each attempt draws its own fault); slow answers are
# left out, as their timeouts cost time by design. Throughput = verified rows ÷ the run's own
# seconds, retries and their backoff included; each fault level is reported as a share of the
# fault-free throughput of the same run (targets: ≥ 0.90 at 3 %, ≥ 0.80 at 10 %).
#   rows: 12,800 (--quick: 3,200); the simulator's population (seed 42) is the same at every level.

faults_case() {
  local rows="$1" c=64 l=50 spec name rates rep template="$work/faults.sqlite" enrolment="$work/faults-enrolment.csv"
  say "faults: $rows new rows of the simulator's population, c = $c, L = $l ms, 503s and retryable 211xx statuses, $repetitions repetition(s)"
  for spec in "faults-0:" "faults-3:http_503=0.015,status_211xx_retryable=0.015" "faults-10:http_503=0.05,status_211xx_retryable=0.05"; do
    name="${spec%%:*}" rates="${spec#*:}"
    local fault_args=() rate out="$logs/simulator-$name.out"
    for rate in ${rates//,/ }; do fault_args+=(--fault "$rate"); done
    "$sim_bin" simulate --host 127.0.0.1 --port 0 --subscribers "$rows" --seed 42 --start "$now_iso" --latency "fixed:${l}ms" \
      --bundle-id "$bundle" --enrolment-file "$enrolment" "${fault_args[@]}" > "$out" 2> "$logs/simulator-$name.err" &
    standin_pid=$!
    url=$(await_endpoint production "$out" "$logs/simulator-$name.err" 60)
    if [ ! -f "$template" ]; then
      "$poller_bin" migrate --database "$template" > /dev/null
      sqlite3 "$template" ".import --csv $enrolment enrolment" \
        "INSERT INTO subscriptions (user_id, latest_receipt) SELECT user_id, latest_receipt FROM enrolment" "DROP TABLE enrolment"
    fi
    for ((rep = 1; rep <= repetitions; rep++)); do
      cp "$template" "$work/run.sqlite"
      fault_run "$name" "$c" "$l" "$rows" "$rep" "$work/run.sqlite"
      rm -f "$work"/run.sqlite*
    done
    stop_standin
  done
  rm -f "$template"* "$enrolment"
  print_faults_table
}

# fault_run CASE C L_MS ROWS REP DB: one status-poller run against the simulator at $url.
fault_run() {
  local case="$1" c="$2" l="$3" rows="$4" rep="$5" db="$6" log="$logs/$1-status-poller-$5" rc=0 t0 t1 ticks0 ticks1
  ticks0=$(standin_ticks)
  t0=$(date +%s%N)
  /usr/bin/time -o "$log.time" -f '%U %S %M' "$poller_bin" run --database "$db" --bundle-id "$bundle" --production-url "$url" \
    --sandbox-url "${url%/verifyReceipt}/sandbox/verifyReceipt" --concurrency "$c" --report json --now "$now_iso" \
    > "$log.out" 2> "$log.err" || rc=$?
  t1=$(date +%s%N)
  ticks1=$(standin_ticks)
  local counts selected verified failed own user sys rss wall standin
  counts=$("$py" -c '
import json, sys
d = json.loads(open(sys.argv[1]).read())
print(d["selected"], d["verified"], d["failed"], d["duration_seconds"], d["requests"], d["retries"], d["lowest_concurrency"])' "$log.out" 2>/dev/null || echo "")
  local requests retries lowest
  read -r selected verified failed own requests retries lowest <<< "$counts" || true
  read -r user sys rss < <(tail -n 1 "$log.time") || true
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
  standin=$(awk -v a="$ticks0" -v b="$ticks1" -v hz="$clk_tck" 'BEGIN { printf "%.2f", (b - a) / hz }')
  echo "$stamp,$case,$c,$l,$rows,$rows,status-poller,$rep,$rc,$selected,$verified,$failed,,$wall,$own,$user,$sys,$rss,$standin,,$requests,$retries,$lowest" >> "$csv"
  printf '    %-10s rep %d: %6s s, %s verified, %s failed, %s requests, %s retries, lowest concurrency %s, exit %d\n' \
    "$case" "$rep" "$wall" "${verified:-?}" "${failed:-?}" "${requests:-?}" "${retries:-?}" "${lowest:-?}" "$rc" >&2
  [ -n "$selected" ] || warn "status-poller printed no report in $case (exit $rc); see $log.err"
  [ "$selected" = "$rows" ] || warn "status-poller selected $selected rows in $case, $rows are new"
}

# print_faults_table: each fault level's median throughput as a share of the fault-free run's.
print_faults_table() {
  "$py" - "$csv" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["case"].startswith("faults-") and r["verified"]]
def med(rs, f): return statistics.median(f(r) for r in rs)
base = [r for r in rows if r["case"] == "faults-0"]
if base:
    base_rate = med(base, lambda r: float(r["verified"]) / float(r["own_s"]))
    first = base[0]
    bound = int(first["concurrency"]) / (int(first["latency_ms"]) / 1000)
    print(f"\nfaults: {first['due']} new rows, c = {first['concurrency']}, L = {first['latency_ms']} ms (the full simulator), bound C ÷ L = {bound:,.0f}/s, median of {len(base)}")
    print(f"  {'faults':<34}{'verified':>9}{'failed':>7}{'requests':>9}{'retries':>8}{'lowest c':>9}{'own s':>7}{'rows/s':>8}{'of bound':>9}{'of fault-free':>14}")
    labels = {"faults-0": "none", "faults-3": "503 1.5 % + retryable 211xx 1.5 %", "faults-10": "503 5 % + retryable 211xx 5 %"}
    for case in ("faults-0", "faults-3", "faults-10"):
        rs = [r for r in rows if r["case"] == case]
        if not rs: continue
        rate = med(rs, lambda r: float(r["verified"]) / float(r["own_s"]))
        print(f"  {labels[case]:<34}{med(rs, lambda r: float(r['verified'])):>9,.0f}{med(rs, lambda r: float(r['failed'])):>7,.0f}"
              f"{med(rs, lambda r: float(r['requests'])):>9,.0f}{med(rs, lambda r: float(r['retries'])):>8,.0f}{med(rs, lambda r: float(r['lowest_concurrency'])):>9,.0f}"
              f"{med(rs, lambda r: float(r['own_s'])):>7.2f}{rate:>8,.0f}{rate / bound:>9.2f}{rate / base_rate:>14.2f}")
PY
}
