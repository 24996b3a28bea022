# The report case of Scripts/bench.sh (sourced by it): `status-poller report` over a synthetic
# audit trail of SUBSCRIPTIONS subscriptions with 10 events each, on SQLite and on PostgreSQL.
#
#   The trail (plain SQL, in the database itself): each subscription is verified once, then has an
#   event a month for nine months, in time order across subscriptions (a month touches every
#   subscription once, as nights do): renewals, billing retries with and without a grace period,
#   recoveries, auto-renew turned off, expiries, refunds and upgrades in a fixed mix; one
#   subscription in 50 is Sandbox; one event in four came by notification (with its stored
#   notification, and when Apple's data in it was true on the audit row, as the writers keep it
#   since SQLite v21 / PostgreSQL v19), the rest by a poll. The JSON columns are the contract
#   columns as the writers store them, and so are the report's columns beside them (since SQLite
#   v22 / PostgreSQL v20). The ledger holds one transaction per
#   event (the first a free trial, then monthly periods, a year for an upgrade, refunds where the
#   trail has them; USD, EUR or JPY by subscription), so the report's revenue sums read 10 rows a
#   subscription too; each audit row names its transaction, and a recovery's is marked in the ledger.
#   Then `status-poller report --format json` (release) over the whole span, timed by GNU time:
#   wall seconds and peak RSS. Targets (issue 25): 1,000,000 subscriptions and 10,000,000 events
#   in ≤ 60 s and ≤ 300 MB peak RSS, on SQLite and PostgreSQL. --quick: 100,000 subscriptions,
#   1,000,000 events, SQLite only.
#   Checked: the report's JSON counts every synthetic episode the SQL predicts (each retry event
#   opens one), each month's MRR movement is the MRR at its end minus the month before's, and the
#   two stores' reports agree number for number (full run).

report_t0_ms=1767225600000   # 2026-01-01T00:00:00Z
report_day_ms=86400000

# report_state_json DIALECT AT R S: the contract columns after an event of kind R (see below) at
# AT of subscription S, as a JSON text expression of DIALECT (sqlite | postgres). Kinds: -1 first
# verified; 0–11 renewed; 12 entered grace; 13 entered billing retry; 14–15 recovered; 16
# auto-renew off; 17 expired (voluntary, a month back: after a retry, the episode is lost);
# 18 refunded; 19 upgraded.
report_state_json() {
  local dialect="$1" at="$2" r="$3" s="$4" object bool_t bool_f text
  if [ "$dialect" = sqlite ]; then object="json_object"; bool_t="json('true')"; bool_f="json('false')"; text="CAST(1000000000 + $s AS TEXT)"
  else object="json_build_object"; bool_t="true"; bool_f="false"; text="(1000000000 + $s)::text"; fi
  report_state_values "$dialect" "$at" "$r" "$s"
  cat <<SQL
$object('original_transaction_id', $text, 'product_id', CASE WHEN $r = 19 THEN 'premium.yearly' ELSE 'premium.monthly' END,
  'environment', $report_environment, 'expires_at', $report_expires_at, 'grace_period_expires_at', $report_grace_period_expires_at,
  'is_in_billing_retry', CASE WHEN $report_is_in_billing_retry = 1 THEN $bool_t ELSE $bool_f END,
  'auto_renew_status', CASE WHEN $report_auto_renew_status = 1 THEN $bool_t ELSE $bool_f END,
  'auto_renew_product_id', 'premium.monthly', 'expiration_intent', $report_expiration_intent, 'cancelled_at', $report_cancelled_at)
SQL
}

# report_state_values DIALECT AT R S: sets report_<column> to the SQL of each contract column the
# report reads after an event of kind R, flags as 0/1 (report_state_json's values).
report_state_values() {
  local dialect="$1" at="$2" r="$3" s="$4" d="$report_day_ms"
  [ "$dialect" = postgres ] && d="$d::bigint"
  report_environment="CASE WHEN $s % 50 = 0 THEN 'Sandbox' ELSE 'Production' END"
  report_expires_at="CASE WHEN $r IN (12, 13) THEN $at - 3600000 WHEN $r = 16 THEN $at + 20 * $d WHEN $r = 17 THEN $at - 31 * $d
    WHEN $r = 18 THEN $at + 10 * $d ELSE $at + 30 * $d END"
  report_grace_period_expires_at="CASE WHEN $r = 12 THEN $at + 6 * $d END"
  report_is_in_billing_retry="CASE WHEN $r IN (12, 13) THEN 1 ELSE 0 END"
  report_auto_renew_status="CASE WHEN $r IN (16, 17) THEN 0 ELSE 1 END"
  report_expiration_intent="CASE WHEN $r IN (12, 13) THEN 2 WHEN $r = 17 THEN 1 END"
  report_cancelled_at="CASE WHEN $r = 18 THEN $at - 3600000 END"
}

