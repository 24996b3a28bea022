# The year case of Scripts/bench.sh (sourced by it): what a year of history does to the nightly
# run, with and without retention, on SQLite (issue 49, item 7).
#
#   Three databases of the same SUBSCRIBERS subscriptions (100,000; --quick 20,000), 3 KB
#   receipts, monthly renewals spread over the month so that a tenth of them are in tonight's
#   windows (expired within 48 h or expiring within 24 h), differ only in the history 365 nights
#   leave behind, built in SQL as the nights write it: one audit row per subscriber per month
#   (renewals; three in four brought by a notification, stored in app_store_notifications, the
#   fourth by that night's run, named by run_id), and one run per night.
#     month-1   the first month's history (30 nights);
#     month-12  twelve months of it (360 nights), nothing pruned;
#     pruned    twelve months, pruned to 90 days by `status-poller prune` the night before (its
#               time is the first prune of a big trail), then tonight's run with
#               audit/notifications/runs_keep_days = 90 prunes the day that became old.
#   On each, --repetitions times (a fresh copy each): `status-poller run` at c = 64 against the
#   lean stand-in (L = 50 ms): wall, the run's own seconds, CPU, requests; then `status-poller
#   report` over the whole trail: wall and peak RSS. The database's size: the file, and the pages
#   in use (a prune frees pages for reuse; the file keeps its size).
#   The claim checked: the night's cost does not grow with the trail — month-12 ÷ month-1 and
#   pruned ÷ month-1, wall and CPU.

