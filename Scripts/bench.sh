#!/usr/bin/env bash
# The performance benchmark (issue 9): status-poller's release build against two peer pollers — the
# script a team would write (Python, InAppPy's asyncio validator) and the same poller in Go — all
# against one lean verifyReceipt stand-in (`status-poller-demo simulate --lean`, fixed latency L) and
# identical rows, in the same run on the same machine. Figures move with the machine: compare
# within one run.
#
#   Scripts/bench.sh [--quick] [--skip-build] [--only status-poller,outbox,python,go,go64]
#                    [--cases c8-L50,c64-L50,c256-L200,c256-L50,scale,server-api,faults,lapsed,postgres,notifications,catchup,report,events,year]
#                    [--repetitions N]
#                    [--binary PATH]
#
# Cases: c = concurrency, L = the stand-in's latency; rows are new (unverified) subscriptions with
# 3 KB receipts, as real ones are (the stand-in sends each back as latest_receipt, as Apple does):
# c8-L50 1,600, c64-L50 6,400, c256-L200 12,800, c256-L50 25,600 (--quick: c × 20). `scale` is two cases at c = 64, L = 50 ms with 3 KB receipts and the same 4,000 due rows
# spread through the table: among 1,000,000 rows (scale-1m, a 4 GB file) and among 100,000
# (scale-100k); only status-poller and the Go peer run it; it is skipped with fewer than 15 GB free
# and by --quick unless --cases names it. `server-api` is status-poller alone with --backend server-api
# against the stand-in's App Store Server API; its bound is Apple's rate limit, 50/s, not C ÷ L
# (Scripts/bench/server-api.sh); it also reads the most requests the stand-in received in any one
# second (at most the rate). `faults` is status-poller alone against the full simulator at 50 ms,
# c = 64, 12,800 new rows (--quick: 3,200), without faults, then with 3 % and 10 % of 503s and
# retryable statuses: throughput as a share of the fault-free run (Scripts/bench/faults.sh). `lapsed`
# plays `status-poller-demo demo` (1,000 subscribers, 90 nights, no receipt uploads) without and with the
# lapsed sweep: locked-out paying users, requests over the nights, how long comebacks went unseen
# (Scripts/bench/lapsed.sh). `postgres` is status-poller alone on a throwaway PostgreSQL cluster:
# 40,000 due among 1,000,000 rows, 1 worker then 4 workers (c = 16 each, L = 50 ms; throughput of
# the whole night and the speed-up), with the web service's reads of `entitlements` beside them
# (pgbench as the webservice role: p50, p99, max, errors); skipped by --quick unless --cases names
# it, and then 10,000 due among 100,000 rows (Scripts/bench/postgres.sh). `notifications` is
# `status-poller notifications serve` taking 20,000 V2 notifications (--quick 5,000) from a Go sender
# with 64 connections, each signature verified and each answer sent after its commit, on SQLite
# then PostgreSQL: rate, p50/p99 latency, the receiver's CPU (Scripts/bench/notifications.sh).
# `catchup` is `status-poller notifications catch-up` reading the history of 20,000 simulated
# subscribers over 25 days (--quick 5,000), every delivery lost, from the full simulator: pages
# per second against Apple's 50, and the most in any one second (Scripts/bench/catchup.sh).
# `report` is `status-poller report` over a synthetic trail of 1,000,000 subscriptions and
# 10,000,000 events on SQLite and on PostgreSQL (--quick: 100,000 and 1,000,000, SQLite only):
# wall seconds and peak RSS against 60 s and 300 MB (Scripts/bench/report.sh). `year` is a year of
# history (100,000 subscribers; --quick 20,000) and tonight's run on it, without and with retention:
# does the night's cost grow with the trail (Scripts/bench/year.sh); it runs only when --cases names it.
# Pollers: status-poller (as run from cron without an event endpoint: no outbox); outbox (the same
# build with the outbox written, STATUS_POLLER_EVENT_OUTBOX=true, as with an endpoint configured);
# python (InAppPy script); go (Go script, one transaction per answer);
# go64 (the Go script committing every 64 answers: by default in c64-L50 and c256-L50 of a full
# run only; everywhere when --only names it).
# Each figure is the median of --repetitions runs (default 3, --quick 1). Throughput is verified
# receipts ÷ the poller's own reported seconds (selection to last write); the wall column is the
# process from the outside (start-up included). CPU (user + sys) and peak RSS are the poller
# process's, from GNU time; the stand-in's CPU is read from /proc around each run.
# --binary PATH runs another status-poller build as the poller under test in every case (an older release, for a
# before/after table); the stand-in always comes from this checkout's release build.
# Results: .bench/results/<timestamp>.csv (and latest.csv), logs in .bench/runs/<timestamp>/,
# the plot in docs/performance.png (after a full run of the four concurrency cases; otherwise in
# .bench/results/<timestamp>.png).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