# report_state_columns DIALECT AT R S: the audit row's report columns after an event of kind R
# (environment, verified, then report_state_values' in the order the writers' migration adds them).
report_state_columns() {
  report_state_values "$@"
  echo "$report_environment, 1, $report_expires_at, $report_grace_period_expires_at, $report_is_in_billing_retry,
    $report_auto_renew_status, $report_expiration_intent, $report_cancelled_at"
}

# report_trail_sql DIALECT SUBSCRIPTIONS: the SQL that loads the synthetic trail into a migrated database.
report_trail_sql() {
  local dialect="$1" n="$2" d="$report_day_ms" t0="$report_t0_ms" series_s series_k unverified
  unverified='{"auto_renew_product_id":null,"auto_renew_status":null,"cancelled_at":null,"environment":null,"expiration_intent":null,"expires_at":null,"grace_period_expires_at":null,"is_in_billing_retry":false,"original_transaction_id":null,"product_id":null}'
  if [ "$dialect" = sqlite ]; then
    series_s="WITH RECURSIVE n(s) AS (SELECT 1 UNION ALL SELECT s + 1 FROM n WHERE s < $n)"
    series_k="k(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM k WHERE k < 9)"
    echo "PRAGMA synchronous = OFF;"
  else
    series_s="WITH n(s) AS (SELECT generate_series(1::bigint, $n))"
    series_k="k(k) AS (SELECT generate_series(0::bigint, 9))"
  fi
  # r of (s, k): -1 for k = 0, else ((7919 s + 104729 k) mod 10007) × ((31 s + 17 k) mod 101)
  # mod 20, a mix in which any kind may follow a retry; the previous event's the same with k − 1.
  local at="($t0 + (k * 30 + s % 30) * $d + (s % 86400) * 1000)"
  local prev_at="($t0 + ((k - 1) * 30 + s % 30) * $d + (s % 86400) * 1000)"
  local r="(CASE WHEN k = 0 THEN -1 ELSE ((7919 * s + 104729 * k) % 10007) * ((31 * s + 17 * k) % 101) % 20 END)"
  local prev_r="(CASE WHEN k <= 1 THEN -1 ELSE ((7919 * s + 104729 * (k - 1)) % 10007) * ((31 * s + 17 * (k - 1)) % 101) % 20 END)"
  local reason="CASE WHEN $r = -1 THEN 'first_verified' WHEN $r < 12 THEN 'renewed' WHEN $r = 12 THEN 'entered_grace'
    WHEN $r = 13 THEN 'entered_billing_retry' WHEN $r < 16 THEN 'recovered' WHEN $r = 16 THEN 'auto_renew_off' WHEN $r = 17 THEN 'expired'
    WHEN $r = 18 THEN 'refunded' ELSE 'upgraded' END"
  local cast_text="" otid="CAST(1000000000 + s AS TEXT)"
  [ "$dialect" = postgres ] && { cast_text="::text"; otid="(1000000000 + s)::text"; }
  # SQLite walks `FROM k, n` with k outside, already in (k, s) order; PostgreSQL is told.
  local order=""; [ "$dialect" = postgres ] && order="ORDER BY k, s"
  cat <<SQL
BEGIN;
INSERT INTO subscriptions (id, user_id, latest_receipt, original_transaction_id, environment)
$series_s
SELECT s, 'u' || s, 'R', $otid, CASE WHEN s % 50 = 0 THEN 'Sandbox' ELSE 'Production' END FROM n;
INSERT INTO app_store_notifications (notification_id, version, type, signed_at, apple_state_at, environment, source, received_at, outcome, subscription_id)
$series_s, $series_k
SELECT 'n' || s || '-' || k, 2, 'DID_RENEW', $at - (s % 7) * 1000, $at - (s % 7) * 1000,
  CASE WHEN s % 50 = 0 THEN 'Sandbox' ELSE 'Production' END, 'push', $at, 'applied', s
FROM k, n WHERE (s + k) % 4 = 0;
INSERT INTO subscription_events (subscription_id, user_id, at, reason, entitlement_before, entitlement_after, old_values, new_values, source, notification_id,
  transaction_id, apple_state_at, environment, verified, expires_at, grace_period_expires_at, is_in_billing_retry, auto_renew_status, expiration_intent,
  cancelled_at)
$series_s, $series_k
SELECT s, 'u' || s, $at, $reason, '-', '-',
  CASE WHEN k = 0 THEN '$unverified' ELSE ($(report_state_json "$dialect" "$prev_at" "$prev_r" s))$cast_text END,
  ($(report_state_json "$dialect" "$at" "$r" s))$cast_text,
  CASE WHEN (s + k) % 4 = 0 THEN 'notification' ELSE 'poll' END, CASE WHEN (s + k) % 4 = 0 THEN 'n' || s || '-' || k END,
  (s * 10 + k)$cast_text, CASE WHEN (s + k) % 4 = 0 THEN $at - (s % 7) * 1000 END,
  $(report_state_columns "$dialect" "$at" "$r" s)
FROM k, n $order;
INSERT INTO subscription_transactions (transaction_id, original_transaction_id, subscription_id, product_id, environment, purchased_at, expires_at,
  revoked_at, revocation_reason, revocation_type, is_upgraded, price, currency, offer_type, offer_discount_type, as_of, first_source, first_seen_at, updated_at,
  billing_recovery)
$series_s, $series_k
SELECT (s * 10 + k)$cast_text, $otid, s, CASE WHEN $r = 19 THEN 'premium.yearly' ELSE 'premium.monthly' END,
  CASE WHEN s % 50 = 0 THEN 'Sandbox' ELSE 'Production' END, $at, $at + CASE WHEN $r = 19 THEN 365 ELSE 30 END * CAST($d AS BIGINT),
  CASE WHEN $r = 18 THEN $at + 5 * $d END, CASE WHEN $r = 18 THEN 1 END, CASE WHEN $r = 18 THEN 'REFUND_FULL' END, 0,
  CASE WHEN k = 0 THEN 0 WHEN $r = 19 THEN 99990 ELSE 9990 END, CASE s % 3 WHEN 0 THEN 'USD' WHEN 1 THEN 'EUR' ELSE 'JPY' END,
  CASE WHEN k = 0 THEN 1 END, CASE WHEN k = 0 THEN 'FREE_TRIAL' END, $at, 'poll', $at, $at, CASE WHEN $r IN (14, 15) THEN 1 END
FROM k, n $order;
COMMIT;
SQL
}

