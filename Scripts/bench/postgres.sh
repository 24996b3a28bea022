# The PostgreSQL case of Scripts/bench.sh (sourced by it): several workers share one night on a
# PostgreSQL store while the web service reads `entitlements` beside them.
#
#   postgres: a throwaway cluster (Scripts/postgres.sh), `status-poller migrate`, then 1,000,000
#     rows loaded by psql as the poller role (INSERT … SELECT generate_series; receipts of 3 KB:
#     "MIIT", the id, 3,058 random hex digits), every 25th of them new and so due tonight (40,000,
#     spread through the table), the others verified, active and far from expiry (one in ten expired
#     long ago). Then, from the same starting state each time (the due rows set back to new, the
#     run history, audit rows and shared work deleted, VACUUM ANALYZE, CHECKPOINT), after one
#     warm-up night of 4 workers that is not measured:
#       - the web service's reads alone, 20 s: the baseline;
#       - 1 worker, c = 16, against the lean stand-in at L = 50 ms: bound C ÷ L = 320 rows/s;
#       - 4 workers (4 processes, --worker-name bench-1…4, the same --now, c = 16 each): bound
#         4 × C ÷ L = 1,280 rows/s;
#     with the reads beside both runs. Throughput = due rows ÷ the wall time from the first
#     worker's start to the last worker's exit. Checked after every run: every due row written,
#     exactly one audit row per due row, the workers' verified counts (poll_runs) and requests
#     (their reports) adding up to the due count, no lease left.
#   --quick (only when --cases names postgres): 100,000 rows, 10,000 due — a smoke test of the
#     case; its speed-up understates, as each worker's last lease and its 1 s wait for its peers
#     weigh more.
#
# The reads: pgbench as the `webservice` role, which has SELECT on `entitlements` and USAGE on the
# schema only (the case checks that it cannot read `subscriptions`), over TCP with TLS
# (verify-full), -M prepared, 4 clients at a fixed 200 reads/s (Poisson schedule), the web
# service's query for a random user:
#   SELECT subscription_id, state, is_entitled, expires_at FROM entitlements WHERE user_id = $1
# Latencies come from pgbench's per-transaction logs, measured from each read's scheduled start
# (queueing included), of the reads that ended between the first worker's start and the last
# worker's exit; errors are failed reads, aborted clients and pgbench exits other than 0. Beside a
# run, the reads are consecutive pgbench runs: the first lasts as long as the run would at its
# bound, plus 4 s, then 5 s ones until the run has ended (each start leaves a gap of about 0.2 s
# while pgbench connects).
#
# Results: rows postgres-1w and postgres-4w of the run's CSV (one per worker process), and
# .bench/results/<timestamp>-postgres.csv (one per run and per baseline: wall, counts, CPU of the
# workers, of PostgreSQL's processes and of the stand-in, the reads' percentiles, load average).
# Needs 10 GB free under /tmp (the cluster's 1,000,000 rows take about 4.5 GB).

pg_dir="" pg_bindir="" pg_port="" pg_url="" pg_poller_password="" pg_webservice_password=""
pg_bench_pids=()

# PID and every process under it (a worker's subshell, GNU time, status-poller; a reader's pgbench).
pg_tree() {
  local child
  echo "$1"
  for child in $(ps -o pid= --ppid "$1"); do pg_tree "$child"; done
}