quick=0 skip_build=0 only="" cases="" repetitions="" poller_bin=""
need_value() { [ $# -ge 2 ] && [ -n "$2" ] || { echo "error: $1 needs a value (see --help)" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --skip-build) skip_build=1; shift ;;
    --only) need_value "$@"; only="$2"; shift 2 ;;
    --cases) need_value "$@"; cases="$2"; shift 2 ;;
    --repetitions) need_value "$@"; repetitions="$2"; shift 2 ;;
    --binary) need_value "$@"; poller_bin="$(realpath "$2")"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { print } /^set -euo/ { exit }' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
go64_everywhere=1
if [ -z "$only" ]; then
  only="status-poller,outbox,python,go"
  # By default go64 runs only where batching can matter: c64-L50 and c256-L50 of a full run.
  [ "$quick" -eq 1 ] || { only="$only,go64"; go64_everywhere=0; }
fi
if [ -z "$cases" ]; then
  cases="c8-L50,c64-L50,c256-L200,c256-L50,server-api,faults,lapsed,notifications,catchup,report,events"
  [ "$quick" -eq 1 ] || cases="$cases,scale,postgres"
fi
[ -n "$repetitions" ] || { [ "$quick" -eq 1 ] && repetitions=1 || repetitions=3; }
[[ "$repetitions" =~ ^[1-9][0-9]*$ ]] || { echo "error: --repetitions must be a positive whole number" >&2; exit 2; }
for p in ${only//,/ }; do
  case "$p" in status-poller|outbox|python|go|go64) ;; *) echo "error: unknown poller '$p' (status-poller, outbox, python, go, go64)" >&2; exit 2 ;; esac
done
for c in ${cases//,/ }; do
  case "$c" in c8-L50|c64-L50|c256-L200|c256-L50|scale|server-api|faults|lapsed|postgres|notifications|catchup|report|events|year) ;; *) echo "error: unknown case '$c'" >&2; exit 2 ;; esac
done

say() { echo "==> $*" >&2; }
warn() { printf '\n!!!!!!!! WARNING: %s !!!!!!!!\n\n' "$*" >&2; }
bench_started=$(date +%s)

Scripts/bench/setup.sh
if [ "$skip_build" -eq 0 ]; then
  Scripts/bootstrap.sh
  say "building the release binaries"
  swift build -c release --product status-poller
  swift build -c release --product status-poller-demo
fi
bin="$root/.build/release/status-poller"
# The simulator and its stand-ins: the program built beside status-poller (status-poller-demo).
sim_bin="$root/.build/release/status-poller-demo"
[ -x "$bin" ] || { echo "error: no release binary at $bin; run without --skip-build" >&2; exit 2; }
[ -x "$sim_bin" ] || { echo "error: no release binary at $sim_bin; run without --skip-build" >&2; exit 2; }
"$sim_bin" simulate --help | grep -q -- --lean || { echo "error: $sim_bin has no 'simulate --lean'; rebuild" >&2; exit 2; }
[ -n "$poller_bin" ] || poller_bin="$bin"
[ -x "$poller_bin" ] || { echo "error: --binary $poller_bin is not an executable" >&2; exit 2; }
py="$root/.bench/venv/bin/python"
go_peer="$root/.bench/go-peer"
sink_bin="$root/.bench/event-sink"