year_case() {
  local subscribers="$1" d=86400000 state months template rep
  year_csv="$results/$stamp-year.csv"
  echo "state,rep,audit_rows,notifications,runs,file_mb,live_mb,wall_s,own_s,cpu_s,requests,verified,pruned,report_s,report_rss_mb,prune_s" > "$year_csv"
  start_standin 50
  local t0; t0=$(date +%s)
  year_subscribers "$work/year-base.sqlite" "$subscribers"
  say "year: $subscribers subscribers verified by the stand-in in $(($(date +%s) - t0)) s"
  for state in month-1 month-12 pruned; do
    months=12; [ "$state" = month-1 ] && months=1
    template="$work/year-$state.sqlite"
    say "year ($state): $subscribers subscribers, $months month(s) of history"
    t0=$(date +%s)
    cp "$work/year-base.sqlite" "$template"
    year_history "$template" "$subscribers" "$months"
    local prune_s=""
    if [ "$state" = pruned ]; then
      local p0 p1 yesterday
      yesterday=$(date -u -d "@$(((now_ms - d) / 1000))" +%Y-%m-%dT%H:%M:%SZ)
      p0=$(date +%s%N)
      "$poller_bin" prune --database "$template" --audit-keep-days 90 --notifications-keep-days 90 --runs-keep-days 90 --now "$yesterday" \
        > "$logs/year-first-prune.out" 2> "$logs/year-first-prune.err"
      p1=$(date +%s%N)
      prune_s=$(awk -v a="$p0" -v b="$p1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
      sqlite3 "$template" "PRAGMA wal_checkpoint(TRUNCATE)" > /dev/null  # the copies take the main file only
      say "  first prune (nine months of history): $prune_s s"
      # Tonight's prune alone (what the run below does after polling), on a copy: its CPU.
      cp "$template" "$work/year-run.sqlite"
      /usr/bin/time -o "$logs/year-night-prune.time" -f '%e %U %S' "$poller_bin" prune --database "$work/year-run.sqlite" \
        --audit-keep-days 90 --notifications-keep-days 90 --runs-keep-days 90 --now "$now_iso" > "$logs/year-night-prune.out" 2>&1
      rm -f "$work"/year-run.sqlite*
      year_night_prune=$(awk '{ printf "%.2f s wall, %.2f CPU s", $1, $2 + $3 }' "$logs/year-night-prune.time")
      say "  tonight's prune alone ($(paste -sd' ' "$logs/year-night-prune.out" | tr -s ' ')): $year_night_prune"
    fi
    say "  built in $(($(date +%s) - t0)) s, $(du -m "$template" | cut -f1) MB"
    for ((rep = 1; rep <= repetitions; rep++)); do
      cp "$template" "$work/year-run.sqlite"
      year_night "$state" "$rep" "$work/year-run.sqlite" "$prune_s"
      rm -f "$work"/year-run.sqlite*
    done
    rm -f "$template"*
  done
  rm -f "$work"/year-base.sqlite*
  stop_standin
}

# year_subscribers PATH SUBSCRIBERS: the subscriptions, each verified once by the stand-in (so that
# tonight's answers are about the chain each row holds), with expiries then spread over the month.
year_subscribers() {
  local path="$1" n="$2" d=86400000
  "$poller_bin" migrate --database "$path" > /dev/null
  sqlite3 "$path" > /dev/null <<SQL
BEGIN;
WITH RECURSIVE n(s) AS (SELECT 1 UNION ALL SELECT s + 1 FROM n WHERE s < $n)
INSERT INTO subscriptions (id, user_id, latest_receipt) SELECT s, 'year-user-' || s, 'MIIT' || printf('%010d', s) || hex(randomblob(1529)) FROM n;
COMMIT;
SQL
  "$poller_bin" run --database "$path" --bundle-id "$bundle" --production-url "$url" --sandbox-url "${url%/verifyReceipt}/sandbox/verifyReceipt" \
    --concurrency 256 --report json --now "$now_iso" > "$logs/year-verify.out" 2> "$logs/year-verify.err" \
    || { warn "year: verifying the subscribers failed; see $logs/year-verify.err"; return 1; }
  sqlite3 "$path" > /dev/null <<SQL
BEGIN;
DELETE FROM subscription_events;
DELETE FROM poll_runs;
UPDATE subscriptions SET expires_at = $now_ms + ((id % 30) - 2) * $d + (id % 3600) * 1000, apple_state_at = NULL,
  last_verified_at = $now_ms - 20 * $d, last_attempt_at = $now_ms - 20 * $d;
COMMIT;
PRAGMA wal_checkpoint(TRUNCATE);
SQL
}

# year_history PATH SUBSCRIBERS MONTHS: MONTHS months of the subscriptions' history.
year_history() {
  local path="$1" n="$2" months="$3" d=86400000 nights
  nights=$((months * 30))
  # Night j (1 … nights) happened (nights + 1 − j) days before now; subscriber s renews on night
  # 30k + s mod 30 + 1 of month k. Its expiry: the next renewal, so that s mod 30 in {0, 1, 2} is
  # due tonight.
  local night="(k * 30 + s % 30 + 1)"
  local at="($now_ms - ($nights + 1 - $night) * $d + (s % 3600) * 1000)"
  local prev_at="($now_ms - ($nights + 1 - ($night - 30)) * $d + (s % 3600) * 1000)"
  sqlite3 "$path" > /dev/null <<SQL
PRAGMA journal_mode = DELETE;
PRAGMA synchronous = OFF;
BEGIN;
WITH RECURSIVE j(j) AS (SELECT 1 UNION ALL SELECT j + 1 FROM j WHERE j < $nights)
INSERT INTO poll_runs (id, mode, status, started_at, finished_at, run_clock, host, pid, options, checkpoint_id, exit_code)
SELECT j, 'nightly', 'finished', $now_ms - ($nights + 1 - j) * $d, $now_ms - ($nights + 1 - j) * $d + 600000,
  $now_ms - ($nights + 1 - j) * $d, 'bench', 1, '{}', 0, 0 FROM j;
WITH RECURSIVE n(s) AS (SELECT 1 UNION ALL SELECT s + 1 FROM n WHERE s < $n),
  m(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM m WHERE k < $months - 1)
INSERT INTO app_store_notifications (notification_id, version, type, signed_at, apple_state_at, environment, source, received_at, outcome, subscription_id)
SELECT 'year-' || s || '-' || k, 2, 'DID_RENEW', $at - 1000, $at - 1000, 'Production', 'push', $at, 'applied', s
FROM m, n WHERE (s + k) % 4 <> 0;
WITH RECURSIVE n(s) AS (SELECT 1 UNION ALL SELECT s + 1 FROM n WHERE s < $n),
  m(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM m WHERE k < $months - 1)
INSERT INTO subscription_events (subscription_id, user_id, run_id, at, reason, entitlement_before, entitlement_after, old_values, new_values,
                                 source, notification_id, apple_state_at, environment, verified, expires_at, is_in_billing_retry, auto_renew_status)
SELECT s, 'year-user-' || s, CASE WHEN (s + k) % 4 = 0 THEN $night END, $at, CASE WHEN k = 0 THEN 'first_verified' ELSE 'renewed' END,
  CASE WHEN k = 0 THEN 'unverified' ELSE 'active' END, 'active',
  CASE WHEN k = 0 THEN '{"is_in_billing_retry":false}' ELSE json_object('auto_renew_product_id', 'com.example.premium.monthly',
    'auto_renew_status', json('true'), 'environment', 'Production', 'expires_at', $prev_at + 30 * $d, 'is_in_billing_retry', json('false'),
    'original_transaction_id', (SELECT original_transaction_id FROM subscriptions WHERE id = s), 'product_id', 'com.example.premium.monthly', 'purchased_at', $prev_at,
    'transaction_id', '4' || printf('%010d', s) || printf('%03d', k - 1)) END,
  json_object('auto_renew_product_id', 'com.example.premium.monthly', 'auto_renew_status', json('true'), 'environment', 'Production',
    'expires_at', $at + 30 * $d, 'is_in_billing_retry', json('false'), 'original_transaction_id', (SELECT original_transaction_id FROM subscriptions WHERE id = s),
    'product_id', 'com.example.premium.monthly', 'purchased_at', $at, 'transaction_id', '4' || printf('%010d', s) || printf('%03d', k)),
  CASE WHEN (s + k) % 4 = 0 THEN 'poll' ELSE 'notification' END, CASE WHEN (s + k) % 4 <> 0 THEN 'year-' || s || '-' || k END,
  CASE WHEN (s + k) % 4 <> 0 THEN $at - 1000 END, 'Production', 1, $at + 30 * $d, 0, 1
FROM m, n ORDER BY $at;
COMMIT;
PRAGMA journal_mode = WAL;
PRAGMA wal_checkpoint(TRUNCATE);
SQL
}

# year_night STATE REP DB PRUNE_S: tonight's run and the report on DB; a line of $year_csv.
year_night() {
  local state="$1" rep="$2" db="$3" prune_s="$4" log="$logs/year-$1-$2" rc=0 t0 t1
  local sizes; sizes=$(sqlite3 "$db" "SELECT (SELECT count(*) FROM subscription_events), (SELECT count(*) FROM app_store_notifications), (SELECT count(*) FROM poll_runs)" | tr '|' ' ')
  local retention=()
  [ "$state" = pruned ] && retention=(env STATUS_POLLER_AUDIT_KEEP_DAYS=90 STATUS_POLLER_NOTIFICATIONS_KEEP_DAYS=90 STATUS_POLLER_RUNS_KEEP_DAYS=90)
  sync "$db"
  t0=$(date +%s%N)
  /usr/bin/time -o "$log.time" -f '%U %S %M' "${retention[@]}" "$poller_bin" run --database "$db" --bundle-id "$bundle" --production-url "$url" \
    --sandbox-url "${url%/verifyReceipt}/sandbox/verifyReceipt" --concurrency 64 --report json --now "$now_iso" > "$log.out" 2> "$log.err" || rc=$?
  t1=$(date +%s%N)
  [ "$rc" -eq 0 ] || warn "year ($state): the run exited $rc; see $log.err"
  /usr/bin/time -o "$log.report.time" -f '%e %M' "$poller_bin" report --database "$db" --format json --output "$work/year-report.json" \
    --environment all > /dev/null 2> "$log.report.err" || warn "year ($state): the report failed; see $log.report.err"
  local pages; pages=$(sqlite3 "$db" "PRAGMA page_count" "PRAGMA freelist_count" "PRAGMA page_size" | tr '\n' ' ')
  "$py" - "$state" "$rep" "$sizes" "$pages" "$(du -b "$db" | cut -f1)" "$t0" "$t1" "$log" "${prune_s:-}" >> "$year_csv" <<'PY'
import json, sys
state, rep, sizes, pages, file_bytes, t0, t1, log, prune_s = sys.argv[1:]
audit, notifications, runs = sizes.split()
page_count, free, page_size = (int(x) for x in pages.split())
d = json.load(open(log + ".out"))
user, sys_s, rss = open(log + ".time").read().split()[-3:]
report_s, report_rss = open(log + ".report.time").read().split()[-2:]
pruned = sum((d.get("pruned") or {}).values())
print(f"{state},{rep},{audit},{notifications},{runs},{int(file_bytes) / 2**20:.0f},{(page_count - free) * page_size / 2**20:.0f},"
      f"{(int(t1) - int(t0)) / 1e9:.2f},{d['duration_seconds']:.2f},{float(user) + float(sys_s):.2f},{d['requests']},{d['verified']},{pruned},"
      f"{float(report_s):.2f},{int(report_rss) / 1024:.0f},{prune_s}")
PY
  printf '    %-9s rep %d: %s\n' "$state" "$rep" "$(tail -n 1 "$year_csv")" >&2
}

print_year_table() {
  [ -n "${year_csv:-}" ] && [ -f "$year_csv" ] || return 0
  "$py" - "$year_csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
if not rows: sys.exit()
med = lambda rs, k: statistics.median(float(r[k]) for r in rs)
by = {s: [r for r in rows if r["state"] == s] for s in ("month-1", "month-12", "pruned")}
print(f"\nyear: a year of history and the nightly run (SQLite, c = 64, L = 50 ms), median of {len(by['month-1'])}")
print(f"  {'state':<10}{'audit rows':>11}{'notifs':>9}{'runs':>6}{'file MB':>9}{'live MB':>9}{'wall s':>8}{'own s':>7}{'CPU s':>7}{'requests':>9}{'pruned':>8}{'report s':>9}{'rep. MB':>8}")
for s, rs in by.items():
    if not rs: continue
    r = rs[0]
    print(f"  {s:<10}{int(r['audit_rows']):>11,}{int(r['notifications']):>9,}{int(r['runs']):>6}{med(rs, 'file_mb'):>9.0f}{med(rs, 'live_mb'):>9.0f}"
          f"{med(rs, 'wall_s'):>8.2f}{med(rs, 'own_s'):>7.2f}{med(rs, 'cpu_s'):>7.2f}{med(rs, 'requests'):>9.0f}{med(rs, 'pruned'):>8.0f}"
          f"{med(rs, 'report_s'):>9.2f}{med(rs, 'report_rss_mb'):>8.0f}")
first = by["month-1"]
for s in ("month-12", "pruned"):
    if by[s] and first:
        print(f"  {s} ÷ month-1: night wall {med(by[s], 'wall_s') / med(first, 'wall_s'):.2f}×, CPU {med(by[s], 'cpu_s') / med(first, 'cpu_s'):.2f}×, "
              f"requests {med(by[s], 'requests') / med(first, 'requests'):.2f}×, report {med(by[s], 'report_s') / med(first, 'report_s'):.2f}×")
if by["pruned"] and by["pruned"][0]["prune_s"]:
    print(f"  the first prune of nine months of history: {float(by['pruned'][0]['prune_s']):.1f} s")
PY
  [ -n "${year_night_prune:-}" ] && echo "  tonight's prune alone, on a copy of the pruned database: $year_night_prune"
  return 0
}