# Stops what the case started (bench.sh's cleanup calls this): workers and readers (SIGTERM, 10 s to
# finish, then SIGKILL), then the cluster.
postgres_cleanup() {
  local pid pids=() alive
  for pid in "${pg_bench_pids[@]}"; do pids+=($(pg_tree "$pid")); done
  if [ ${#pids[@]} -gt 0 ]; then
    kill -TERM "${pids[@]}" 2>/dev/null || true
    for _ in $(seq 100); do
      alive=0
      for pid in "${pids[@]}"; do ps -o stat= -p "$pid" 2>/dev/null | grep -qv Z && alive=1; done
      [ "$alive" -eq 1 ] || break
      sleep 0.1
    done
    kill -KILL "${pids[@]}" 2>/dev/null || true
  fi
  for pid in "${pg_bench_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pg_bench_pids=()
  if [ -n "$pg_dir" ]; then "$root/Scripts/postgres.sh" stop "$pg_dir" || true; pg_dir=""; fi
}

# psql over the cluster's socket as the poller role (who owns the database), or as the superuser.
pg_psql() { "$pg_bindir/psql" -X -q -v ON_ERROR_STOP=1 -h "$pg_dir/socket" -p "$pg_port" -U poller -d status_poller "$@"; }
pg_admin() { "$pg_bindir/psql" -X -q -v ON_ERROR_STOP=1 -h "$pg_dir/socket" -p "$pg_port" -U postgres -d status_poller "$@"; }

# CPU ticks of the whole cluster: the postmaster, its children alive now, and those it has reaped.
pg_ticks() {
  local pm total child ticks
  pm=$(head -n 1 "$pg_dir/data/postmaster.pid")
  total=$(awk '{ print $14 + $15 + $16 + $17 }' "/proc/$pm/stat")
  for child in $(ps -o pid= --ppid "$pm"); do
    ticks=$(awk '{ print $14 + $15 }' "/proc/$child/stat" 2>/dev/null) || ticks=0
    total=$((total + ${ticks:-0}))
  done
  echo "$total"
}

postgres_start() {
  pg_dir=$("$root/Scripts/postgres.sh" start)
  pg_bindir=$(awk -F= '$1 == "bindir" { print $2 }' "$pg_dir/.status-poller-pg")
  pg_port=$(awk -F= '$1 == "port" { print $2 }' "$pg_dir/.status-poller-pg")
  # The passwords, read from the cluster's env file in a subshell: they go into the environment of
  # the commands that need them (PGPASSWORD), never onto a command line or into this shell's exports.
  local url
  url=$(. "$pg_dir/env" && echo "$STATUS_POLLER_TEST_POSTGRES_URL")
  pg_poller_password=${url#postgres://poller:}; pg_poller_password=${pg_poller_password%%@*}
  url=$(. "$pg_dir/env" && echo "$STATUS_POLLER_TEST_WEBSERVICE_URL")
  pg_webservice_password=${url#postgres://webservice:}; pg_webservice_password=${pg_webservice_password%%@*}
  pg_url="postgres://poller@127.0.0.1:$pg_port/status_poller?sslmode=verify-full&sslrootcert=$pg_dir/ca.crt"
}

# pg_load ROWS EVERY: migrate, grant the web service its view, and load ROWS rows (every EVERY-th new).
pg_load() {
  local rows="$1" every="$2" day=86400000
  PGPASSWORD="$pg_poller_password" "$poller_bin" migrate --database "$pg_url" > "$logs/postgres-migrate.out" 2> "$logs/postgres-migrate.err"
  pg_psql <<SQL
GRANT USAGE ON SCHEMA public TO webservice;
GRANT SELECT ON entitlements TO webservice;
SQL
  # The grant is all the web service has: the view, not the table under it.
  if PGPASSWORD="$pg_webservice_password" "$pg_bindir/psql" -X -q -h 127.0.0.1 -p "$pg_port" -U webservice -d status_poller \
       -c "SELECT 1 FROM subscriptions LIMIT 1" > /dev/null 2>&1; then
    warn "the webservice role can read subscriptions; it should see entitlements only"
  fi
  # gen_random_bytes comes from pgcrypto (a trusted extension: the database's owner may create it),
  # in a schema of its own, dropped after the load.
  pg_psql > /dev/null <<SQL
SET client_min_messages = warning;
CREATE SCHEMA bench_load;
CREATE EXTENSION pgcrypto SCHEMA bench_load;
INSERT INTO subscriptions (id, user_id, latest_receipt, original_transaction_id, product_id, environment, expires_at,
                           auto_renew_status, auto_renew_product_id, last_attempt_at, last_verified_at,
                           last_apple_status, last_status_backend, created_at)
SELECT i, i::text, 'MIIT' || lpad(i::text, 10, '0') || encode(bench_load.gen_random_bytes(1024) || bench_load.gen_random_bytes(505), 'hex'),
       CASE WHEN due THEN NULL ELSE '2' || lpad(i::text, 15, '0') END,
       CASE WHEN due THEN NULL ELSE 'com.example.premium.monthly' END,
       CASE WHEN due THEN NULL ELSE 'Production' END,
       CASE WHEN due THEN NULL WHEN i % 10 = 1 THEN $now_ms - (60 + i % 300) * $day ELSE $now_ms + (10 + i % 20) * $day END,
       CASE WHEN due THEN NULL WHEN i % 10 = 1 THEN 0 ELSE 1 END,
       CASE WHEN due THEN NULL ELSE 'com.example.premium.monthly' END,
       CASE WHEN due THEN NULL ELSE $now_ms - (1 + i % 30) * $day END,
       CASE WHEN due THEN NULL ELSE $now_ms - (1 + i % 30) * $day END,
       CASE WHEN due THEN NULL ELSE 0 END,
       CASE WHEN due THEN NULL ELSE 'verifyReceipt' END,
       $now_ms - (400 - i % 365) * $day
FROM generate_series(1::bigint, $rows) AS i CROSS JOIN LATERAL (SELECT i % $every = 0 AS due) AS d;
SELECT setval(pg_get_serial_sequence('subscriptions', 'id'), $rows);
DROP SCHEMA bench_load CASCADE;
VACUUM (FREEZE, ANALYZE) subscriptions;
SQL
}

# pg_reset EVERY ROWS: the starting state of every measured run — the due rows new again, no run
# history, audit rows or shared work, dead rows vacuumed, statistics fresh, a checkpoint behind.
pg_reset() {
  local every="$1" rows="$2"
  pg_psql <<SQL
DELETE FROM subscription_events;
DELETE FROM work_targets;
DELETE FROM poll_runs;
DELETE FROM subscriptions WHERE id > $rows;
UPDATE subscriptions SET original_transaction_id = NULL, product_id = NULL, environment = NULL, expires_at = NULL,
    grace_period_expires_at = NULL, is_in_billing_retry = 0, auto_renew_status = NULL, auto_renew_product_id = NULL,
    expiration_intent = NULL, cancelled_at = NULL, last_attempt_at = NULL, last_verified_at = NULL,
    last_apple_status = NULL, last_status_backend = NULL, last_error_reason = NULL, last_error = NULL,
    consecutive_failures = 0, receipt_uploaded = 0, lease_owner = NULL, lease_run = NULL, lease_expires_at = NULL
WHERE id % $every = 0;
VACUUM (ANALYZE) subscriptions, work_targets, subscription_events, poll_runs;
SQL
  pg_admin -c "CHECKPOINT" > /dev/null
}

# pg_reader DIR SECONDS [STOPFILE]: the web service's reads into DIR — one pgbench of SECONDS, then
# (with STOPFILE) more of 5 s each until STOPFILE exists. Each pgbench logs every read.
pg_reader() {
  local dir="$1" seconds="$2" stop="${3:-}" chunk=0
  mkdir -p "$dir"
  printf '%s\n' '\set uid random(1, '"$pg_table_rows"')' \
    'SELECT subscription_id, state, is_entitled, expires_at FROM entitlements WHERE user_id = :uid;' > "$dir/reads.sql"
  while :; do
    chunk=$((chunk + 1))
    local rc=0
    (cd "$dir" && PGPASSWORD="$pg_webservice_password" PGHOST=127.0.0.1 PGPORT="$pg_port" PGUSER=webservice \
      PGDATABASE=status_poller PGSSLMODE=verify-full PGSSLROOTCERT="$pg_dir/ca.crt" \
      "$pg_bindir/pgbench" -n -M prepared -f reads.sql -c 4 -j 1 -R 200 -T "$seconds" -l --log-prefix "reads-$chunk" \
      > "chunk-$chunk.out" 2> "chunk-$chunk.err") || rc=$?
    echo "$rc" > "$dir/chunk-$chunk.rc"
    [ -n "$stop" ] && [ ! -e "$stop" ] || break
    seconds=5
  done
}

# pg_read_stats DIR FROM_NS TO_NS: "reads errors p50_ms p99_ms max_ms" of the reads in DIR that ended
# in [FROM, TO] (all of them when FROM is 0); errors count every chunk's.
pg_read_stats() {
  "$py" "$root/Scripts/bench/postgres_report.py" read-stats "$@"
}

# pg_workers WORKERS LOGPREFIX: a night of WORKERS processes started together (--worker-name
# bench-1…); returns once all have exited. Each one's report, stderr, times, exit code and end
# time go to LOGPREFIX-workerN.*.
pg_workers() {
  local w="$1" prefix="$2" i pids=()
  for ((i = 1; i <= w; i++)); do
    local log="$prefix-worker$i"
    (
      rc=0
      PGPASSWORD="$pg_poller_password" /usr/bin/time -o "$log.time" -f '%e %U %S %M' "$poller_bin" run --database "$pg_url" \
        --worker-name "bench-$i" --bundle-id "$bundle" --production-url "$url" \
        --sandbox-url "${url%/verifyReceipt}/sandbox/verifyReceipt" --concurrency "$pg_concurrency" \
        --report json --now "$now_iso" > "$log.out" 2> "$log.err" || rc=$?
      date +%s%N > "$log.end"
      echo "$rc" > "$log.rc"
    ) &
    pids+=($!)
    pg_bench_pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || true; done
}

# pg_warmup: one night of 4 workers, not measured. The first night after the load is slower for
# one worker (PostgreSQL's CPU about 1.5 times the later nights'; seen in the first repetition of
# two full runs), and a production table is never freshly loaded.
pg_warmup() {
  pg_reset "$pg_every" "$pg_table_rows"
  pg_workers 4 "$logs/postgres-warmup"
  pg_bench_pids=()
  local i
  for i in 1 2 3 4; do
    [ "$(cat "$logs/postgres-warmup-worker$i.rc")" = "0" ] || warn "warm-up worker $i exited $(cat "$logs/postgres-warmup-worker$i.rc"); see $logs/postgres-warmup-worker$i.err"
  done
}

# pg_measure WORKERS REP: one measured run of WORKERS processes from the starting state, with the
# web service's reads beside; appends to both CSVs.
pg_measure() {
  local w="$1" rep="$2" name="postgres-$1w" i
  pg_reset "$pg_every" "$pg_table_rows"
  local load reads_dir="$logs/$name-$rep-reads" stop="$work/pg-reader-stop"
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  rm -f "$stop"
  # The first pgbench lasts as long as the run would at its bound, and a little more.
  pg_reader "$reads_dir" $((pg_due * pg_latency / (w * pg_concurrency * 1000) + 4)) "$stop" &
  local reader=$!
  pg_bench_pids+=("$reader")
  sleep 1
  local ticks0 pg0 t0 t1 ticks1 pg1
  ticks0=$(standin_ticks); pg0=$(pg_ticks)
  t0=$(date +%s%N)
  pg_workers "$w" "$logs/$name-$rep"
  t1=$(date +%s%N)
  ticks1=$(standin_ticks)
  # PostgreSQL's CPU once the workers' backends have exited and been reaped (their time then
  # counts in the postmaster's children's time; read while they exit, it could be missed).
  for i in $(seq 50); do
    [ "$(pg_admin -At -c "SELECT count(*) FROM pg_stat_activity WHERE usename = 'poller'")" = "0" ] && break
    sleep 0.1
  done
  sleep 0.2
  pg1=$(pg_ticks)
  touch "$stop"
  wait "$reader" || true
  pg_bench_pids=()

  # The run as a whole: counts from the database, then each worker's report and CPU.
  local unwritten events distinct verified_sum not_done leased
  IFS='|' read -r unwritten events distinct verified_sum not_done leased < <(pg_psql -At -c "
    SELECT (SELECT count(*) FROM subscriptions WHERE original_transaction_id IS NULL),
           (SELECT count(*) FROM subscription_events),
           (SELECT count(DISTINCT subscription_id) FROM subscription_events),
           (SELECT coalesce(sum(verified), 0) FROM poll_runs),
           (SELECT count(*) FROM work_targets WHERE NOT done),
           (SELECT count(*) FROM subscriptions WHERE lease_run IS NOT NULL)")
  pg_psql -At -F ' ' -c "SELECT worker, status, exit_code, targets, selected, verified, failed FROM poll_runs ORDER BY id" \
    > "$logs/$name-$rep-poll_runs.txt"
  local wall requests_sum=0 user_sum=0 sys_sum=0 per_worker="" first_exit="" last_exit=""
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
  for ((i = 1; i <= w; i++)); do
    local log="$logs/$name-$rep-worker$i" rc counts selected verified failed own requests e user sys rss ended
    rc=$(cat "$log.rc")
    counts=$("$py" -c '
import json, sys
try:
    d = json.loads(open(sys.argv[1]).read())
    print(d["selected"], d["verified"], d["failed"], d["duration_seconds"], d["requests"])
except Exception:
    print("", "", "", "", "")' "$log.out")
    read -r selected verified failed own requests <<< "$counts" || true
    read -r e user sys rss < <(tail -n 1 "$log.time") || true
    echo "$stamp,$name,$pg_concurrency,$pg_latency,$pg_table_rows,$pg_due,status-poller,$rep,$rc,$selected,$verified,$failed,$unwritten,$e,$own,$user,$sys,$rss," >> "$csv"
    requests_sum=$((requests_sum + ${requests:-0}))
    user_sum=$(awk -v a="$user_sum" -v b="${user:-0}" 'BEGIN { print a + b }')
    sys_sum=$(awk -v a="$sys_sum" -v b="${sys:-0}" 'BEGIN { print a + b }')
    per_worker+=" ${verified:-?}"
    ended=$(cat "$log.end")
    [ -n "$first_exit" ] && [ "$first_exit" -le "$ended" ] || first_exit=$ended
    [ -n "$last_exit" ] && [ "$last_exit" -ge "$ended" ] || last_exit=$ended
    [ "$rc" = "0" ] || warn "worker $i of $name exited $rc (rep $rep); see $log.err"
  done
  local standin pg_cpu
  standin=$(awk -v a="$ticks0" -v b="$ticks1" -v hz="$clk_tck" 'BEGIN { printf "%.2f", (b - a) / hz }')
  pg_cpu=$(awk -v a="$pg0" -v b="$pg1" -v hz="$clk_tck" 'BEGIN { printf "%.2f", (b - a) / hz }')
  local reads read_errors p50 p99 max
  read -r reads read_errors p50 p99 max < <(pg_read_stats "$reads_dir" "$t0" "$t1")
  local spread
  spread=$(awk -v a="$first_exit" -v b="$last_exit" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
  echo "$stamp,run,$w,$pg_concurrency,$pg_latency,$pg_table_rows,$pg_due,$rep,${load// /,},$wall,$spread,$verified_sum,$requests_sum,$events,$distinct,$unwritten,$user_sum,$sys_sum,$pg_cpu,$standin,$reads,$read_errors,$p50,$p99,$max" >> "$pg_csv"
  printf '    %d worker(s) rep %d: %7s s (first to last exit %s s), %s rows/s, verified by worker:%s (sum %s, requests %s), reads beside: p50 %s ms, p99 %s ms, max %s ms, %s errors (load %s)\n' \
    "$w" "$rep" "$wall" "$spread" "$(awk -v n="$pg_due" -v s="$wall" 'BEGIN { printf "%.0f", n / s }')" "$per_worker" "$verified_sum" "$requests_sum" \
    "$p50" "$p99" "$max" "$read_errors" "$load" >&2
  [ "$unwritten" = "0" ] || warn "$name left $unwritten of $pg_due due rows unwritten (rep $rep)"
  [ "$verified_sum" = "$pg_due" ] || warn "$name: the workers' verified counts add up to $verified_sum, $pg_due rows were due (rep $rep)"
  [ "$requests_sum" = "$pg_due" ] || warn "$name: the workers sent $requests_sum requests for $pg_due due rows (rep $rep)"
  [ "$events" = "$pg_due" ] && [ "$distinct" = "$pg_due" ] \
    || warn "$name: $events audit rows for $distinct distinct rows, $pg_due were due: a row verified twice or not at all (rep $rep)"
  [ "$not_done" = "0" ] && [ "$leased" = "0" ] || warn "$name: $not_done rows of the night not done, $leased leases left (rep $rep)"
  [ "$read_errors" = "0" ] || warn "the web service's reads beside $name had $read_errors errors (rep $rep); see $reads_dir"
}

# pg_baseline REP: the web service's reads alone, 20 s, from the starting state.
pg_baseline() {
  local rep="$1" dir="$logs/postgres-reads-alone-$1" load
  pg_reset "$pg_every" "$pg_table_rows"
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  local pg0 pg1 reads read_errors p50 p99 max
  pg0=$(pg_ticks)
  pg_reader "$dir" 20
  pg1=$(pg_ticks)
  read -r reads read_errors p50 p99 max < <(pg_read_stats "$dir" 0 0)
  local pg_cpu
  pg_cpu=$(awk -v a="$pg0" -v b="$pg1" -v hz="$clk_tck" 'BEGIN { printf "%.2f", (b - a) / hz }')
  echo "$stamp,reads-alone,0,$pg_concurrency,$pg_latency,$pg_table_rows,$pg_due,$rep,${load// /,},20,,,,,,,,,$pg_cpu,,$reads,$read_errors,$p50,$p99,$max" >> "$pg_csv"
  printf '    reads alone rep %d: %s reads, p50 %s ms, p99 %s ms, max %s ms, %s errors (load %s)\n' "$rep" "$reads" "$p50" "$p99" "$max" "$read_errors" "$load" >&2
  [ "$read_errors" = "0" ] || warn "the web service's reads alone had $read_errors errors (rep $rep); see $dir"
}

# postgres_case ROWS DUE
postgres_case() {
  pg_table_rows="$1" pg_due="$2" pg_concurrency=16 pg_latency=50
  pg_every=$((pg_table_rows / pg_due))
  pg_due=$((pg_table_rows / pg_every))  # every pg_every-th row is due: exactly this many
  local free_gb rep t0
  free_gb=$(df -Pk /tmp | awk 'NR == 2 { print int($4 / 1048576) }')
  if [ "$pg_table_rows" -ge 1000000 ] && [ "$free_gb" -lt 10 ]; then
    warn "postgres case skipped: $free_gb GB free under /tmp, it needs 10 GB"
    return
  fi
  pg_csv="$results/$stamp-postgres.csv"
  echo "run,kind,workers,concurrency,latency_ms,table_rows,due,rep,load1,load5,load15,wall_s,exit_spread_s,verified_sum,requests_sum,events,rows_with_events,unwritten,worker_user_s,worker_sys_s,pg_cpu_s,standin_cpu_s,reads,read_errors,read_p50_ms,read_p99_ms,read_max_ms" > "$pg_csv"
  say "postgres: $pg_due due among $pg_table_rows rows, c = $pg_concurrency per worker, L = $pg_latency ms; 1 worker, then 4; $repetitions repetition(s)"
  postgres_start
  t0=$(date +%s)
  pg_load "$pg_table_rows" "$pg_every"
  say "  loaded in $(($(date +%s) - t0)) s: $(pg_psql -At -c "SELECT pg_size_pretty(pg_database_size(current_database()))")"
  start_standin "$pg_latency"
  pg_warmup
  say "  warm-up night (4 workers, not measured) done"
  for ((rep = 1; rep <= repetitions; rep++)); do
    pg_baseline "$rep"
    pg_measure 1 "$rep"
    pg_measure 4 "$rep"
  done
  stop_standin
  postgres_cleanup
  print_postgres_table "$pg_csv"
}

# print_postgres_table CSV: medians of the repetitions.
print_postgres_table() {
  [ -f "$1" ] || return 0
  "$py" "$root/Scripts/bench/postgres_report.py" table "$1"
}
