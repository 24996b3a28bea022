#!/usr/bin/env python3
"""The web service beside a run (issue 11), driven by Scripts/beside-test.sh; see that script for
the options.

A database of ROWS new subscriptions (as the web service inserts them: a user_id and a 3 KB
receipt) and the lean verifyReceipt stand-in (`status-poller-demo simulate --lean`). While
`status-poller run` verifies and writes every row, separate processes do what the web service
does, each on its own connection with WAL (the database's mode) and the busy timeout of the
README's database contract ("every connection uses ... a 10 s busy timeout"):

- readers: `SELECT is_entitled, state, ... FROM entitlements WHERE user_id = ?` for random
  users, in a loop;
- an enroller: `INSERT INTO subscriptions (user_id, latest_receipt) VALUES (?, ?)` (the
  contract's enrolment), one autocommit statement per new subscriber, every 0–10 ms.

Every error is counted, SQLITE_BUSY / "database is locked" separately. Exit 1 on any error, on a
poller exit code other than 0, or when a row the run selected was not written.
"""

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import say  # noqa: E402

READ_SQL = ("SELECT subscription_id, is_entitled, state, product_id, expires_at, grace_period_expires_at "
            "FROM entitlements WHERE user_id = ?")
ENROL_SQL = "INSERT INTO subscriptions (user_id, latest_receipt) VALUES (?, ?)"


def is_busy(error):
    text = str(error).lower()
    code = getattr(error, "sqlite_errorcode", None)  # Python 3.11+
    return code in (5, 6) or "locked" in text or "busy" in text  # SQLITE_BUSY, SQLITE_LOCKED


def record_error(stats, error, started):
    """One failed statement: its latency, and whether SQLite said busy/locked or something else."""
    stats["latencies_ms"].append((time.perf_counter() - started) * 1000)
    stats["errors"] += 1
    if is_busy(error):
        stats["busy_errors"] += 1
    else:
        key = f"{type(error).__name__}: {error}"
        stats["other_errors"][key] = stats["other_errors"].get(key, 0) + 1


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


# --- the web service's processes -------------------------------------------------------------------
def worker(o):
    """One reader or the enroller, until the stop file appears; writes its figures as JSON."""
    rng = random.Random(o.seed)
    stats = {"role": o.role, "done": 0, "errors": 0, "busy_errors": 0, "other_errors": {}, "latencies_ms": [],
             "empty_reads": 0, "busy_timeout_ms": o.busy_timeout_ms}
    connection = None
    try:
        connection = sqlite3.connect(o.database, timeout=o.busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False)
        connection.execute(f"PRAGMA busy_timeout = {o.busy_timeout_ms}")
        mode = connection.execute("PRAGMA journal_mode").fetchone()[0]
        stats["journal_mode"] = mode
    except sqlite3.Error as error:
        stats["errors"] += 1
        stats["other_errors"][f"connect: {error}"] = 1
    enrolled = 0
    receipt_body = "".join(rng.choice("0123456789abcdef") for _ in range(3058))
    open(o.ready_file, "w").close()
    while connection is not None and not os.path.exists(o.stop_file):
        if o.role == "reader":
            user = f"{o.user_prefix}{rng.randint(1, o.rows)}"
            started = time.perf_counter()
            try:
                rows = connection.execute(READ_SQL, (user,)).fetchall()
                stats["latencies_ms"].append((time.perf_counter() - started) * 1000)
                stats["done"] += 1
                if not rows:
                    stats["empty_reads"] += 1
            except sqlite3.Error as error:
                record_error(stats, error, started)
            if o.pause_ms:
                time.sleep(o.pause_ms / 1000)
        else:
            enrolled += 1
            user = f"web-user-{o.seed}-{enrolled}"
            receipt = "MIIT" + f"{9_000_000_000 + enrolled:010d}" + receipt_body
            started = time.perf_counter()
            try:
                connection.execute(ENROL_SQL, (user, receipt))
                stats["latencies_ms"].append((time.perf_counter() - started) * 1000)
                stats["done"] += 1
            except sqlite3.Error as error:
                record_error(stats, error, started)
            time.sleep(rng.uniform(0, o.pause_ms / 1000))
    if connection is not None:
        connection.close()
    with open(o.result_file, "w") as f:
        json.dump(stats, f)