# report_run STORE DATABASE SUBSCRIPTIONS: times one report; appends a line to $report_csv.
report_run() {
  local store="$1" database="$2" n="$3" out="$work/report-$1.json" timing="$logs/report-$1.time" rc=0
  local to; to=$(date -u -d "@$(((report_t0_ms + 330 * report_day_ms) / 1000))" +%Y-%m-%d)
  say "report ($store): $n subscriptions, $((n * 10)) events"
  PGPASSWORD="${pg_poller_password:-}" /usr/bin/time -f "%e %M %U %S" -o "$timing" "$poller_bin" report --database "$database" --format json --output "$out" \
    --from 2026-01-01 --to "$to" --environment all 2> "$logs/report-$store.err" || rc=$?
  read -r wall rss user sys < "$timing"
  "$py" - "$store" "$n" "$rc" "$wall" "$rss" "$user" "$sys" "$out" "$work/report-sqlite.json" >> "$report_csv" <<'PY'
import json, sys
store, n, rc, wall, rss, user, sys_s, path, sqlite_path = sys.argv[1:]
n = int(n)
# Episodes the SQL opens: an event of kind 12 or 13 (grace, retry) opens one unless one is open;
# every later event closes it (a later expiry, or the refund).
expected = 0
for s in range(1, n + 1):
    is_open = False
    for k in range(1, 10):
        r = ((7919 * s + 104729 * k) % 10007) * ((31 * s + 17 * k) % 101) % 20
        if is_open:
            is_open = False
        elif r in (12, 13):
            is_open = True
            expected += 1
report = json.load(open(path)) if rc == "0" else {"episodes": {"total": -1}}
episodes = report["episodes"]["total"]
checked = episodes == expected
if rc == "0":
    # MRR's movement in a month is its MRR at the month's end minus the month before's, exactly.
    revenue = report["revenue"]
    mrr = {(m["at"][:7], m["currency"]): m["milliunits"] for m in revenue["monthly_recurring_revenue"]}
    months = sorted({month for month, _ in mrr})
    for line in revenue["mrr_movement"]:
        month = line["month"][:7]
        if month in months[1:]:
            before = months[months.index(month) - 1]
            checked = checked and line["net_milliunits"] == mrr.get((month, line["currency"]), 0) - mrr.get((before, line["currency"]), 0)
    checked = checked and len(revenue["mrr_movement"]) > 0
if store != "sqlite" and rc == "0":
    # The same trail on both stores: the same report, number for number.
    sqlite = json.load(open(sqlite_path))
    checked = checked and {k: v for k, v in report.items() if k != "generated_at"} == {k: v for k, v in sqlite.items() if k != "generated_at"}
print(f"{store},{n},{n * 10},{rc},{wall},{int(rss) // 1024},{user},{sys_s},{episodes},{expected},{int(checked)}")
PY
}