# The stand-in's shared secret, through the environment only (never on a command line).
export APPSTORE_SHARED_SECRET=simulator-shared-secret
bundle=com.example.bench
clk_tck=$(getconf CLK_TCK)

stamp=$(date -u +%Y%m%dT%H%M%SZ)
work="$root/.bench/tmp-$stamp"      # databases: deleted at the end
logs="$root/.bench/runs/$stamp"     # each run's stdout, stderr and timing
results="$root/.bench/results"
csv="$results/$stamp.csv"
mkdir -p "$work" "$logs" "$results"
echo "run,case,concurrency,latency_ms,table_rows,due,poller,rep,exit_code,selected,verified,failed,unwritten,wall_s,own_s,user_s,sys_s,max_rss_kb,standin_cpu_s,most_per_second,requests,retries,lowest_concurrency" > "$csv"

# One clock for every run: now, in whole seconds (the rows' windows are relative to it).
now_s=$(date +%s)
now_ms=$((now_s * 1000))
now_iso=$(date -u -d "@$now_s" +%Y-%m-%dT%H:%M:%SZ)

standin_pid=""
cleanup() {
  if declare -F postgres_cleanup > /dev/null; then postgres_cleanup; fi
  if [ -n "$standin_pid" ]; then kill "$standin_pid" 2>/dev/null || true; wait "$standin_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# --- the stand-in -------------------------------------------------------------------------------
# start_standin L_MS: serves on a free loopback port; sets standin_pid and url.
start_standin() {
  local out="$logs/standin-L$1.out"
  "$sim_bin" simulate --lean --host 127.0.0.1 --port 0 --latency "fixed:$1ms" --bundle-id "$bundle" > "$out" 2> "$logs/standin-L$1.err" &
  standin_pid=$!
  url=$(await_endpoint production "$out" "$logs/standin-L$1.err" 10)
}
# await_endpoint NAME OUT ERR SECONDS: the URL the simulator at $standin_pid prints on the line
# NAME of OUT, once it listens; exits the bench if it dies (showing ERR) or takes longer.
await_endpoint() {
  local name="$1" out="$2" err="$3" seconds="$4" found=""
  for _ in $(seq $((seconds * 10))); do
    found=$(awk -v name="$name" '$1 == name { print $2 }' "$out")
    [ -n "$found" ] && { echo "$found"; return; }
    kill -0 "$standin_pid" 2>/dev/null || { cat "$err" >&2; echo "error: the simulator exited" >&2; exit 1; }
    sleep 0.1
  done
  echo "error: the simulator printed no $name URL in $seconds s" >&2
  exit 1
}
stop_standin() {
  kill "$standin_pid" 2>/dev/null || true
  wait "$standin_pid" 2>/dev/null || true
  standin_pid=""
}
standin_ticks() { awk '{ print $14 + $15 }' "/proc/$standin_pid/stat"; }

# --- data ---------------------------------------------------------------------------------------
# make_template PATH ROWS DUE_EVERY RECEIPT_HEX_BYTES: a migrated database with ROWS rows. Every
# DUE_EVERY-th row is new (only user_id and latest_receipt, as the web service inserts them);
# the others are verified and outside every nightly window (half expire in 20 days, half expired
# 90 days ago). Receipts: "MIIT", the id in 10 digits, then random hex (base64's alphabet), unique.
make_template() {
  local path="$1" rows="$2" every="$3" hex="$4" day=86400000
  "$poller_bin" migrate --database "$path" > /dev/null
  # No WAL while loading (nothing to copy twice); back to WAL, as status-poller leaves it, after.
  sqlite3 "$path" > /dev/null <<SQL
PRAGMA journal_mode = DELETE;
PRAGMA synchronous = OFF;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $rows)
INSERT INTO subscriptions (id, user_id, latest_receipt, original_transaction_id, product_id, environment,
                           expires_at, auto_renew_status, auto_renew_product_id, last_verified_at, last_attempt_at)
SELECT i, 'bench-user-' || i, 'MIIT' || printf('%010d', i) || hex(randomblob($hex)),
       CASE WHEN i % $every = 0 THEN NULL ELSE '2' || printf('%015d', i) END,
       CASE WHEN i % $every = 0 THEN NULL ELSE 'com.example.premium.monthly' END,
       CASE WHEN i % $every = 0 THEN NULL ELSE 'Production' END,
       CASE WHEN i % $every = 0 THEN NULL WHEN i % 2 = 0 THEN $now_ms + 20 * $day ELSE $now_ms - 90 * $day END,
       CASE WHEN i % $every = 0 THEN NULL WHEN i % 2 = 0 THEN 1 ELSE 0 END,
       CASE WHEN i % $every = 0 THEN NULL ELSE 'com.example.premium.monthly' END,
       CASE WHEN i % $every = 0 THEN NULL ELSE $now_ms - 10 * $day END,
       CASE WHEN i % $every = 0 THEN NULL ELSE $now_ms - 10 * $day END
FROM n;
COMMIT;
PRAGMA journal_mode = WAL;
SQL
}

