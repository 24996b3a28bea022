#!/usr/bin/env python3
"""The postgres bench case's arithmetic (Scripts/bench/postgres.sh):

  postgres_report.py read-stats DIR FROM_NS TO_NS
      "reads errors p50_ms p99_ms max_ms" of the pgbench reads logged in DIR that ended in
      [FROM, TO] (all of them when FROM is 0); errors count every chunk's failed reads, aborted
      clients and exits other than 0.
  postgres_report.py table CSV
      the medians-of-repetitions table of a run's postgres CSV.
"""
import csv
import glob
import math
import os
import re
import statistics
import sys


def read_stats(argv):
    d, lo, hi = argv[0], int(argv[1]) // 1000, int(argv[2]) // 1000
    lat = []
    for path in glob.glob(os.path.join(d, "reads-*")):
        for line in open(path):
            f = line.split()
            if len(f) < 6 or not f[2].isdigit():
                continue  # a failed or skipped read: counted from the summaries below
            end = int(f[4]) * 1_000_000 + int(f[5])
            if lo == 0 or lo <= end <= hi:
                lat.append(int(f[2]) / 1000)
    errors = 0
    for path in glob.glob(os.path.join(d, "chunk-*.out")):
        m = re.search(r"number of failed transactions: (\d+)", open(path).read())
        errors += int(m.group(1)) if m else 1
    for path in glob.glob(os.path.join(d, "chunk-*.err")):
        errors += sum(1 for line in open(path) if "aborted" in line or "ERROR" in line)
    for path in glob.glob(os.path.join(d, "chunk-*.rc")):
        errors += 0 if open(path).read().strip() == "0" else 1
    lat.sort()
    def pct(p):
        return lat[max(0, math.ceil(p / 100 * len(lat)) - 1)] if lat else float("nan")
    print(len(lat), errors, f"{pct(50):.2f}", f"{pct(99):.2f}", f"{lat[-1] if lat else float('nan'):.2f}")


def table(argv):
    rows = list(csv.DictReader(open(argv[0])))
    runs = [r for r in rows if r["kind"] == "run"]
    if not runs:
        return
    f = lambda r, k: float(r[k]) if r[k] not in ("", None) else float("nan")
    med = lambda xs: statistics.median(xs) if xs else float("nan")
    c, l, n, due = int(runs[0]["concurrency"]), int(runs[0]["latency_ms"]), int(runs[0]["table_rows"]), int(runs[0]["due"])
    reps = max(int(r["rep"]) for r in runs)
    per = c / (l / 1000)
    print(f"\npostgres: {due:,} due among {n:,} rows, c = {c} per worker, L = {l} ms (bound {per:,.0f} rows/s per worker), median of {reps}")
    print(f"  {'workers':<9}{'wall s':>8}{'rows/s':>8}{'bound':>7}{'of bound':>9}{'speed-up':>9}{'CPU s/worker':>13}"
          f"{'CPU s/1k: workers':>18}{'PostgreSQL':>11}{'stand-in':>9}{'cores busy':>11}{'load avg (1 min)':>17}")
    rate = {}
    for w in (1, 4):
        rs = [r for r in runs if int(r["workers"]) == w]
        if not rs:
            continue
        for r in rs:
            rate[(w, r["rep"])] = due / f(r, "wall_s")
        cpu = med([(f(r, "worker_user_s") + f(r, "worker_sys_s")) for r in rs])
        speed = med([rate[(4, r["rep"])] / rate[(1, r["rep"])] for r in rs if (1, r["rep"]) in rate and (4, r["rep"]) in rate]) if w == 4 else float("nan")
        r_med = med([rate[(w, r["rep"])] for r in rs])
        print(f"  {w:<9}{med([f(r, 'wall_s') for r in rs]):>8.2f}{r_med:>8,.0f}{w * per:>7,.0f}{r_med / (w * per):>9.2f}"
              f"{'' if w == 1 else f'{speed:.2f}×':>9}{cpu / w:>13.2f}{cpu / due * 1000:>18.2f}"
              f"{med([f(r, 'pg_cpu_s') for r in rs]) / due * 1000:>11.2f}{med([f(r, 'standin_cpu_s') for r in rs]) / due * 1000:>9.2f}"
              f"{med([(f(r, 'worker_user_s') + f(r, 'worker_sys_s') + f(r, 'pg_cpu_s') + f(r, 'standin_cpu_s')) / f(r, 'wall_s') for r in rs]):>11.2f}"
              f"{', '.join(sorted({r['load1'] for r in rs})):>17}")
    print(f"\n  the web service's reads (pgbench as webservice, 200/s, 4 clients, TLS, prepared), median of {reps}")
    print(f"  {'beside':<12}{'reads':>7}{'p50 ms':>8}{'p99 ms':>8}{'max ms':>8}{'errors':>7}")
    for label, sel in (("nothing", lambda r: r["kind"] == "reads-alone"), ("1 worker", lambda r: r["kind"] == "run" and r["workers"] == "1"),
                       ("4 workers", lambda r: r["kind"] == "run" and r["workers"] == "4")):
        rs = [r for r in rows if sel(r)]
        if rs:
            print(f"  {label:<12}{med([f(r, 'reads') for r in rs]):>7,.0f}{med([f(r, 'read_p50_ms') for r in rs]):>8.2f}"
                  f"{med([f(r, 'read_p99_ms') for r in rs]):>8.2f}{max(f(r, 'read_max_ms') for r in rs):>8.2f}{sum(int(f(r, 'read_errors')) for r in rs):>7}")
    print("  (max and errors: over all repetitions; cores busy: the workers', PostgreSQL's and the stand-in's CPU ÷ wall)")


if __name__ == "__main__":
    {"read-stats": read_stats, "table": table}[sys.argv[1]](sys.argv[2:])
