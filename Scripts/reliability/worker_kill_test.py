#!/usr/bin/env python3
"""Several workers under SIGKILL, driven by Scripts/worker-kill-test.sh; see that script for the options.

Against `status-poller-demo simulate` (a seeded population, a request log) and a fresh PostgreSQL
database enrolled through the database contract, it plays simulated nights: the web service enrols
some subscribers and uploads some receipts, then 4 `run` processes start at once (distinct
`--worker-name`s, a short `--lease-seconds`) and are SIGKILLed at random moments (seeded). A killed
worker is restarted under the same name at once (its run takes the dead run's leases), under a new
name after a pause, or not at all (the dead run's rows wait for their leases to expire); the night
ends when every worker process has exited. Then a clean night, and a backfill shared by 4 workers.

What is checked, and what the words mean (worker_kill_checks.py does it):

- double verification: two requests for one subscription, from two different worker processes,
  whose intervals overlap. An interval is [start, end] in the simulator's request log: from when
  its handler starts to when its answer goes back (after the simulated latency). A process is one
  launch of `run` (a restart is a new process, even under the same name); each launch puts its own
  `?client=TAG` in its App Store URLs, which the log records. The population has no second
  subscription group, so a subscriber is one row (a subscriber with two rows is left out).
- lease handovers (a trigger of the harness's own in the throwaway database records each): a lease
  passes from one run to another only once it has expired (at the leasing transaction's clock), or
  to a run of the same worker name once the holder's process is dead. Anything else is a lease
  taken from a live holder.
- re-asked (counted, not a violation): a subscription asked by two processes in one night, after
  the first was killed, by a worker that opened a second night at the same clock (it started once
  the night was done), or after the lease of a live but slow worker expired (its late answer is
  then discarded as superseded, which its report counts).
- lease pickups: each row a killed run held leased (read right after the kill) is asked again that
  night, by its worker name (a takeover) or by another (never before the lease expired).
- nothing lost: after every night each shared work of its runs (`work_targets`) is all done and no
  row holds a lease (a leased row is a row not done); no enrolled row is missing; every row equals
  the truth (TruthCheck's rule after the clean night; every row at the final clock after the backfill).
- run history: a process that recorded its run is in `poll_runs` (found by its client tag in the
  recorded options) under its worker name and pid, `running` when killed, else `finished` with its
  exit code; no run belongs to no process; `status-poller runs` lists the same runs and workers.
"""

import argparse
import csv
import os
import random
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import say  # noqa: E402
from pg import Postgres, quote  # noqa: E402
from worker_kill_checks import LEASE_AUDIT, WorkerKillChecks, Violation  # noqa: E402

START = "2026-01-05T03:00:00Z"
DAY_MS = 86_400_000
WORKERS = 4



class Process:
    """One launch of `status-poller run` or `backfill`."""

    def __init__(self, n, name, kind, night, clock):
        self.n, self.name, self.kind, self.night, self.clock = n, name, kind, night, clock
        self.tag = f"p{n}-{name}"
        self.proc = None
        self.started = self.ended = self.killed_at = None
        self.killed = False
        self.rc = None
        self.run_id = None
        self.leased_at_kill = []  # (subscription id, user id, lease expiry as UNIX seconds)