# --- one poller run -----------------------------------------------------------------------------
# run_poller CASE C L_MS TABLE_ROWS DUE POLLER REP DB: runs POLLER on DB against the stand-in at
# $url, measures it, checks every due row was written, appends a CSV row.
run_poller() {
  local case="$1" c="$2" l="$3" table_rows="$4" due="$5" poller="$6" rep="$7" db="$8"
  local log="$logs/$case-$poller-$rep" rc=0 cmd
  sync "$db"  # no writeback of the fresh copy (4 GB in the scale case) during the measured run
  case "$poller" in
    status-poller|outbox)
      cmd=("$poller_bin" run --database "$db" --bundle-id "$bundle" --production-url "$url"
           --sandbox-url "${url%/verifyReceipt}/sandbox/verifyReceipt" --concurrency "$c" --report json --now "$now_iso")
      [ "$poller" = status-poller ] || cmd=(env STATUS_POLLER_EVENT_OUTBOX=true "${cmd[@]}") ;;
    python) cmd=("$py" "$root/Scripts/bench/peer_inapppy.py" --database "$db" --url "$url" --concurrency "$c"
                 --now-ms "$now_ms" --bundle-id "$bundle") ;;
    go) cmd=("$go_peer" --database "$db" --url "$url" --concurrency "$c" --now-ms "$now_ms" --bundle-id "$bundle") ;;
    go64) cmd=("$go_peer" --database "$db" --url "$url" --concurrency "$c" --now-ms "$now_ms" --bundle-id "$bundle"
               --commit-every 64) ;;
  esac
  local ticks0 t0 t1 ticks1
  ticks0=$(standin_ticks)
  t0=$(date +%s%N)
  /usr/bin/time -o "$log.time" -f '%U %S %M' "${cmd[@]}" > "$log.out" 2> "$log.err" || rc=$?
  t1=$(date +%s%N)
  ticks1=$(standin_ticks)
  # The report: status-poller's (pretty JSON, duration_seconds) or a peer's line (seconds).
  local counts
  counts=$("$py" -c '
import json, sys
try:
    d = json.loads(open(sys.argv[1]).read())
    print(d["selected"], d["verified"], d["failed"], d.get("seconds", d.get("duration_seconds")))
except Exception:
    print("", "", "", "")' "$log.out")
  local selected verified failed own user sys rss unwritten
  read -r selected verified failed own <<< "$counts" || true
  read -r user sys rss < <(tail -n 1 "$log.time") || true
  unwritten=$(sqlite3 "$db" "SELECT count(*) FROM subscriptions WHERE original_transaction_id IS NULL")
  if [ "$poller" = status-poller ] || [ "$poller" = outbox ]; then  # the outbox written only when asked
    local events expected=0
    events=$(sqlite3 "$db" "SELECT count(*) FROM outbound_events")
    [ "$poller" = status-poller ] || expected="$due"
    [ "$events" = "$expected" ] || warn "$poller wrote $events outbound events in $case, expected $expected"
  fi
  local wall standin
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
  standin=$(awk -v a="$ticks0" -v b="$ticks1" -v hz="$clk_tck" 'BEGIN { printf "%.2f", (b - a) / hz }')
  echo "$stamp,$case,$c,$l,$table_rows,$due,$poller,$rep,$rc,$selected,$verified,$failed,$unwritten,$wall,$own,$user,$sys,$rss,$standin" >> "$csv"
  printf '    %-14s rep %d: %6s s, %s verified, %s failed, exit %d\n' "$poller" "$rep" "$wall" "${verified:-?}" "${failed:-?}" "$rc" >&2
  if [ -z "$selected" ]; then warn "$poller printed no report in $case (exit $rc); see $log.err"
  elif [ "$selected" != "$due" ]; then warn "$poller selected $selected rows in $case, $due are due"; fi
  [ "$unwritten" = "0" ] || warn "$poller left $unwritten of $due due rows unwritten in $case (exit $rc); see $log.err"
}

