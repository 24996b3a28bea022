"""The worker kill test's checks: the simulator's request log (double verifications, re-asked rows,
who picked up a killed run's leases), each night's shared work and leases, every row against the
truth, and the run history. A mixin of WorkerKillTest (worker_kill_test.py), which says what each
check means."""
import json
import subprocess
import urllib.parse
from collections import defaultdict

import harness
from harness import CONTRACT_COLUMNS, normalise

INTEGER_COLUMNS = ("expires_at", "grace_period_expires_at", "is_in_billing_retry", "auto_renew_status", "expiration_intent", "cancelled_at")
TOLERANCE = 0.05  # seconds: PostgreSQL's now() and the simulator's clock are one machine's clock, read at slightly different moments

# The harness's own instrument in its throwaway database (not the poller's schema): every time a
# row's lease passes from one run to another, the moment (the leasing transaction's now(), the
# instant lease() compared expiries with) and the lease it replaced.
LEASE_AUDIT = """
CREATE TABLE harness_lease_handovers (
    id BIGSERIAL PRIMARY KEY, at TIMESTAMPTZ NOT NULL, subscription_id BIGINT NOT NULL,
    old_run BIGINT NOT NULL, old_owner TEXT, old_expires_at TIMESTAMPTZ, new_run BIGINT NOT NULL, new_owner TEXT);
CREATE FUNCTION harness_lease_handover() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.lease_run IS NOT NULL AND NEW.lease_run IS NOT NULL AND NEW.lease_run <> OLD.lease_run THEN
        INSERT INTO harness_lease_handovers (at, subscription_id, old_run, old_owner, old_expires_at, new_run, new_owner)
        VALUES (now(), NEW.id, OLD.lease_run, OLD.lease_owner, OLD.lease_expires_at, NEW.lease_run, NEW.lease_owner);
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER harness_lease_handover AFTER UPDATE OF lease_run ON subscriptions FOR EACH ROW EXECUTE FUNCTION harness_lease_handover();
"""


class Violation(Exception):
    pass