report_case() {
  local n="$1" with_postgres="$2" database="$work/report.sqlite" t0
  report_csv="$results/$stamp-report.csv"
  echo "store,subscriptions,events,exit_code,wall_s,max_rss_mb,user_s,sys_s,episodes,expected_episodes,checked" > "$report_csv"
  "$poller_bin" migrate --database "$database" > /dev/null
  t0=$(date +%s)
  report_trail_sql sqlite "$n" | sqlite3 "$database"
  # The load's 10 GB on their way to disk are not the report's work: a live database is not
  # being bulk-loaded while its report runs (before this, the report ran ~5 s slower right after it).
  sync
  say "  SQLite trail loaded in $(($(date +%s) - t0)) s, $(du -m "$database" | cut -f1) MB"
  report_run sqlite "$database" "$n"
  rm -f "$database"*
  if [ "$with_postgres" -eq 1 ]; then
    postgres_start
    PGPASSWORD="$pg_poller_password" "$poller_bin" migrate --database "$pg_url" > /dev/null
    t0=$(date +%s)
    report_trail_sql postgres "$n" | pg_psql
    # A table loaded at once has no statistics until autovacuum's next round, which a live one has had.
    pg_admin -c "VACUUM ANALYZE subscription_events" -c "VACUUM ANALYZE subscription_transactions" -c "CHECKPOINT" > /dev/null
    sync
    say "  PostgreSQL trail loaded in $(($(date +%s) - t0)) s"
    report_run postgres "$pg_url" "$n"
    postgres_cleanup
  fi
  print_report_table
}

print_report_table() {
  [ -n "${report_csv:-}" ] && [ -f "$report_csv" ] || return 0
  "$py" - "$report_csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("\nreport (status-poller report --format json over the synthetic trail; targets at 10,000,000 events: ≤ 60 s, ≤ 300 MB (issue 25),")
print("  ≤ 30 s, ≤ 200 MB (issue 50)):")
print(f"  {'store':<10} {'events':>11} {'wall s':>7} {'of 60 s':>8} {'of 30 s':>8} {'peak MB':>8} {'of 300':>7} {'of 200':>7} {'cpu s':>7} {'episodes':>9} checked")
for r in rows:
    cpu = float(r["user_s"]) + float(r["sys_s"])
    print(f"  {r['store']:<10} {int(r['events']):>11,} {float(r['wall_s']):>7.1f} {float(r['wall_s']) / 60:>8.2f} {float(r['wall_s']) / 30:>8.2f} "
          f"{int(r['max_rss_mb']):>8} {int(r['max_rss_mb']) / 300:>7.2f} {int(r['max_rss_mb']) / 200:>7.2f} {cpu:>7.1f} {r['episodes']:>9} "
          f"{'yes' if r['checked'] == '1' else 'NO'}")
PY
}