# The pollers of a case, in an order that rotates with the repetition (no poller always goes first).
rotated() {
  local rep="$1"; shift
  local list=("$@") n=$# i
  for ((i = 0; i < n; i++)); do echo "${list[$(((i + rep) % n))]}"; done
}

# print_table CASE...: the medians of the cases so far, from the CSV.
print_table() {
  "$py" - "$csv" "$@" <<'PY'
import csv, statistics, sys
path, wanted = sys.argv[1], sys.argv[2:]
names = {"status-poller": "status-poller", "outbox": "  outbox on", "python": "InAppPy script", "go": "Go script", "go64": "Go, commit/64"}
rows = [r for r in csv.DictReader(open(path)) if r["case"] in wanted]
def med(rs, key):
    values = [float(r[key]) for r in rs if r[key] not in ("", None)]
    return statistics.median(values) if values else float("nan")
summary = {}
for case in wanted:
    rs = [r for r in rows if r["case"] == case]
    if not rs: continue
    c, l, table_rows, due = int(rs[0]["concurrency"]), int(rs[0]["latency_ms"]), int(rs[0]["table_rows"]), int(rs[0]["due"])
    bound = c / (l / 1000)
    reps = max(int(r["rep"]) for r in rs)
    print(f"\n{case}: c = {c}, L = {l} ms, {due:,} due of {table_rows:,} rows, bound C ÷ L = {bound:,.0f}/s, median of {reps}")
    print(f"  {'poller':<15}{'rows':>7}{'wall s':>8}{'own s':>8}{'receipts/s':>11}{'bound':>7}{'of bound':>9}{'CPU s/1k':>9}{'RSS MB':>8}{'stand-in CPU s/1k':>18}{'stand-in %CPU':>14}")
    for poller in names:
        pr = [r for r in rs if r["poller"] == poller]
        if not pr: continue
        verified = med(pr, "verified")
        rate = statistics.median([float(r["verified"]) / float(r["own_s"]) for r in pr if r["verified"] and r["own_s"] and float(r["own_s"]) > 0] or [float("nan")])
        cpu = statistics.median([(float(r["user_s"]) + float(r["sys_s"])) / max(float(r["verified"] or 0), 1) * 1000 for r in pr if r["user_s"]] or [float("nan")])
        standin = statistics.median([float(r["standin_cpu_s"]) / max(float(r["verified"] or 0), 1) * 1000 for r in pr] or [float("nan")])
        busy = statistics.median([float(r["standin_cpu_s"]) / float(r["wall_s"]) * 100 for r in pr if float(r["wall_s"]) > 0] or [float("nan")])
        summary[(case, poller)] = (rate, cpu, med(pr, "wall_s"), med(pr, "max_rss_kb"))
        print(f"  {names[poller]:<15}{verified:>7,.0f}{med(pr, 'wall_s'):>8.2f}{med(pr, 'own_s'):>8.2f}{rate:>11,.0f}{bound:>7,.0f}{rate / bound:>9.2f}"
              f"{cpu:>9.2f}{med(pr, 'max_rss_kb') / 1024:>8.0f}{standin:>18.2f}{busy:>13.0f}%")
    for me in ("status-poller", "outbox"):
        mine = summary.get((case, me))
        for poller in ("python", "go", "go64") + (("status-poller",) if me == "outbox" else ()):
            peer = summary.get((case, poller))
            if mine and peer:
                label = "status-poller" if me == "status-poller" else "outbox on"
                print(f"  {label} ÷ {names[poller]}: throughput {mine[0] / peer[0]:.2f}×, CPU per receipt {mine[1] / peer[1]:.2f}×, peak RSS {mine[3] / peer[3]:.2f}×")
for poller in names:
    big, small = summary.get(("scale-1m", poller)), summary.get(("scale-100k", poller))
    if big and small:
        print(f"  {names[poller]}: 1,000,000 rows ÷ 100,000 rows: wall {big[2] / small[2]:.2f}×, peak RSS {big[3] / small[3]:.2f}×")
PY
}

