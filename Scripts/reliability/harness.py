"""Shared pieces of the reliability harnesses (Scripts/crash-test.sh, Scripts/beside-test.sh,
Scripts/worker-kill-test.sh): the App Store simulator as a child process, its admin endpoints, a
migrated and enrolled database, the poller's command lines, and every row against the
simulator's truth. Python 3 standard library only."""

import collections
import contextlib
import csv
import http.client
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.parse

SHARED_SECRET = "simulator-shared-secret"  # the simulator's default; given to the poller through the environment only
BUNDLE_ID = "com.example.premium"          # the simulator's default bundle id

# The contract columns, in the schema's order (ContractColumn).
CONTRACT_COLUMNS = (
    "original_transaction_id", "product_id", "environment", "expires_at", "grace_period_expires_at",
    "is_in_billing_retry", "auto_renew_status", "auto_renew_product_id", "expiration_intent", "cancelled_at",
)
BOOLEAN_COLUMNS = ("is_in_billing_retry", "auto_renew_status")

# The harnesses' default faults: they fail a request without slowing a run much (no 429 with
# Retry-After, no slow answers), so kills land mid-run rather than mid-wait.
QUICK_FAULTS = ["dropped_connection=0.004", "html_page=0.004", "http_503=0.002", "status_211xx_final=0.001"]


def say(message):
    print(f"==> {message}", file=sys.stderr, flush=True)


def interrupt_on_sigterm():
    """SIGTERM ends a harness as Ctrl-C does, so its `finally` stops the simulator and the pollers."""
    def stop(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, stop)


def print_violations(violations):
    """The verdict closing a harness's report: each violation (the first 50), or "no violation"."""
    if violations:
        print(f"\nFAILED: {len(violations)} violation(s):")
        for v in violations[:50]:
            print(f"  - {v}")
    else:
        print("\nno violation")


def poller_env():
    env = dict(os.environ)
    env["APPSTORE_SHARED_SECRET"] = SHARED_SECRET
    for key in list(env):  # no setting from the caller's environment may change the runs
        if key.startswith("STATUS_POLLER_"):
            del env[key]
    return env