class WorkerKillTest(WorkerKillChecks):
    def __init__(self, options, pg):
        self.o = options
        self.pg = pg
        self.rng = random.Random(options.seed)
        self.binary = options.binary
        self.work = options.workdir
        self.logs = os.path.join(self.work, "logs")
        os.makedirs(self.logs, exist_ok=True)
        self.request_log = os.path.join(self.work, "requests.jsonl")
        self.log_offset = 0
        self.handovers_seen = 0
        self.sim = None
        self.processes = []
        self.violations = []
        self.rate = 150.0  # rows a second of 4 workers, learnt from the nights: places the kills
        self.names = 0
        self.modes = []
        self.totals = {"kills": 0, "takeovers": 0, "expired_pickups": 0, "leased_at_kill": 0, "lock_retries": 0, "verified": 0,
                       "requests": 0, "double": 0, "leases_left": 0, "reasked_after_kill": 0, "reasked_second_night": 0, "reasked_live": 0, "lost": 0,
                       "restart_same": 0, "restart_new": 0, "no_restart": 0, "handover_expired": 0, "handover_same_name": 0,
                       "handover_stolen": 0, "superseded": 0}
        self.nights = []

    # --- set-up -------------------------------------------------------------------------------
    def start(self):
        enrolment = os.path.join(self.work, "enrolment.csv")
        args = ["--subscribers", str(self.o.subscribers), "--seed", str(self.o.seed), "--start", START, "--latency", self.o.latency,
                "--enrolment-file", enrolment, "--rate", "second_group=0", "--request-log", self.request_log]
        for fault in self.o.fault:
            args += ["--fault", fault]
        self.sim = harness.Simulator(self.binary, self.work, args)
        result = subprocess.run([self.binary, "migrate", "--database", self.pg.url], capture_output=True, text=True, env=self.env())
        if result.returncode != 0:
            raise RuntimeError(f"migrate failed ({result.returncode}): {result.stderr}")
        self.pg.script(LEASE_AUDIT)
        with open(enrolment, newline="") as f:
            self.receipts = [(r["user_id"], r["latest_receipt"]) for r in csv.DictReader(f)]
        self.to_enrol = list(self.receipts)
        self.rng.shuffle(self.to_enrol)
        self.enrolled = []
        self.enrol(int(len(self.receipts) * 0.6))
        say(f"simulator at {self.sim.base} (seed {self.o.seed}, {self.o.subscribers} subscribers, latency {self.o.latency}, "
            f"faults {', '.join(self.o.fault)}); {len(self.enrolled)} enrolled in {self.pg.url}; {WORKERS} workers, lease {self.o.lease_seconds} s")

    def env(self):
        return self.pg.env(harness.poller_env())

    def load(self, rows, sql):
        """The web service's writes (README, database contract) from a CSV of user ids and receipts."""
        path = os.path.join(self.work, "load.csv")
        with open(path, "w", newline="") as f:
            csv.writer(f).writerows(rows)
        self.pg.script(f"CREATE TEMP TABLE load (user_id text, latest_receipt text);\n\\copy load FROM '{path}' WITH (FORMAT csv)\n{sql};\n")

    def enrol(self, count):
        """Enrolment: a user id and the receipt the app uploaded, nothing else."""
        batch, self.to_enrol = self.to_enrol[:count], self.to_enrol[count:]
        if batch:
            self.load(batch, "INSERT INTO subscriptions (user_id, latest_receipt) SELECT user_id, latest_receipt FROM load")
            self.enrolled += batch
        return len(batch)

    def upload(self, count):
        """The app uploads the receipt it holds, from before its latest renewals: a row whose stored
        receipt (Apple's latest) differs becomes due (the upload trigger). Returns how many did."""
        batch = self.rng.sample(self.enrolled, min(count, len(self.enrolled)))
        self.load(batch, "UPDATE subscriptions s SET latest_receipt = l.latest_receipt FROM load l WHERE s.user_id = l.user_id")
        return int(self.pg.value("SELECT count(*) FROM subscriptions WHERE receipt_uploaded = 1"))

    # --- processes ----------------------------------------------------------------------------
    def launch(self, name, night, clock, kind="run", extra=()):
        n = len(self.processes) + 1
        p = Process(n, name, kind, night, clock)
        client = f"?client={p.tag}"
        subcommand = {"run": ["run"], "backfill": ["backfill", "--all"], "resume": ["backfill", "--resume"], "users": ["backfill"]}[kind]
        command = [self.binary, *subcommand, "--database", self.pg.url, "--bundle-id", harness.BUNDLE_ID,
                   "--production-url", self.sim.production + client, "--sandbox-url", self.sim.sandbox + client,
                   "--now", harness.iso(clock), "--concurrency", str(self.o.concurrency), "--report", "json", "--log-level", "notice",
                   "--worker-name", name, "--lease-seconds", str(self.o.lease_seconds),
                   "--request-timeout", str(self.o.request_timeout), "--max-attempts", str(self.o.max_attempts), *extra]
        p.out = os.path.join(self.logs, f"{n:04d}-{p.tag}.out")
        p.err = os.path.join(self.logs, f"{n:04d}-{p.tag}.err")
        with open(p.out, "w") as out, open(p.err, "w") as err:
            p.proc = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=self.env())
        p.started = time.time()
        self.processes.append(p)
        return p

    def reap(self, p):
        if p.proc.poll() is not None and p.rc is None:
            p.rc, p.ended = p.proc.returncode, time.time()
        return p.rc is not None

    def kill(self, p):
        p.killed_at = time.time()
        p.proc.send_signal(signal.SIGKILL)
        p.proc.wait()
        self.reap(p)
        p.killed = p.rc == -signal.SIGKILL
        if not p.killed:
            return
        self.totals["kills"] += 1
        # The run it had recorded, and the rows it held leased when it died.
        p.run_id = self.run_of(p)
        if p.run_id is not None:
            p.leased_at_kill = [(int(i), u, float(e)) for (i, u, e) in self.pg.rows(
                f"SELECT id, user_id, extract(epoch FROM lease_expires_at) FROM subscriptions WHERE lease_run = {p.run_id}")]

    def run_of(self, p):
        """The run a process recorded, found by the client tag in its recorded App Store URL."""
        pattern = quote("%client=" + p.tag + '"%')
        value = self.pg.value(f"SELECT id FROM poll_runs WHERE options LIKE {pattern}")
        return int(value) if value is not None else None

    def new_name(self):
        self.names += 1
        return f"w{self.names}"

    # --- one night ----------------------------------------------------------------------------
    def night(self, number, clock, kills, *, clean=False):
        self.sim.set_clock(clock)
        enrolled = 0 if clean else self.enrol(self.o.enrol_per_night)
        uploaded = 0 if clean else self.upload(self.o.uploads_per_night)
        first = len(self.processes)
        started = time.time()
        self.names = 0
        workers = [self.launch(self.new_name(), number, clock) for _ in range(WORKERS)]
        due = self.await_targets(workers, started)
        # Within the part of the night the workers are expected to be busy (learnt from the nights
        # without kills); a kill that finds no worker alive is carried over to the next night.
        window = max(due / self.rate, 0.3) * 0.8
        moments = sorted(time.time() - started + self.rng.uniform(0.0, window) for _ in range(kills))
        restarts = []  # (when, name)
        retried = set()
        while True:
            alive = [p for p in self.processes[first:] if not self.reap(p)]
            now = time.time() - started
            for p in self.processes[first:]:  # a same-name restart can meet the dead session's lock for a moment: 75, again
                if p.rc == 75 and p.n not in retried and p.ended - p.started < 5:
                    retried.add(p.n)
                    self.totals["lock_retries"] += 1
                    restarts.append((now + 0.2, p.name))
            if moments and now >= moments[0]:
                moments.pop(0)
                if alive and self.kill_one(alive, restarts, number, clock, now):
                    self.kills_left -= 1
                    continue
            for item in [r for r in restarts if r[0] <= now]:
                restarts.remove(item)
                self.launch(item[1], number, clock)
            if not restarts and all(self.reap(p) for p in self.processes[first:]):
                break
            if now > self.o.night_timeout:  # main() kills the workers left
                raise Violation(f"night {number} did not end within {self.o.night_timeout} s")
            time.sleep(0.01)
        took = time.time() - started
        procs = self.processes[first:]
        if not any(p.killed for p in procs) and due:
            self.rate = 0.5 * self.rate + 0.5 * due / max(took, 0.1)
        record = self.check_night(number, clock, procs, due, took)
        record.update(enrolled=enrolled, uploaded=uploaded)
        self.nights.append(record)
        kills_here = sum(1 for p in procs if p.killed)
        print(f"  night {number:2d} {harness.iso(clock)[:10]}  enrolled {enrolled:3d} uploads {uploaded:3d}  due {due:5d}  processes {len(procs):2d}  kills {kills_here}  "
              f"verified {record['verified']:5d}  takeovers {record['takeovers']:3d}  expired-lease pickups {record['expired_pickups']:3d}  "
              f"double {record['double']}  lost {record['lost']}  {took:5.1f} s", flush=True)
        if self.violations:
            raise Violation()

    def await_targets(self, workers, started):
        """The night's rows, once its first worker has opened it (0 when every worker ends first)."""
        while time.time() - started < 60:
            value = self.pg.value("SELECT count(*) FROM work_targets t JOIN poll_runs r ON r.id = t.work_id AND r.work_id = r.id "
                                  f"WHERE r.id = (SELECT max(work_id) FROM poll_runs WHERE mode = 'nightly' AND run_clock = {workers[0].clock})")
            if value is not None and int(value) > 0:
                return int(value)
            if all(self.reap(p) for p in workers):
                return 0
            time.sleep(0.02)
        return 0

    def kill_one(self, alive, restarts, number, clock, now):
        """SIGKILLs a worker (mostly one holding leases), then restarts it under its name at once,
        under a new name after a pause, or not at all (never the last one alive)."""
        holders = {int(r) for (r,) in self.pg.rows("SELECT DISTINCT lease_run FROM subscriptions WHERE lease_run IS NOT NULL")}
        for p in alive:
            p.run_id = p.run_id or self.run_of(p)
        holding = [p for p in alive if p.run_id in holders]
        victim = self.rng.choice(holding if holding and self.rng.random() < 0.85 else alive)
        self.kill(victim)
        if not victim.killed:
            return False
        others = [p for p in alive if p is not victim and not self.reap(p)]
        # A victim that held leases gets each way back in turn (a seeded order), so that every run
        # of the test sees takeovers, expired leases with a new worker and without one.
        if victim.leased_at_kill:
            if not self.modes:
                self.modes = self.rng.sample(["same", "new", "none"], 3)
            mode = self.modes.pop()
        else:
            mode = self.rng.choice(["same", "new", "none"])
        if mode == "same":
            self.totals["restart_same"] += 1
            self.launch(victim.name, number, clock)  # at once: its new run takes the dead run's leases
            then = f"restarted as {victim.name} at once"
        elif mode == "new" or (not others and not restarts):
            self.totals["restart_new"] += 1
            pause, name = self.rng.uniform(0.0, 3.0), self.new_name()
            restarts.append((now + pause, name))
            then = f"restarted as {name} after {pause:.1f} s"
        else:
            self.totals["no_restart"] += 1
            then = "not restarted"
        run = f"run {victim.run_id}" if victim.run_id is not None else "no run recorded yet"
        print(f"    kill {victim.tag} ({run}) at {now:5.2f} s holding {len(victim.leased_at_kill):3d} leases; {then}", flush=True)
        return True

    # --- the end ------------------------------------------------------------------------------
    def play(self):
        clock = self.sim.clock_ms()
        self.kills_left = self.o.kills
        for number in range(1, self.o.nights + 1):
            clock += self.rng.choice([1, 1, 1, 2]) * DAY_MS
            nights_left = self.o.nights + 1 - number
            self.night(number, clock, -(-self.kills_left // nights_left))
        self.final_clock = clock + DAY_MS
        say(f"a clean night with {WORKERS} workers alive, then a backfill of every row shared by {WORKERS} workers")
        self.night(self.o.nights + 1, self.final_clock, 0, clean=True)
        self.nightly_truth = self.truth(final=False)
        self.final_backfill()
        self.final_truth = self.truth(final=True)
        self.check_history()

    def final_backfill(self):
        clock = self.final_clock
        first = len(self.processes)
        self.names = 0
        opener = self.launch(self.new_name(), "backfill", clock, "backfill")
        while opener.run_id is None and not self.reap(opener):
            opener.run_id = self.run_of(opener)
            time.sleep(0.02)
        for _ in range(WORKERS - 1):
            self.launch(self.new_name(), "backfill", clock, "resume")
        for p in self.processes[first:]:
            p.proc.wait()
            self.reap(p)
        left = [u for (u,) in self.pg.rows(f"SELECT user_id FROM subscriptions WHERE last_verified_at IS DISTINCT FROM {clock} ORDER BY id")]
        print(f"  backfill: {len(self.processes) - first} processes, exit codes {[p.rc for p in self.processes[first:]]}; "
              f"{len(left)} rows an injected fault left unverified, asked again", flush=True)
        for round_ in range(8):
            if not left:
                break
            users = os.path.join(self.work, f"unverified-{round_}.txt")
            with open(users, "w") as f:
                f.write("\n".join(left) + "\n")
            self.launch("w1", "backfill", clock, "users", ("--users-file", users)).proc.wait()
            left = [u for (u,) in self.pg.rows(f"SELECT user_id FROM subscriptions WHERE last_verified_at IS DISTINCT FROM {clock} ORDER BY id")]
        for p in self.processes[first:]:
            self.reap(p)
        self.check_backfill(self.processes[first:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--subscribers", type=int, required=True)
    ap.add_argument("--nights", type=int, required=True)
    ap.add_argument("--kills", type=int, required=True)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--latency", default="uniform:5ms-25ms")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--lease-seconds", type=int, default=12)
    ap.add_argument("--request-timeout", type=float, default=1.5)
    ap.add_argument("--max-attempts", type=int, default=3)
    ap.add_argument("--enrol-per-night", type=int, required=True)
    ap.add_argument("--uploads-per-night", type=int, required=True)
    ap.add_argument("--night-timeout", type=float, default=300)
    ap.add_argument("--fault", action="append", default=None)
    ap.add_argument("--workdir", required=True)
    o = ap.parse_args()
    if o.fault is None:
        o.fault = harness.QUICK_FAULTS
    # postgres://USER:PASSWORD@HOST:PORT/DB, from the environment (never argv); no child inherits it.
    test = WorkerKillTest(o, Postgres(os.environ.pop("STATUS_POLLER_KILL_TEST_DATABASE_URL")))
    started = time.monotonic()
    harness.interrupt_on_sigterm()
    ok = False
    try:
        test.start()
        say(f"{o.nights} nights, {o.kills} SIGKILLs (work directory {o.workdir})")
        test.play()
        ok = not test.violations
    except Violation as violation:
        if violation.args:
            test.violations.append(violation.args[0])
    except KeyboardInterrupt:
        test.violations.append("interrupted")
    except Exception as error:  # the harness itself failed: say so, keep the evidence
        test.violations.append(f"harness error: {type(error).__name__}: {error}")
        import traceback
        traceback.print_exc()
    finally:
        for p in test.processes:
            if p.proc is not None and p.proc.poll() is None:
                p.proc.kill()
                p.proc.wait()
        try:
            test.summary(time.monotonic() - started)
        finally:
            if test.sim:
                test.sim.stop()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