# --- the cases ----------------------------------------------------------------------------------
source "$root/Scripts/reliability/binary.sh"  # demo_binary_of: the demo of a --binary
source "$root/Scripts/bench/server-api.sh"
source "$root/Scripts/bench/postgres.sh"
source "$root/Scripts/bench/faults.sh"
source "$root/Scripts/bench/lapsed.sh"
source "$root/Scripts/bench/notifications.sh"
source "$root/Scripts/bench/catchup.sh"
source "$root/Scripts/bench/report.sh"
source "$root/Scripts/bench/events.sh"
source "$root/Scripts/bench/year.sh"
pollers=(${only//,/ })
run_case() {  # run_case NAME C L_MS ROWS
  local name="$1" c="$2" l="$3" rows="$4" template="$work/$1.sqlite" rep poller
  say "$name: c = $c, L = $l ms, $rows new rows, $repetitions repetition(s)"
  make_template "$template" "$rows" 1 1529
  start_standin "$l"
  local case_pollers=()
  for poller in "${pollers[@]}"; do
    [[ "$poller" == go64 && "$go64_everywhere" -eq 0 && "$name" != c64-L50 && "$name" != c256-L50 ]] || case_pollers+=("$poller")
  done
  for ((rep = 1; rep <= repetitions; rep++)); do
    for poller in $(rotated "$rep" "${case_pollers[@]}"); do
      cp "$template" "$work/run.sqlite"
      run_poller "$name" "$c" "$l" "$rows" "$rows" "$poller" "$rep" "$work/run.sqlite"
      rm -f "$work"/run.sqlite*
    done
  done
  stop_standin
  rm -f "$template"*
  print_table "$name"
}

scale() {
  local scale_pollers=() p
  for p in "${pollers[@]}"; do [[ "$p" == status-poller || "$p" == go ]] && scale_pollers+=("$p"); done
  [ ${#scale_pollers[@]} -gt 0 ] || { say "scale: only status-poller and go run it; skipped"; return; }
  local free_gb
  free_gb=$(df -Pk "$work" | awk 'NR == 2 { print int($4 / 1048576) }')
  if [ "$free_gb" -lt 15 ]; then
    warn "scale case skipped: $free_gb GB free under .bench, it needs 15 GB"
    return
  fi
  local spec name rows every template rep poller last t0
  start_standin 50
  for spec in "scale-100k 100000 25" "scale-1m 1000000 250"; do
    read -r name rows every <<< "$spec"
    template="$work/$name.sqlite"
    say "$name: c = 64, L = 50 ms, $((rows / every)) due among $rows rows with 3 KB receipts"
    t0=$(date +%s)
    make_template "$template" "$rows" "$every" 1529
    say "  built in $(($(date +%s) - t0)) s, $(du -m "$template" | cut -f1) MB"
    local runs=()
    for ((rep = 1; rep <= repetitions; rep++)); do
      for poller in $(rotated "$rep" "${scale_pollers[@]}"); do runs+=("$poller:$rep"); done
    done
    last=$((${#runs[@]} - 1))
    for i in "${!runs[@]}"; do
      # Copy the template for every run but the last, which takes the template itself.
      if [ "$i" -eq "$last" ]; then mv "$template" "$work/run.sqlite"; else cp "$template" "$work/run.sqlite"; fi
      run_poller "$name" 64 50 "$rows" "$((rows / every))" "${runs[$i]%:*}" "${runs[$i]#*:}" "$work/run.sqlite"
      rm -f "$work"/run.sqlite*
    done
    rm -f "$template"*
  done
  stop_standin
  print_table scale-100k scale-1m
}

for case in ${cases//,/ }; do
  case "$case" in
    c8-L50) run_case c8-L50 8 50 $([ "$quick" -eq 1 ] && echo 160 || echo 1600) ;;
    c64-L50) run_case c64-L50 64 50 $([ "$quick" -eq 1 ] && echo 1280 || echo 6400) ;;
    c256-L200) run_case c256-L200 256 200 $([ "$quick" -eq 1 ] && echo 5120 || echo 12800) ;;
    c256-L50) run_case c256-L50 256 50 $([ "$quick" -eq 1 ] && echo 5120 || echo 25600) ;;
    scale) scale ;;
    server-api) [[ " ${pollers[*]} " == *" status-poller "* ]] && server_api_case $([ "$quick" -eq 1 ] && echo 500 || echo 1500) ;;
    faults) [[ " ${pollers[*]} " == *" status-poller "* ]] && faults_case $([ "$quick" -eq 1 ] && echo 3200 || echo 12800) ;;
    lapsed) [[ " ${pollers[*]} " == *" status-poller "* ]] && lapsed_case ;;
    notifications) [[ " ${pollers[*]} " == *" status-poller "* ]] && notifications_case $([ "$quick" -eq 1 ] && echo 5000 || echo 20000) ;;
    catchup) [[ " ${pollers[*]} " == *" status-poller "* ]] && catchup_case $([ "$quick" -eq 1 ] && echo 5000 || echo 20000) ;;
    report) [[ " ${pollers[*]} " == *" status-poller "* ]] && report_case $([ "$quick" -eq 1 ] && echo "100000 0" || echo "1000000 1") ;;
    events) [[ " ${pollers[*]} " == *" status-poller "* ]] && events_case $([ "$quick" -eq 1 ] && echo 5000 || echo 40000) ;;
    year) [[ " ${pollers[*]} " == *" status-poller "* ]] && year_case $([ "$quick" -eq 1 ] && echo 20000 || echo 100000) ;;
    postgres) [[ " ${pollers[*]} " == *" status-poller "* ]] && postgres_case $([ "$quick" -eq 1 ] && echo "100000 10000" || echo "1000000 40000") ;;
  esac
