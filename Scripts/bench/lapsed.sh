# The lapsed case of Scripts/bench.sh (sourced by it): what the lapsed sweep buys and costs, with
# the issue's own set-up — `status-poller-demo demo` with 1,000 subscribers (seed 7), 90 nights, no
# faults, and every purchase after the first made outside the app (`--rate
# resubscribe_outside_app=1`: no receipt upload at all) — played twice:
#   lapsed-off   --lapsed-every 0 (the poller before the sweep; the demo fails, as it should);
#   lapsed-7     the default sweep (every 7 days, within 180 days of expiry);
# then the same two with `--notifications --backend server-api` (notified-off, notified-7): where a
# gapless notification history covers a lapsed row, a comeback arrives as a notification and the
# sweep leaves the row out (the freshness rule), so the sweep's extra requests are near zero.
# Reported: paying users locked out after the last night (Apple entitles them, the row does not),
# requests sent to the App Store over the 90 nights, rows asked only on their sweep turn, and how
# long each resubscription outside the app went unseen (p50/p95/max, simulated days).
# Targets: locked out ≤ 1 % of rows; requests ≤ 1.6 × the run without the sweep.

lapsed_case() {
  local spec name every out rc
  say "lapsed: demo, 1,000 subscribers, seed 7, 90 nights without faults, no receipt uploads; the sweep off, then every 7 days"
  for spec in "lapsed-off:0" "lapsed-7:7" "notified-off:0" "notified-7:7"; do
    name="${spec%%:*}" every="${spec#*:}" out="$logs/$name.out" rc=0
    local notified=()
    [[ "$name" == notified-* ]] && notified=(--notifications --backend server-api)
    "$(demo_binary_of "$poller_bin")" demo --database "$work/$name.sqlite" --subscribers 1000 --nights 90 --seed 7 --fault-rate 0 \
      --rate resubscribe_outside_app=1 --lapsed-every "$every" "${notified[@]}" > "$out" 2>&1 || rc=$?
    printf '    %-11s exit %d: %s\n' "$name" "$rc" "$(grep -E '^Paying users locked out' "$out" || echo 'no summary')" >&2
    rm -f "$work/$name".sqlite*
  done
  print_lapsed_table
}

# print_lapsed_table: the two demos' summaries side by side, and the targets' ratios.
print_lapsed_table() {
  "$py" - "$logs/lapsed-off.out" "$logs/lapsed-7.out" "$logs/notified-off.out" "$logs/notified-7.out" <<'PY'
import os, re, sys
def read(path):
    if not os.path.exists(path): return None
    text = open(path).read()
    # A demo with notifications prints the polling play's summary, then the notified play's: the last counts.
    def number(pattern):
        found = re.findall(pattern, text)
        return int(found[-1].replace(",", "")) if found else None
    lags = re.findall(r"seen in their row after p50 ([\d.]+ d|–), p95 ([\d.]+ d|–), max ([\d.]+ d|–)", text)
    lag = lags[-1] if lags else None
    return {
        "rows": number(r"/ ([\d,]+) subscriptions agree"),
        "locked": number(r"Paying users locked out[^:]*: (\d+) after the last night"),
        "requests": number(r"Requests to the App Store over the nights: ([\d,]+)"),
        "lapsed": number(r"only on their turn in the lapsed sweep: ([\d,]+)"),
        "comebacks": number(r"Resubscriptions outside the app \(no receipt upload\): (\d+)"),
        "lag": lag if lag else ("?", "?", "?"),
    }
def table(title, off, on, target):
    if not (off and on and off["requests"] and on["requests"]): return
    print(f"\nlapsed{title}: demo --subscribers 1000 --seed 7 --nights 90 --fault-rate 0 --rate resubscribe_outside_app=1")
    print(f"  {'sweep':<22}{'rows':>6}{'locked out':>12}{'share':>8}{'requests':>10}{'× off':>7}{'on turn':>9}{'comebacks':>10}   unseen for p50 / p95 / max")
    for label, r in (("off (--lapsed-every 0)", off), ("every 7 days", on)):
        rows = r["rows"] or 0
        share = f"{100 * r['locked'] / rows:.1f} %" if rows and r["locked"] is not None else "?"
        print(f"  {label:<22}{rows:>6}{r['locked']:>12}{share:>8}{r['requests']:>10,}{r['requests'] / off['requests']:>7.2f}{r['lapsed'] or 0:>9,}{r['comebacks'] or 0:>10}   {' / '.join(r['lag'])}")
    print(f"  targets: {target}")
table("", read(sys.argv[1]), read(sys.argv[2]), "locked out ≤ 1 % of rows with the sweep; requests ≤ 1.60 × off")
table(", notified (--notifications --backend server-api; the notified play)", read(sys.argv[3]), read(sys.argv[4]),
      "the sweep's extra requests near zero: rows a gapless history covers are fresh")
PY
}
