"""The crash test's checks of the database after each process and at the end: integrity, the
audit trail's chain, backfill checkpoints, every row against the simulator's truth, and the run
history. A mixin of CrashTest (crash_test.py), which says what each check means."""
import json
import subprocess
from collections import defaultdict

import harness
from harness import CONTRACT_COLUMNS, NULL_STATE, normalise, differences, say


class CrashChecks:
    # --- checks after every process -----------------------------------------------------------
    def check_database(self, record):
        self.checks += 1
        with harness.opened(self.db) as c:
            integrity = c.execute("PRAGMA integrity_check").fetchall()
            if integrity != [("ok",)]:
                self.fail(record, f"PRAGMA integrity_check: {integrity[:10]}")
            foreign = c.execute("PRAGMA foreign_key_check").fetchall()
            if foreign:
                self.fail(record, f"PRAGMA foreign_key_check: {foreign[:10]}")
            # Every enrolled row is still there, with its user; a row the poller added (another
            # subscription found in a user's receipt) belongs to an enrolled user.
            rows = c.execute("SELECT id, user_id FROM subscriptions ORDER BY id").fetchall()
            enrolled = [u for (i, u) in rows if i in self.enrolled_ids]
            extra = [(i, u) for (i, u) in rows if i not in self.enrolled_ids]
            if enrolled != self.user_ids:
                self.fail(record, f"{len(self.user_ids)} rows were enrolled; {len(enrolled)} of them are left with their user")
            strangers = [(i, u) for (i, u) in extra if u not in self.user_set]
            if strangers:
                self.fail(record, f"rows of users who were never enrolled: {strangers[:10]}")
            self.added_rows = len(extra)
            self.check_audit(c, record)
            if record is not None and record["kind"] in ("backfill", "resume", "users") and record.get("run_id") is not None:
                self.check_checkpoint(c, record)

    def check_audit(self, c, record):
        columns = ", ".join(CONTRACT_COLUMNS)
        rows = {}
        for r in c.execute(f"SELECT id, user_id, last_attempt_at, last_verified_at, last_error_reason, consecutive_failures, {columns} FROM subscriptions"):
            rows[r[0]] = (r[1], r[2], r[3], r[4], r[5], normalise(dict(zip(CONTRACT_COLUMNS, r[6:]))))
        events = defaultdict(list)
        for e in c.execute("SELECT id, subscription_id, user_id, run_id, at, reason, entitlement_before, entitlement_after, old_values, new_values "
                           "FROM subscription_events ORDER BY subscription_id, id"):
            events[e[1]].append(e)
        run_ids = {r for (r,) in c.execute("SELECT id FROM poll_runs")}
        problems = []
        checked = 0
        for sid, (user, attempted, verified, reason, failures, state) in rows.items():
            if (state["original_transaction_id"] is None) != (verified is None):
                problems.append(f"subscription {sid}: original_transaction_id {state['original_transaction_id']!r} but last_verified_at {verified!r}")
            if (reason is None) != (failures == 0):
                problems.append(f"subscription {sid}: last_error_reason {reason!r} with consecutive_failures {failures}")
            if verified is not None and (attempted is None or attempted < verified):
                problems.append(f"subscription {sid}: last_attempt_at {attempted!r} before last_verified_at {verified!r}")
            previous = NULL_STATE
            seen = set()
            for (eid, _, euser, run_id, at, why, before, after, old_json, new_json) in events.get(sid, []):
                checked += 1
                old, new = normalise(json.loads(old_json)), normalise(json.loads(new_json))
                label = f"subscription {sid} event {eid} ({why}, run {run_id})"
                if euser != user:
                    problems.append(f"{label}: user_id {euser!r}, the row's is {user!r}")
                if old != previous:
                    problems.append(f"{label}: GAP: its old_values differ from the previous entry's new_values: " + "; ".join(differences(old, previous, "old", "previous")))
                if (why == "conflict") != (old == new):
                    problems.append(f"{label}: old_values {'equal' if old == new else 'differ from'} new_values")
                if before != harness.entitlement(old, at) or after != harness.entitlement(new, at):
                    problems.append(f"{label}: entitlement {before} -> {after}, the values say {harness.entitlement(old, at)} -> {harness.entitlement(new, at)}")
                if (run_id, at) in seen:
                    problems.append(f"{label}: DUPLICATE: a second entry of run {run_id} at {harness.iso(at)}")
                seen.add((run_id, at))
                if run_id not in run_ids:
                    problems.append(f"{label}: no such run in poll_runs")
                elif at not in self.run_clocks.get(run_id, ()) and not (record is not None and run_id == record.get("run_id") and at == record["clock"]):
                    problems.append(f"{label}: at {harness.iso(at)}, a clock no process of run {run_id} ran at")
                if why != "conflict" and (verified is None or at > verified):
                    problems.append(f"{label}: at {at}, later than the row's last_verified_at {verified!r}")
                previous = new
            if previous != state:
                problems.append(f"subscription {sid}: HALF-APPLIED or UNAUDITED: the row differs from its latest audit entry: " + "; ".join(differences(state, previous, "row", "audit")))
        orphans = set(events) - set(rows)
        if orphans:
            problems.append(f"audit entries of subscriptions that do not exist: {sorted(orphans)[:10]}")
        self.events_checked = checked
        for p in problems[:20]:
            self.fail(record, p)
        if len(problems) > 20:
            self.fail(record, f"... and {len(problems) - 20} more audit problems")

    def check_checkpoint(self, c, record):
        """Every target up to the checkpoint the process left was attempted at its clock."""
        low, high = record["checkpoint_before"], record.get("checkpoint_after") or 0
        if high < low:
            return self.fail(record, f"checkpoint went back from {low} to {high}")
        bad = c.execute("SELECT t.subscription_id, s.last_attempt_at FROM backfill_targets t JOIN subscriptions s ON s.id = t.subscription_id "
                        "WHERE t.run_id = ? AND t.subscription_id > ? AND t.subscription_id <= ? AND (s.last_attempt_at IS NULL OR s.last_attempt_at <> ?) LIMIT 10",
                        (record["run_id"], low, high, record["clock"])).fetchall()
        if bad:
            self.fail(record, f"backfill {record['run_id']} checkpoint {high}, but targets up to it were not attempted at its clock: {bad}")

    # --- the kills ------------------------------------------------------------------------------
    def truth_check(self, clock, final):
        """final: every row against the truth at `clock`. Else TruthCheck's rule: rows verified at
        `clock` against the truth then, the others against the truth at their last verification."""
        columns = ", ".join(CONTRACT_COLUMNS)
        with harness.opened(self.db) as c:
            rows = [(r[0], r[1], r[2], normalise(dict(zip(CONTRACT_COLUMNS, r[3:]))))
                    for r in c.execute(f"SELECT id, user_id, last_verified_at, {columns} FROM subscriptions ORDER BY id")]
        return harness.compare_with_truth(self.sim, rows, clock, final, lambda message: self.fail(None, message))

    def check_history(self):
        with harness.opened(self.db) as c:
            runs = {r[0]: r for r in c.execute("SELECT id, mode, status, pid, finished_at, exit_code, updated, report FROM poll_runs")}
            counts = {(r, why == "conflict"): n for (r, why, n) in c.execute(
                "SELECT run_id, reason, count(*) FROM subscription_events GROUP BY run_id, reason = 'conflict'")}
        open_runs = {rid for rid, r in runs.items() if r[2] == "running"}
        expected_open = {rid for rid, rec in self.owner.items() if rec["killed"] and rec["class"] == "left_open"}
        if open_runs != expected_open:
            self.fail(None, f"runs left 'running' {sorted(open_runs)}; runs whose last process was killed while open {sorted(expected_open)}")
        for rid, r in runs.items():
            if rid not in self.owner:
                self.fail(None, f"run {rid} in poll_runs belongs to no process the harness started")
            elif r[2] != "running" and not (r[2] == "finished" and r[4] is not None and r[5] is not None):
                self.fail(None, f"run {rid}: status {r[2]!r}, finished_at {r[4]}, exit_code {r[5]}")
        # A run one process started and finished alone: its audit entries are its report's changes.
        owners = defaultdict(list)
        for rec in self.processes:
            if rec.get("run_id") is not None:
                owners[rec["run_id"]].append(rec)
        solo = 0
        for rid, recs in owners.items():
            if len(recs) == 1 and not recs[0]["killed"] and "report" in recs[0]:
                solo += 1
                report = recs[0]["report"]
                changes = counts.get((rid, False), 0)
                conflicts = counts.get((rid, True), 0)
                # Rows the run added (other subscriptions found in a receipt) have their entry too.
                expected = report["updated"] + report.get("discovered", 0)
                if changes != expected or conflicts != report["failed_by_reason"].get("conflict", 0):
                    self.fail(None, f"run {rid}: {changes} audit entries and {conflicts} conflicts; its report says updated {report['updated']}"
                                    f" + discovered {report.get('discovered', 0)}, conflicts {report['failed_by_reason'].get('conflict', 0)}")
        # The operator's view agrees.
        listing = subprocess.run([self.binary, "runs", "--database", self.db, "--last", "100000", "--format", "json"],
                                 capture_output=True, text=True, env=harness.poller_env())
        if listing.returncode != 0:
            self.fail(None, f"status-poller runs exited {listing.returncode}: {listing.stderr[-500:]}")
        else:
            shown = json.loads(listing.stdout)
            shown_open = {r["id"] for r in shown if r["status"] == "running"}
            if len(shown) != len(runs) or shown_open != open_runs:
                self.fail(None, f"`status-poller runs` lists {len(shown)} runs, {len(shown_open)} running; poll_runs has {len(runs)}, {len(open_runs)} running")
        self.open_runs, self.expected_open, self.solo_runs = open_runs, expected_open, solo