class WorkerKillChecks:
    def fail(self, where, message):
        self.violations.append(f"{where}: {message}")

    # --- the request log ------------------------------------------------------------------------
    def requests_since_last_read(self):
        """The simulator's log lines written since the last call: start, end (UNIX seconds), client tag, user id."""
        with open(self.request_log) as f:
            f.seek(self.log_offset)
            text = f.read()
        complete = text[: text.rfind("\n") + 1]
        self.log_offset += len(complete.encode())
        requests = []
        for line in complete.splitlines():
            entry = json.loads(line)
            if entry.get("user_id") is not None:
                requests.append((entry["start_us"] / 1e6, entry["end_us"] / 1e6, entry.get("client"), entry["user_id"]))
        return requests

    def analyse_requests(self, where, procs, record):
        """Double verifications, re-asked rows and lease pickups among the requests of `procs`."""
        requests = self.requests_since_last_read()
        by_tag = {p.tag: p for p in procs}
        strangers = {r[2] for r in requests if r[2] not in by_tag}
        if strangers:
            self.fail(where, f"requests from clients the harness did not start in this phase: {sorted(map(str, strangers))[:5]}")
        multi = {u for (u,) in self.pg.rows("SELECT user_id FROM subscriptions GROUP BY user_id HAVING count(*) > 1")}
        by_user = defaultdict(list)
        for r in requests:
            if r[2] in by_tag:
                by_user[r[3]].append(r)
        record["requests"] = len(requests)
        record["ambiguous"] = len(multi & set(by_user))
        work = {p.tag: self.work_of(p) for p in procs}
        double, reasked = [], defaultdict(int)
        for user, asked in by_user.items():
            if user in multi:
                continue  # two rows of one subscriber: a request does not say which (none with second_group=0)
            asked.sort()
            latest_end = {}
            for start, end, tag, _ in asked:
                if any(t != tag and e >= start for t, e in latest_end.items()):
                    double.append(f"{user} at {start:.3f} by {tag} while {[t for t, e in latest_end.items() if t != tag and e >= start]} had a request open")
                latest_end[tag] = max(latest_end.get(tag, 0), end)
            first = {}
            for start, _, tag, _ in asked:
                first.setdefault(tag, start)
            order = sorted(first, key=first.get)
            for before, after in zip(order, order[1:]):
                a, b = by_tag[before], by_tag[after]
                if a.killed and a.killed_at <= first[after] + TOLERANCE:
                    reasked["after_kill"] += 1
                elif work[before] != work[after]:
                    reasked["second_night"] += 1
                else:
                    # Its lease expired while it lived (it took over half a lease from handing the
                    # row out to writing it); the lease handovers below say whether it had expired.
                    reasked["live"] += 1
        record["double"] = len(double)
        for d in double[:20]:
            self.fail(where, f"DOUBLE VERIFICATION: {d}")
        for key in ("after_kill", "second_night", "live"):
            record[f"reasked_{key}"] = reasked[key]
        self.lease_pickups(where, procs, by_user, record)

    def lease_handovers(self, where, procs, record):
        """Every time a lease passed from one run to another (the harness's trigger): the old lease
        had expired at the leasing transaction's clock, or the new run has the old one's worker name
        and the old run's process was dead (the worker lock's guarantee). Anything else is a lease
        taken from a live worker: two workers holding one row."""
        by_run = {p.run_id: p for p in self.processes if p.run_id is not None}
        rows = self.pg.rows("SELECT id, extract(epoch FROM at), subscription_id, old_run, old_owner, extract(epoch FROM old_expires_at), new_run, new_owner "
                            f"FROM harness_lease_handovers WHERE id > {self.handovers_seen} ORDER BY id")
        record["handover_expired"] = record["handover_same_name"] = record["handover_stolen"] = 0
        for (hid, at, sid, old_run, old_owner, expires, new_run, new_owner) in rows:
            self.handovers_seen = max(self.handovers_seen, int(hid))
            at, old = float(at), by_run.get(int(old_run))
            if expires is not None and float(expires) < at:
                record["handover_expired"] += 1
            elif new_owner == old_owner and old is not None and old.killed_at is not None and old.killed_at <= at + TOLERANCE:
                record["handover_same_name"] += 1
            else:
                record["handover_stolen"] += 1
                if record["handover_stolen"] <= 20:
                    state = "alive" if old is None or old.killed_at is None or old.killed_at > at else "dead"
                    self.fail(where, f"LEASE TAKEN UNEXPIRED: subscription {sid} leased by run {old_run} ({old_owner}, process {state}) until "
                                     f"{float(expires):.3f}, taken by run {new_run} ({new_owner}) at {at:.3f}")

    def lease_pickups(self, where, procs, by_user, record):
        record["takeovers"] = record["expired_pickups"] = record["leased_at_kill"] = 0
        for p in procs:
            for sid, user, expiry in p.leased_at_kill:
                record["leased_at_kill"] += 1
                later = [r for r in by_user.get(user, []) if r[2] != p.tag and r[0] >= p.killed_at]
                if not later:
                    self.fail(where, f"subscription {sid} ({user}) was leased by killed run {p.run_id} ({p.tag}) and never asked again")
                    continue
                start, _, tag, _ = min(later)
                asker = next(q for q in procs if q.tag == tag)
                if asker.name == p.name:
                    record["takeovers"] += 1
                else:
                    record["expired_pickups"] += 1
                    if start < expiry - TOLERANCE:
                        self.fail(where, f"subscription {sid} ({user}): leased by killed run {p.run_id} until {expiry:.3f}, "
                                         f"asked by another worker ({tag}) at {start:.3f}, before the lease expired")

    def work_of(self, p):
        if p.run_id is None:
            p.run_id = self.run_of(p)
        if p.run_id is None:
            return None
        value = self.pg.value(f"SELECT work_id FROM poll_runs WHERE id = {p.run_id}")
        return int(value) if value is not None else None

    def superseded(self, procs):
        """Answers the exited workers did not write because their lease had gone to another run."""
        total = 0
        for p in procs:
            try:
                total += json.loads(open(p.out).read()).get("superseded", 0)
            except (ValueError, OSError):
                pass
        return total

    # --- after each night -------------------------------------------------------------------------
    def check_exits(self, where, procs, allowed=(0, 1)):
        verified = 0
        for p in procs:
            if p.run_id is None:
                p.run_id = self.run_of(p)
            if p.killed or p.rc == 75:
                continue
            tail = open(p.err).read()[-1500:]
            if p.rc == 2 and p.kind == "resume" and "no interrupted backfill" in tail:
                continue  # the backfill was done before it started
            if p.rc not in allowed:
                self.fail(where, f"process {p.tag} exited {p.rc} (expected {allowed}):\n{tail}")
                continue
            try:
                verified += json.loads(open(p.out).read())["verified"]
            except (ValueError, KeyError):
                self.fail(where, f"process {p.tag} exited {p.rc} but printed no JSON report")
        return verified

    def check_work_and_leases(self, where, procs):
        """Every shared work its runs took part in is done; no row holds an unexpired lease (every process is dead)."""
        runs = [p.run_id for p in procs if p.run_id is not None]
        lost = 0
        if runs:
            for (work, undone) in self.pg.rows(
                    "SELECT r.work_id, (SELECT count(*) FROM work_targets t WHERE t.work_id = r.work_id AND NOT t.done) FROM poll_runs r "
                    f"WHERE r.id IN ({', '.join(map(str, runs))}) AND r.work_id IS NOT NULL GROUP BY r.work_id"):
                if int(undone):
                    lost += int(undone)
                    self.fail(where, f"work {work}: {undone} rows not done after every worker exited (LOST)")
        # A leased row is a row not done; once every row is done, every lease has been released by
        # the write of its row. So none may be left, unexpired (a dead run's) or expired.
        leases = self.pg.rows("SELECT id, lease_owner, lease_run, lease_expires_at > now() FROM subscriptions WHERE lease_run IS NOT NULL")
        for r in leases[:10]:
            what = "an unexpired lease of a dead run" if r[3] == "t" else "an expired lease"
            self.fail(where, f"subscription {r[0]} still holds {what}: run {r[2]} ({r[1]}), after every worker exited")
        return lost, len(leases)

    def check_night(self, number, clock, procs, due, took):
        where = f"night {number} ({harness.iso(clock)})"
        record = {"night": number, "due": due, "took": took, "processes": len(procs), "kills": sum(1 for p in procs if p.killed)}
        self.check_exits(where, procs)
        record["verified"] = int(self.pg.value(f"SELECT count(*) FROM subscriptions WHERE last_verified_at = {clock}"))
        record["superseded"] = self.superseded(procs)
        record["lost"], record["leases_left"] = self.check_work_and_leases(where, procs)
        self.analyse_requests(where, procs, record)
        self.lease_handovers(where, procs, record)
        for key in ("verified", "requests", "double", "lost", "leases_left", "takeovers", "expired_pickups", "leased_at_kill",
                    "handover_expired", "handover_same_name", "handover_stolen", "superseded"):
            self.totals[key] = self.totals.get(key, 0) + record[key]
        for key in ("after_kill", "second_night", "live"):
            self.totals[f"reasked_{key}"] += record[f"reasked_{key}"]
        return record

    def check_backfill(self, procs):
        record = {}
        record["verified"] = self.check_exits("final backfill", procs)
        record["lost"], record["leases_left"] = self.check_work_and_leases("final backfill", procs)
        self.analyse_requests("final backfill", procs, record)
        self.lease_handovers("final backfill", procs, record)
        for key in ("double", "handover_stolen"):
            self.totals[key] += record[key]
        self.backfill = record

    # --- the end ----------------------------------------------------------------------------------
    def truth(self, final):
        columns = ", ".join(CONTRACT_COLUMNS)
        rows = []
        for r in self.pg.rows(f"SELECT id, user_id, last_verified_at, {columns} FROM subscriptions ORDER BY id"):
            state = dict(zip(CONTRACT_COLUMNS, r[3:]))
            for column in INTEGER_COLUMNS:
                if state[column] is not None:
                    state[column] = int(state[column])
            rows.append((int(r[0]), r[1], int(r[2]) if r[2] is not None else None, normalise(state)))
        missing = {u for (u, _) in self.enrolled} - {r[1] for r in rows}
        if missing:
            self.fail("final", f"{len(missing)} enrolled subscribers have no row (LOST): {sorted(missing)[:10]}")
        return harness.compare_with_truth(self.sim, rows, self.final_clock, final, lambda message: self.fail("final", message))

    def check_history(self):
        runs = {}
        for (rid, status, worker, pid, exit_code, options, work) in self.pg.rows(
                "SELECT id, status, worker, pid, exit_code, options, work_id FROM poll_runs ORDER BY id"):
            url = json.loads(options).get("production_url", "")
            tag = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("client", [None])[0]
            runs[int(rid)] = {"status": status, "worker": worker, "pid": int(pid), "exit_code": exit_code, "tag": tag}
        by_tag = {r["tag"]: (rid, r) for rid, r in runs.items()}
        tags = {p.tag for p in self.processes}
        self.history = defaultdict(int)
        for rid, r in runs.items():
            if r["tag"] not in tags:
                self.fail("run history", f"run {rid} belongs to no process the harness started ({r})")
        for p in self.processes:
            rid, r = by_tag.get(p.tag, (None, None))
            if r is None:
                self.history["no_run"] += 1
                if not p.killed and p.rc in (0, 1):
                    self.fail("run history", f"process {p.tag} exited {p.rc} but has no run")
                continue
            if r["worker"] != p.name or r["pid"] != p.proc.pid:
                self.fail("run history", f"run {rid}: worker {r['worker']!r} pid {r['pid']}, the process was {p.name!r} pid {p.proc.pid}")
            if p.killed:
                self.history["left_open" if r["status"] == "running" else "killed_after_closing"] += 1
            elif r["status"] != "finished" or r["exit_code"] is None or int(r["exit_code"]) != p.rc:
                self.fail("run history", f"process {p.tag} exited {p.rc}; its run {rid} is {r['status']!r} with exit code {r['exit_code']}")
            else:
                self.history["finished"] += 1
        listing = subprocess.run([self.binary, "runs", "--database", self.pg.url, "--last", "100000", "--format", "json"],
                                 capture_output=True, text=True, env=self.env())
        if listing.returncode != 0:
            return self.fail("run history", f"status-poller runs exited {listing.returncode}: {listing.stderr[-500:]}")
        shown = {r["id"]: r for r in json.loads(listing.stdout)}
        if set(shown) != set(runs) or any(shown[i]["status"] != runs[i]["status"] or shown[i].get("worker") != runs[i]["worker"] for i in runs):
            self.fail("run history", f"`status-poller runs` lists {len(shown)} runs; poll_runs holds {len(runs)} (or their status or worker differ)")
        self.history["runs"] = len(runs)

    def summary(self, elapsed):
        t = self.totals
        p = self.processes
        print()
        print(f"worker kill test, seed {self.o.seed}: {len(self.nights)} nights, {len(p)} worker processes in {elapsed:.0f} s")
        print(f"  kills          {t['kills']} SIGKILLs; then restarted under the same name {t['restart_same']}, under a new name "
              f"{t['restart_new']}, not at all {t['no_restart']}; {t['lock_retries']} restarts met the dead session's worker lock (exit 75) and ran again")
        print(f"  leases         {t['leased_at_kill']} leases held by killed runs: {t['takeovers']} taken over by the same worker name, "
              f"{t['expired_pickups']} picked up by another worker after the lease expired")
        print(f"  rows verified  {t['verified']} in the nights (rows whose last verification is the night's clock, after it); {t['requests']} requests")
        print(f"  lease handover {t['handover_expired']} leases passed to another run after they expired, {t['handover_same_name']} to a run of the "
              f"same name after the holder was killed, {t['handover_stolen']} taken unexpired from a live holder (must be 0)")
        print(f"  re-asked       {t['reasked_after_kill']} rows asked again after their process was killed, {t['reasked_second_night']} by a worker "
              f"that opened a second night at the same clock, {t['reasked_live']} after the lease of a live worker expired "
              f"({t['superseded']} late answers discarded as superseded)")
        print(f"  double         {t['double']} rows verified by two worker processes at once (overlapping requests; must be 0)")
        print(f"  lost           {t['lost']} rows left undone in a night's shared work, {t['leases_left']} leases left after a night (must be 0)")
        if hasattr(self, "final_truth"):
            print(f"  truth          after the clean night {self.nightly_truth[0]} rows, {self.nightly_truth[1]} disagreements; "
                  f"after the shared backfill {self.final_truth[0]} rows, {self.final_truth[1]} disagreements")
        if getattr(self, "history", None):
            h = self.history
            print(f"  run history    {h['runs']} runs: {h['finished']} finished as their process exited, {h['left_open']} left 'running' by a kill, "
                  f"{h['killed_after_closing']} killed after closing their run; {h['no_run']} processes recorded no run (killed first, or exit 75 / nothing to resume)")
        harness.print_violations(self.violations)