# --- the driver --------------------------------------------------------------------------------------
def make_database(binary, path, rows):
    """ROWS new subscriptions, as the web service inserts them (the user_id and a 3 KB receipt)."""
    harness.migrate(binary, path)
    connection = harness.connect(path)
    try:
        connection.execute("BEGIN IMMEDIATE")
        connection.execute(f"""
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows})
            INSERT INTO subscriptions (user_id, latest_receipt)
            SELECT 'beside-user-' || i, 'MIIT' || printf('%010d', i) || hex(randomblob(1529)) FROM n""")
        connection.execute("COMMIT")
    finally:
        connection.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--role", choices=["driver", "reader", "enroller"], default="driver")
    ap.add_argument("--binary")
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--latency-ms", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--readers", type=int, default=1)
    ap.add_argument("--busy-timeout-ms", type=int, default=10000)
    ap.add_argument("--read-pause-ms", type=float, default=0.0)
    ap.add_argument("--enrol-pause-ms", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--keep", action="store_true")
    # worker-only
    ap.add_argument("--database")
    ap.add_argument("--stop-file")
    ap.add_argument("--ready-file")
    ap.add_argument("--result-file")
    ap.add_argument("--user-prefix", default="beside-user-")
    ap.add_argument("--pause-ms", type=float, default=0.0)
    o = ap.parse_args()
    if o.role != "driver":
        return worker(o)

    work = tempfile.mkdtemp(prefix="beside-test-")
    database = os.path.join(work, "beside.sqlite")
    stop_file = os.path.join(work, "stop")
    started_all = time.monotonic()
    failures = []
    workers, standin, poller = [], None, None
    harness.interrupt_on_sigterm()
    ok = False
    try:
        say(f"{o.rows:,} new subscriptions with 3 KB receipts in {database}")
        make_database(o.binary, database, o.rows)
        standin = harness.Simulator(o.binary, work, ["--lean", "--latency", f"fixed:{o.latency_ms}ms", "--bundle-id", harness.BUNDLE_ID], name="standin")

        # The web service: readers and an enroller, each its own process and connection.
        me = os.path.abspath(__file__)
        roles = [("reader", i) for i in range(o.readers)] + [("enroller", 0)]
        for role, i in roles:
            tag = f"{role}-{i}"
            pause = o.read_pause_ms if role == "reader" else o.enrol_pause_ms
            command = [sys.executable, me, "--role", role, "--database", database, "--stop-file", stop_file,
                       "--ready-file", os.path.join(work, f"{tag}.ready"), "--result-file", os.path.join(work, f"{tag}.json"),
                       "--rows", str(o.rows), "--busy-timeout-ms", str(o.busy_timeout_ms), "--pause-ms", str(pause),
                       "--seed", str(o.seed * 100 + len(workers))]
            workers.append((tag, subprocess.Popen(command)))
        deadline = time.monotonic() + 30
        while not all(os.path.exists(os.path.join(work, f"{tag}.ready")) for tag, _ in workers):
            if time.monotonic() > deadline or any(p.poll() is not None for _, p in workers):
                raise RuntimeError("the web service's processes did not start")
            time.sleep(0.05)
        time.sleep(0.5)  # the web service is busy before the run starts

        say(f"status-poller run over {o.rows:,} rows (stand-in latency {o.latency_ms} ms, concurrency {o.concurrency}) "
            f"beside {o.readers} reader(s) and an enroller, busy_timeout {o.busy_timeout_ms} ms")
        now_ms = int(time.time()) * 1000
        command = harness.poller_command(o.binary, ["run"], database, standin, now_ms, o.concurrency)
        run_started = time.monotonic()
        with open(os.path.join(work, "poller.out"), "w") as out, open(os.path.join(work, "poller.err"), "w") as err:
            poller = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=harness.poller_env())
            rc = poller.wait()
        run_seconds = time.monotonic() - run_started
        time.sleep(0.5)  # and after it
        open(stop_file, "w").close()
        for tag, p in workers:
            if p.wait(60) != 0:
                failures.append(f"{tag} exited {p.returncode}")

        # The run itself.
        report = {}
        try:
            report = json.loads(open(os.path.join(work, "poller.out")).read())
        except ValueError:
            failures.append("the poller printed no JSON report")
        poller_err = open(os.path.join(work, "poller.err")).read()
        poller_busy = sum(1 for line in poller_err.splitlines() if "locked" in line.lower() or "busy" in line.lower())
        if rc != 0:
            failures.append(f"the poller exited {rc}: {poller_err[-1500:]}")
        with harness.opened(database) as c:
            unwritten = c.execute("SELECT count(*) FROM subscriptions WHERE user_id LIKE 'beside-user-%' AND original_transaction_id IS NULL").fetchone()[0]
            enrolled_rows = c.execute("SELECT count(*) FROM subscriptions WHERE user_id LIKE 'web-user-%'").fetchone()[0]
            integrity = c.execute("PRAGMA integrity_check").fetchall()
        # The run selects the rows due when it starts: the ROWS rows and whatever the enroller added before.
        if report and not (report.get("selected", 0) >= o.rows and report.get("verified", 0) + report.get("failed", 0) == report.get("selected")):
            failures.append(f"the run selected {report.get('selected')} rows (at least {o.rows} were due), verified {report.get('verified')}, failed {report.get('failed')}")
        if unwritten:
            failures.append(f"{unwritten} of the {o.rows} rows were not written by the run")
        if report.get("failed_by_reason", {}).get("store_error"):
            failures.append(f"the run could not write {report['failed_by_reason']['store_error']} rows (store_error)")
        if integrity != [("ok",)]:
            failures.append(f"PRAGMA integrity_check: {integrity[:5]}")

        results = {tag: json.load(open(os.path.join(work, f"{tag}.json"))) for tag, _ in workers}
        readers = [r for r in results.values() if r["role"] == "reader"]
        enroller = [r for r in results.values() if r["role"] == "enroller"][0]
        reads = sum(r["done"] for r in readers)
        read_errors = sum(r["errors"] for r in readers)
        read_busy = sum(r["busy_errors"] for r in readers)
        read_lat = [x for r in readers for x in r["latencies_ms"]]
        enrol_lat = enroller["latencies_ms"]
        other = {}
        for r in results.values():
            for k, v in r["other_errors"].items():
                other[f"{r['role']}: {k}"] = other.get(f"{r['role']}: {k}", 0) + v
        if enrolled_rows != enroller["done"]:
            failures.append(f"the enroller inserted {enroller['done']} subscribers; the table holds {enrolled_rows}")
        if read_errors:
            failures.append(f"{read_errors} reader errors ({read_busy} SQLITE_BUSY/locked)")
        if enroller["errors"]:
            failures.append(f"{enroller['errors']} enroller errors ({enroller['busy_errors']} SQLITE_BUSY/locked)")
        for k, v in other.items():
            failures.append(f"{v} × {k}")

        print()
        print(f"beside test: status-poller run over {o.rows:,} rows in {run_seconds:.1f} s (its own: {report.get('duration_seconds')} s), "
              f"exit {rc}, selected {report.get('selected')}, verified {report.get('verified')}, failed {report.get('failed')}, {unwritten} rows unwritten; "
              f"{poller_busy} 'locked'/'busy' lines in its log")
        print(f"  web service connections: journal_mode {readers[0].get('journal_mode') if readers else '?'}, busy_timeout {o.busy_timeout_ms} ms "
              f"(the README's database contract: every connection a 10 s busy timeout)")
        print(f"  readers ({o.readers})  {reads:,} reads, {read_errors} errors, {read_busy} SQLITE_BUSY/locked; latency p50 {percentile(read_lat, 50):.3f} ms, "
              f"p99 {percentile(read_lat, 99):.3f} ms, max {max(read_lat, default=float('nan')):.1f} ms; "
              f"{sum(r['empty_reads'] for r in readers)} reads found no row")
        print(f"  enroller     {enroller['done']:,} enrolments, {enroller['errors']} errors, {enroller['busy_errors']} SQLITE_BUSY/locked; latency p50 "
              f"{percentile(enrol_lat, 50):.2f} ms, p99 {percentile(enrol_lat, 99):.2f} ms, max {max(enrol_lat, default=float('nan')):.1f} ms "
              f"(the longest wait for the write lock)")
        print(f"  integrity    {integrity[0][0] if len(integrity) == 1 else integrity[:3]}")
        ok = not failures
    except KeyboardInterrupt:
        failures.append("interrupted")
    except Exception as error:
        import traceback
        traceback.print_exc()
        failures.append(f"harness error: {type(error).__name__}: {error}")
    finally:
        open(stop_file, "w").close()
        if poller is not None and poller.poll() is None:
            poller.kill()
            poller.wait()
        for _, p in workers:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if standin is not None:
            standin.stop()
    if failures:
        print(f"\nFAILED: {len(failures)} problem(s):")
        for f in failures:
            print(f"  - {f}")
    else:
        print("\nno error")
    print(f"took {time.monotonic() - started_all:.0f} s")
    if ok and not o.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"database and logs kept in {work}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