done

cp "$csv" "$results/latest.csv"
say "summary (release build, $(nproc) cores, $(date -u +%Y-%m-%d))"
print_table c8-L50 c64-L50 c256-L200 c256-L50 scale-100k scale-1m
print_server_api_table 50
print_faults_table
print_lapsed_table
print_notifications_table
print_catchup_table
print_report_table
print_postgres_table "$results/$stamp-postgres.csv"
print_year_table
# The page's plot comes from a full run of every concurrency case; any other run draws beside its results.
plot="$results/$stamp.png"
if [ "$quick" -eq 0 ] && [ "$poller_bin" = "$bin" ] && [[ ",$cases," == *,c8-L50,* && ",$cases," == *,c64-L50,* && ",$cases," == *,c256-L200,* && ",$cases," == *,c256-L50,* ]]; then
  mkdir -p docs
  plot=docs/performance.png
fi
if [[ ",$cases," =~ ,c[0-9]+-L[0-9]+, ]]; then
  "$py" Scripts/bench/plot.py "$csv" "$plot" || { warn "no plot drawn"; plot="none"; }
else
  plot="none (no concurrency case)"
fi
say "results: $csv (and latest.csv); logs: $logs; plot: $plot"
say "bench took $(($(date +%s) - bench_started)) s"