def iso(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms // 1000))


def demo_binary_of(binary):
    """The simulator and the demo for the poller `binary`: status-poller-demo beside it; a
    status-poller built before the two were split carries `simulate` and `demo` itself."""
    sibling = os.path.join(os.path.dirname(os.path.abspath(binary)), "status-poller-demo")
    return sibling if os.access(sibling, os.X_OK) else binary


class Simulator:
    """`status-poller-demo simulate` on a free loopback port, with its admin endpoints."""

    def __init__(self, binary, workdir, args, name="simulator"):
        self.out_path = os.path.join(workdir, f"{name}.out")
        self.err_path = os.path.join(workdir, f"{name}.err")
        command = [demo_binary_of(binary), "simulate", "--host", "127.0.0.1", "--port", "0", *args]
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            self.proc = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        self.production = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with open(self.out_path) as f:
                for line in f:
                    parts = line.split()
                    if len(parts) >= 2 and parts[0] == "production":
                        self.production = parts[1]
            if self.production:
                break
            if self.proc.poll() is not None:
                raise RuntimeError(f"the simulator exited ({self.proc.returncode}): {open(self.err_path).read()[-2000:]}")
            time.sleep(0.05)
        if not self.production:
            self.stop()
            raise RuntimeError("the simulator printed no URL in 60 s")
        self.base = self.production[: -len("/verifyReceipt")]
        self.sandbox = self.base + "/sandbox/verifyReceipt"
        parsed = urllib.parse.urlsplit(self.base)
        self.host, self.port = parsed.hostname, parsed.port
        self.connection = None

    def request(self, method, path):
        """One admin request over a kept-alive connection; the JSON answer."""
        for attempt in range(3):
            try:
                if self.connection is None:
                    self.connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
                self.connection.request(method, path)
                response = self.connection.getresponse()
                body = response.read()
                if response.status >= 400 and response.status != 404:
                    raise RuntimeError(f"{method} {path}: HTTP {response.status} {body[:200]!r}")
                return response.status, json.loads(body)
            except (http.client.HTTPException, ConnectionError, OSError):
                if self.connection is not None:
                    self.connection.close()
                self.connection = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def clock_ms(self):
        return int(self.request("GET", "/simulator/clock")[1]["now_ms"])

    def advance_days(self, days):
        return int(self.request("POST", f"/simulator/clock?advance_days={days}")[1]["now_ms"])

    def set_clock(self, ms):
        return int(self.request("POST", f"/simulator/clock?now_ms={ms}")[1]["now_ms"])

    def truth(self, user_id):
        status, body = self.request("GET", "/simulator/truth?user_id=" + urllib.parse.quote(user_id))
        return body if status == 200 else None

    def statistics(self):
        return self.request("GET", "/simulator/statistics")[1]

    def stop(self):
        if self.connection is not None:
            self.connection.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def migrate(binary, database):
    result = subprocess.run([binary, "migrate", "--database", database], capture_output=True, text=True, env=poller_env())
    if result.returncode != 0:
        raise RuntimeError(f"migrate failed ({result.returncode}): {result.stderr}")


def connect(database, timeout=10.0):
    """A connection as the README's contract asks of every client: WAL (set by migrate), a busy timeout."""
    connection = sqlite3.connect(database, timeout=timeout, isolation_level=None)
    connection.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
    return connection


@contextlib.contextmanager
def opened(database, timeout=10.0):
    connection = connect(database, timeout)
    try:
        yield connection
    finally:
        connection.close()


def enrol_csv(database, path):
    """The web service's enrolment (README, Database contract): a user_id and a receipt, nothing else."""
    with open(path, newline="") as f:
        rows = [(r["user_id"], r["latest_receipt"]) for r in csv.DictReader(f)]
    connection = connect(database)
    try:
        connection.execute("BEGIN IMMEDIATE")
        connection.executemany("INSERT INTO subscriptions (user_id, latest_receipt) VALUES (?, ?)", rows)
        connection.execute("COMMIT")
    finally:
        connection.close()
    return len(rows)


def poller_command(binary, subcommand, database, simulator, now_ms, concurrency, extra=()):
    return [
        binary, *subcommand, "--database", database, "--bundle-id", BUNDLE_ID,
        "--production-url", simulator.production, "--sandbox-url", simulator.sandbox,
        "--now", iso(now_ms), "--concurrency", str(concurrency), "--report", "json", "--log-level", "notice",
        *extra,
    ]


def entitlement(state, at_ms):
    """SubscriptionState.entitlement(at:), for checking the audit trail's before/after names."""
    if state["original_transaction_id"] is None:
        return "unverified"
    if state["cancelled_at"] is not None:
        return "refunded"
    if state["expires_at"] is not None and state["expires_at"] > at_ms:
        return "active"
    if state["grace_period_expires_at"] is not None and state["grace_period_expires_at"] > at_ms:
        return "grace_period"
    if state["is_in_billing_retry"]:
        return "billing_retry"
    return "expired"


def normalise(state):
    """A state (row, audit JSON or truth) in one form: booleans as bool, absent as None."""
    out = {}
    for column in CONTRACT_COLUMNS:
        value = state.get(column)
        if column in BOOLEAN_COLUMNS and value is not None:
            value = bool(value)
        if column == "is_in_billing_retry" and value is None:
            value = False
        out[column] = value
    return out


NULL_STATE = normalise({})


def differences(a, b, a_name="row", b_name="truth"):
    return [f"{c}: {a_name} {a[c]!r}, {b_name} {b[c]!r}" for c in CONTRACT_COLUMNS if a[c] != b[c]]


def compare_with_truth(sim, rows, clock, final, fail):
    """Every row against the simulator's truth; `rows` are (id, user_id, last_verified_at,
    normalised contract columns). final: every row against the truth at `clock`, and each must
    have been verified then. Else TruthCheck's rule: a row verified at `clock` against the truth
    then, any other row against the truth at its last verification (a row never verified must hold
    nothing). Moves the simulator's clock to each instant and back to `clock`; calls `fail` with
    each disagreement (the first 20, then a count); returns (rows compared, disagreements)."""
    by_instant = collections.defaultdict(list)
    unverified = 0
    for row in rows:
        if final:
            by_instant[clock].append(row)
        elif row[2] is None:
            unverified += 1
            if row[3] != NULL_STATE:
                fail(f"subscription {row[0]} ({row[1]}): never verified, yet holds {row[3]}")
        else:
            by_instant[row[2]].append(row)
    disagreements = []
    checked = 0
    for instant in sorted(by_instant):
        sim.set_clock(instant)
        for sid, user, verified, state in by_instant[instant]:
            checked += 1
            if final and verified != clock:
                disagreements.append(f"subscription {sid} ({user}): not verified at the final clock (last {verified!r})")
            truth = sim.truth(user)
            chain = None
            if truth is not None:
                chain = next((ch for ch in truth["chains"] if ch["original_transaction_id"] == state["original_transaction_id"]), None)
            if chain is None:
                disagreements.append(f"subscription {sid} ({user}): the simulator has no chain {state['original_transaction_id']!r} at {iso(instant)}")
                continue
            expected = normalise({**chain, "environment": truth["environment"]})
            diff = differences(state, expected)
            if diff:
                disagreements.append(f"subscription {sid} ({user}) at {iso(instant)}: " + "; ".join(diff))
    sim.set_clock(clock)
    name = "final truth (every row at the final clock)" if final else "truth after the final nightly run (TruthCheck's rule)"
    print(f"  {name}: {checked} rows compared, {len(disagreements)} disagreements" + ("" if final else f", {unverified} never verified"), flush=True)
    for d in disagreements[:20]:
        fail(f"{name}: {d}")
    if len(disagreements) > 20:
        fail(f"{name}: ... and {len(disagreements) - 20} more disagreements")
    return checked, len(disagreements)
