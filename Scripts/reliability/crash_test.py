#!/usr/bin/env python3
"""Crash consistency (issue 11), driven by Scripts/crash-test.sh; see that script for the options.

Against `status-poller-demo simulate` and a fresh database enrolled through the database contract, it
repeatedly moves the simulated clock, starts `run`, `backfill --all` or `backfill --resume` at
random and SIGKILLs most of them at a random moment (seeded), then checks the database after every
process. At the end it resumes every unfinished backfill, runs a final nightly run and a backfill
of every row at the final clock, and compares every row with the simulator's truth.

What is checked, and what the words mean:

- integrity: `PRAGMA integrity_check` says `ok` and `PRAGMA foreign_key_check` finds nothing,
  after every process and at the end; the table holds exactly the enrolled subscribers.
- audit trail (`subscription_events`), per subscription in id order, after every process:
  the first entry's old_values is the state the web service inserted (every contract column NULL,
  is_in_billing_retry 0); entry k's new_values equals entry k+1's old_values (else a change was
  made without its audit row, or an audit row was written without its change: a GAP); the last
  entry's new_values equals the row's contract columns (a row with no entry holds the inserted
  state); entitlement_before/after are old/new evaluated at `at`; only a `conflict` entry has
  old == new; no two entries share (run_id, at) (the same answer recorded twice: a DUPLICATE);
  every entry's run_id is a run whose process ran at the entry's clock.
- no half-applied answer: the row's contract columns are exactly one audit entry's new_values
  (the latest), as above; the bookkeeping agrees with itself (original_transaction_id is set iff
  last_verified_at is; last_error_reason is NULL iff consecutive_failures is 0; last_attempt_at
  >= last_verified_at; no audit entry is later than last_verified_at); and at the end each row
  equals the truth.
- backfill checkpoint: after a backfill process (killed or not), every target between the
  checkpoint it started from and the checkpoint it left was attempted at its clock.
- run history (`poll_runs`): a process that exited by itself closed its run (`finished`, its exit
  code recorded); a SIGKILLed process that had opened (or resumed) its run leaves it `running`,
  with no end, report or exit code. At the end the runs left `running` are exactly the runs whose
  last process was SIGKILLed while the run was open (every kill is classified: left open; killed
  before its run was recorded; killed after its run was closed), `status-poller runs` shows the
  same, and for each run that one process finished alone, its audit entries number its report's
  `updated` plus `discovered` (rows it added for other subscriptions in a receipt, when the
  poller does that), and its `conflict` entries its conflicts. Rows the poller adds must belong to
  enrolled users; no enrolled row may disappear or change user.
- truth: after the final nightly run, a row verified at the final clock equals the truth then,
  and any other row equals the truth at its last verification (as TruthCheck does); after the
  final backfill, every row equals the truth at the final clock, column by column (the contract
  columns; environment from the subscriber).
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from crash_checks import CrashChecks  # noqa: E402
from harness import say  # noqa: E402

START = "2026-01-05T03:00:00Z"
DAY_MS = 86_400_000
MAX_SIMULATED_DAYS = 300  # the simulated population's lifecycles cover 400 days from the start


class Violation(Exception):
    pass


class CrashTest(CrashChecks):
    def __init__(self, options):
        self.o = options
        self.rng = random.Random(options.seed)
        self.binary = options.binary
        self.work = options.workdir
        self.db = os.path.join(self.work, "crash.sqlite")
        self.logs = os.path.join(self.work, "logs")
        os.makedirs(self.logs, exist_ok=True)
        self.sim = None
        self.current = None  # the poller process running now, if any
        self.processes = []  # one record per poller process
        self.owner = {}  # run id -> the record of the last process that owned it
        self.run_clocks = defaultdict(set)  # run id -> clocks its processes ran at
        self.estimate = {"run": 1.0, "backfill": 3.0, "resume": 1.5}  # seconds, learnt from finished processes
        self.violations = []
        self.enrolled = 0
        self.user_ids = []
        self.added_rows = 0
        self.events_checked = 0
        self.checks = 0

    # --- set-up -------------------------------------------------------------------------------
    def start(self):
        args = [
            "--subscribers", str(self.o.subscribers), "--seed", str(self.o.seed), "--start", START,
            "--latency", self.o.latency, "--enrolment-file", os.path.join(self.work, "enrolment.csv"),
        ]
        for fault in self.o.fault:
            args += ["--fault", fault]
        self.sim = harness.Simulator(self.binary, self.work, args)
        harness.migrate(self.binary, self.db)
        self.enrolled = harness.enrol_csv(self.db, os.path.join(self.work, "enrolment.csv"))
        with harness.opened(self.db) as c:
            enrolled = c.execute("SELECT id, user_id FROM subscriptions ORDER BY id").fetchall()
        self.enrolled_ids = {i for (i, _) in enrolled}
        self.user_ids = [u for (_, u) in enrolled]
        self.user_set = set(self.user_ids)
        say(f"simulator at {self.sim.base} (seed {self.o.seed}, {self.o.subscribers} subscribers, latency {self.o.latency}, "
            f"faults {', '.join(self.o.fault) or 'none'}); {self.enrolled} subscribers enrolled in {self.db}")

    # --- one poller process -------------------------------------------------------------------
    def resumable(self, c):
        """The backfill `--resume` would pick (SQLiteSubscriptionStore.resumableBackfill)."""
        row = c.execute("SELECT id, checkpoint_id FROM poll_runs WHERE mode = 'backfill' AND status IN ('running', 'interrupted', 'aborted') "
                        "ORDER BY id DESC LIMIT 1").fetchone()
        return row

    def written(self, c, clock):
        """Counts that grow when the process at `clock` commits a batch (rows attempted, audit rows, checkpoints)."""
        return c.execute("SELECT (SELECT count(*) FROM subscriptions WHERE last_attempt_at = ?), (SELECT count(*) FROM subscription_events), "
                         "(SELECT coalesce(sum(checkpoint_id), 0) FROM poll_runs)", (clock,)).fetchone()

    def launch(self, kind, clock, kill_plan, extra=()):
        """Starts one process; kills it per kill_plan (None: let it finish); returns its record."""
        with harness.opened(self.db) as c:
            max_run = c.execute("SELECT coalesce(max(id), 0) FROM poll_runs").fetchone()[0]
            written_before = self.written(c, clock)
            resume = self.resumable(c) if kind == "resume" else None
        concurrency = self.rng.choice([2, 4, 8, 8, 16, 32])
        sub = {"run": ["run"], "backfill": ["backfill", "--all"], "resume": ["backfill", "--resume"], "users": ["backfill"]}[kind]
        command = harness.poller_command(self.binary, sub, self.db, self.sim, clock, concurrency, extra)
        n = len(self.processes) + 1
        record = {
            "n": n, "kind": kind, "clock": clock, "concurrency": concurrency, "command": command,
            "resume_id": resume[0] if resume else None, "checkpoint_before": resume[1] if resume else 0,
            "max_run_before": max_run, "plan": kill_plan, "killed": False, "written_before": written_before,
        }
        out_path = os.path.join(self.logs, f"{n:03d}-{kind}.out")
        err_path = os.path.join(self.logs, f"{n:03d}-{kind}.err")
        wal = self.db + "-wal"
        def wal_mark():
            try:
                s = os.stat(wal)
                return (s.st_ino, s.st_size, s.st_mtime_ns)
            except FileNotFoundError:
                return None
        with open(out_path, "w") as out, open(err_path, "w") as err:
            started = time.monotonic()
            proc = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=harness.poller_env())
            self.current = proc
            record["pid"] = proc.pid
            if kill_plan is not None:
                strategy, value, jitter = kill_plan
                if strategy in ("early", "timed"):
                    try:
                        proc.wait(value)
                    except subprocess.TimeoutExpired:
                        pass
                else:  # "commit": after the value-th change of the WAL file (a commit), plus a jitter
                    seen, mark = 0, wal_mark()
                    while proc.poll() is None and seen < value:
                        time.sleep(0.0005)
                        now = wal_mark()
                        if now != mark:
                            seen, mark = seen + 1, now
                    if proc.poll() is None and jitter > 0:
                        try:
                            proc.wait(jitter)
                        except subprocess.TimeoutExpired:
                            pass
                if proc.poll() is None:
                    record["killed_after"] = time.monotonic() - started
                    proc.send_signal(signal.SIGKILL)
            proc.wait()
            record["duration"] = time.monotonic() - started
            self.current = None
        record["rc"] = proc.returncode
        record["killed"] = proc.returncode == -signal.SIGKILL
        if not record["killed"] and proc.returncode < 0:
            self.fail(record, f"ended by signal {-proc.returncode}, which the harness did not send")
        self.processes.append(record)
        self.settle(record, out_path, err_path)
        return record

    def settle(self, record, out_path, err_path):
        """Finds the process's run, classifies how it ended, and checks its run history row."""
        with harness.opened(self.db) as c:
            record["wrote"] = self.written(c, record["clock"]) != record["written_before"]
            if record["kind"] == "resume":
                row = c.execute("SELECT id, mode, status, pid, finished_at, report, exit_code, checkpoint_id FROM poll_runs WHERE id = ? AND pid = ?",
                                (record["resume_id"], record["pid"])).fetchone() if record["resume_id"] else None
                others = []
            else:
                rows = c.execute("SELECT id, mode, status, pid, finished_at, report, exit_code, checkpoint_id FROM poll_runs WHERE id > ? ORDER BY id",
                                 (record["max_run_before"],)).fetchall()
                row = rows[0] if rows else None
                others = rows[1:]
        for other in others:
            self.fail(record, f"one process, several runs in poll_runs: {other}")
        if row is not None and row[3] != record["pid"]:
            self.fail(record, f"run {row[0]} carries pid {row[3]}, the process was {record['pid']}")
        record["run_id"] = row[0] if row else None
        status = row[2] if row else None
        if record["killed"]:
            if row is None:
                record["class"] = "before_recorded"
            elif status == "running":
                record["class"] = "left_open"
                if row[4] is not None or row[5] is not None or row[6] is not None:
                    self.fail(record, f"killed run {row[0]} is 'running' but has an end, a report or an exit code")
            else:
                record["class"] = "after_closed"
        else:
            rc = record["rc"]
            record["class"] = "exited"
            if rc not in (0, 1):
                tail = open(err_path).read()[-1500:]
                self.fail(record, f"exited {rc} (expected 0 or 1; 75 would mean a SIGKILLed run's lock was still held):\n{tail}")
            elif row is None:
                self.fail(record, "exited by itself but left no run in poll_runs")
            elif status != "finished" or row[6] != rc or row[4] is None or row[5] is None:
                self.fail(record, f"exited {rc} but its run {row[0]} is {status!r}, exit_code {row[6]}, finished_at {row[4]}")
            else:
                try:
                    record["report"] = json.loads(open(out_path).read())
                except ValueError:
                    self.fail(record, "printed no JSON report")
            if record["kind"] in self.estimate and rc in (0, 1):
                self.estimate[record["kind"]] = 0.5 * self.estimate[record["kind"]] + 0.5 * record["duration"]
        if record["run_id"] is not None:
            self.owner[record["run_id"]] = record
            self.run_clocks[record["run_id"]].add(record["clock"])
            record["checkpoint_after"] = row[7]
        self.check_database(record)

    def fail(self, record, message):
        where = f"process {record['n']} ({record['kind']}, pid {record.get('pid')}, clock {harness.iso(record['clock'])})" if record else "final"
        self.violations.append(f"{where}: {message}")

    def kill_plan(self, kind):
        strategy = self.rng.choice(["early", "timed", "timed", "commit", "commit", "commit"])
        if strategy == "early":  # around start-up: before or while the run is recorded
            return ("early", self.rng.uniform(0.0, 0.4), 0.0)
        if strategy == "timed":  # anywhere in the run's expected length
            return ("timed", self.rng.uniform(0.0, max(self.estimate[kind], 0.2) * 1.1), 0.0)
        # right after the n-th commit (the run's own row, the targets, then batches), or a little later
        jitter = 0.0 if self.rng.random() < 0.5 else self.rng.uniform(0.0, 0.05)
        return ("commit", self.rng.randint(2, 14), jitter)

    def play(self):
        total_days = 0
        kills = 0
        clock = self.sim.clock_ms()
        while kills < self.o.kills:
            days = self.rng.choice([0, 1, 1, 1, 2, 3, 5])
            if total_days + days > MAX_SIMULATED_DAYS:
                days = 0
            if days:
                total_days += days
                clock = self.sim.advance_days(days)
            with harness.opened(self.db) as c:
                can_resume = self.resumable(c) is not None
            r = self.rng.random()
            kind = ("resume" if r < 0.35 else "backfill" if r < 0.6 else "run") if can_resume else ("backfill" if r < 0.35 else "run")
            plan = self.kill_plan(kind) if self.rng.random() < self.o.kill_probability else None
            record = self.launch(kind, clock, plan)
            if record["killed"]:
                kills += 1
            what = f"killed after {record['killed_after']:.3f} s ({plan[0]}{' #' + str(plan[1]) if plan[0] == 'commit' else ''}): {record['class']}{', mid-write' if record['wrote'] else ''}" if record["killed"] \
                else f"exited {record['rc']} in {record['duration']:.2f} s" + (f" (planned kill: {plan[0]}, it finished first)" if plan else "")
            print(f"  {record['n']:3d} {harness.iso(clock)} {kind:<8} c={record['concurrency']:<3} run {record['run_id'] or '-':>4}  {what}", flush=True)
            if self.violations:
                raise Violation()

    # --- the end ----------------------------------------------------------------------------------
    def finish(self):
        clock = self.sim.clock_ms()
        say(f"final clock {harness.iso(clock)}: resuming every unfinished backfill, then a clean nightly run")
        for _ in range(1000):
            with harness.opened(self.db) as c:
                if self.resumable(c) is None:
                    break
            record = self.launch("resume", clock, None)
            print(f"  {record['n']:3d} {harness.iso(clock)} resume   run {record['run_id']}: exited {record['rc']} in {record['duration']:.2f} s", flush=True)
            if self.violations:
                raise Violation()
        record = self.launch("run", clock, None)
        print(f"  {record['n']:3d} {harness.iso(clock)} run      run {record['run_id']}: exited {record['rc']} in {record['duration']:.2f} s, "
              f"selected {record.get('report', {}).get('selected')}", flush=True)
        if self.violations:
            raise Violation()
        self.nightly_truth = self.truth_check(clock, final=False)

        say("a backfill of every row at the final clock (and again for rows an injected fault left unverified)")
        record = self.launch("backfill", clock, None)
        print(f"  {record['n']:3d} {harness.iso(clock)} backfill run {record['run_id']}: exited {record['rc']} in {record['duration']:.2f} s", flush=True)
        for round_ in range(8):
            with harness.opened(self.db) as c:
                left = [u for (u,) in c.execute("SELECT user_id FROM subscriptions WHERE last_verified_at IS NOT ? ORDER BY id", (clock,))]
            if not left:
                break
            users = os.path.join(self.work, f"unverified-{round_}.txt")
            with open(users, "w") as f:
                f.write("\n".join(left) + "\n")
            record = self.launch("users", clock, None, ("--users-file", users))
            print(f"  {record['n']:3d} {harness.iso(clock)} backfill run {record['run_id']}: {len(left)} rows left unverified by faults; exited {record['rc']}", flush=True)
        if self.violations:
            raise Violation()
        self.final_truth = self.truth_check(clock, final=True)
        self.check_history()

    # --- report ---------------------------------------------------------------------------------
    def summary(self, elapsed):
        p = self.processes
        killed = [r for r in p if r["killed"]]
        by_class = defaultdict(int)
        for r in killed:
            by_class[r["class"]] += 1
        kinds = defaultdict(int)
        for r in p:
            kinds[r["kind"]] += 1
        statistics = self.sim.statistics() if self.sim else {}
        print()
        print(f"crash test, seed {self.o.seed}: {len(p)} processes in {elapsed:.0f} s; simulator answered {statistics.get('requests', '?')} requests")
        print(f"  kills        {len(killed)}  (left their run open {by_class['left_open']}, before their run was recorded {by_class['before_recorded']}, "
              f"after it was closed {by_class['after_closed']}); {sum(1 for r in killed if r['wrote'])} after some of their batches were committed; by moment: "
              + ", ".join(f"{s} {sum(1 for r in killed if r['plan'][0] == s)}" for s in ("early", "timed", "commit")))
        print(f"  runs         {kinds['run']} nightly, {kinds['backfill']} backfill --all, {kinds['resume']} backfill --resume, "
              f"{kinds['users']} backfill --users-file; {sum(1 for r in p if not r['killed'])} exited by themselves")
        if hasattr(self, "open_runs"):
            print(f"  run history  {len(self.open_runs)} runs left 'running' = {len(self.expected_open)} runs whose last process was killed while open; "
                  f"{self.solo_runs} finished runs: audit entries = report's changes (updated + discovered)")
        if hasattr(self, "final_truth"):
            print(f"  truth        after the nightly run {self.nightly_truth[0]} rows, {self.nightly_truth[1]} disagreements; "
                  f"after the final backfill {self.final_truth[0]} rows checked, {self.final_truth[1]} disagreements")
        print(f"  rows         {len(self.user_ids)} enrolled, all kept; {self.added_rows} added by the poller (other subscriptions in a receipt)")
        print(f"  integrity    PRAGMA integrity_check and foreign_key_check after each of {self.checks} processes: "
              + ("ok" if not any("integrity" in v or "foreign_key" in v for v in self.violations) else "FAILED"))
        print(f"  audit trail  {self.events_checked} entries checked after the last process (chain, no gap, no duplicate, row = latest entry)")
        harness.print_violations(self.violations)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--kills", type=int, required=True)
    ap.add_argument("--subscribers", type=int, required=True)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--latency", default="uniform:1ms-5ms")
    ap.add_argument("--fault", action="append", default=None)
    ap.add_argument("--kill-probability", type=float, default=0.8)
    ap.add_argument("--keep", action="store_true")
    o = ap.parse_args()
    if o.fault is None:
        o.fault = harness.QUICK_FAULTS
    o.workdir = tempfile.mkdtemp(prefix="crash-test-")
    test = CrashTest(o)
    started = time.monotonic()
    harness.interrupt_on_sigterm()
    ok = False
    try:
        test.start()
        say(f"SIGKILLing {o.kills} processes (work directory {o.workdir})")
        test.play()
        test.finish()
        ok = not test.violations
    except Violation:
        pass
    except KeyboardInterrupt:
        test.violations.append("interrupted")
    except Exception as error:  # the harness itself failed: say so, keep the evidence
        test.violations.append(f"harness error: {type(error).__name__}: {error}")
        import traceback
        traceback.print_exc()
    finally:
        if test.current is not None and test.current.poll() is None:
            test.current.kill()
            test.current.wait()
        try:
            test.summary(time.monotonic() - started)
        finally:
            if test.sim:
                test.sim.stop()
    if ok and not o.keep:
        shutil.rmtree(o.workdir, ignore_errors=True)
    else:
        print(f"database, simulator and per-process logs kept in {o.workdir}" + ("" if ok else
              f"; replay the same choices with --seed {o.seed} (kill moments depend on timing)"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
