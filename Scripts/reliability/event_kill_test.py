#!/usr/bin/env python3
"""The event deliverer under SIGKILL (issue 38), driven by Scripts/event-kill-test.sh.

A writer adds outbound events to a migrated SQLite database in bursts (50 events a transaction,
users drawn at random, so a user's events interleave with others'), as the poller's writes add
them (the outbox row alone: the deliverer reads nothing else). Meanwhile `status-poller events
deliver` runs against a loopback endpoint (this script's HTTP server) and is SIGKILLed at random
moments (seeded) and started again, until --kills kills. The endpoint checks every request's
Standard Webhooks signature (HMAC-SHA256 of "id.timestamp.body" under the secret's key) and fails
5 % of them with a 500. Then `events deliver --once` runs until every event was accepted.

- 0 lost: every event written was accepted (a 2xx) at least once;
- 0 out of order: no event of a user was accepted before an earlier event of that user had been;
- every request was signed correctly, and its body is the event's;
- duplicates (an event accepted again after a kill between its 2xx and its record) are counted,
  as at least once allows.
"""

import argparse
import base64
import hashlib
import hmac
import http.server
import json
import os
import random
import shlex
import signal
import sqlite3
import subprocess
import sys
import threading
import time


class Verdicts:
    """What the endpoint records and how it judges a request, whichever server carries it."""

    def setup_tallies(self):
        """What the run is judged on: acceptances in order, first arrivals, and the counts."""
        self.lock, self.accepted, self.arrived_at = threading.Lock(), [], {}
        self.bad_signatures, self.requests, self.cut_short = 0, 0, 0

    def setup_verdicts(self, key, rng, failure_rate):
        self.key, self.rng, self.failure_rate = key, rng, failure_rate
        self.setup_tallies()

    def judge(self, event_id, timestamp, signature_header, body):
        """The status to answer: 401 for a bad signature, 500 for an injected failure, 204 accepted."""
        expected = base64.b64encode(hmac.new(self.key, f"{event_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()).decode()
        signatures = [part.split(",", 1)[1] for part in signature_header.split(" ") if part.startswith("v1,")]
        with self.lock:
            self.requests += 1
            if not any(hmac.compare_digest(expected, sig) for sig in signatures) or abs(time.time() - int(timestamp or 0)) > 300:
                self.bad_signatures += 1
                return 401
            if self.rng.random() < self.failure_rate:
                return 500
            event = json.loads(body)
            if event["id"] != event_id:
                self.bad_signatures += 1
                return 400
            self.accepted.append((event_id, event["data"]["user_id"]))
            self.arrived_at.setdefault(event_id, time.time())
            return 204


class Endpoint(Verdicts, http.server.ThreadingHTTPServer):
    """The standard library's threaded server (a thread per connection)."""
    daemon_threads = True
    # The deliverer opens up to 64 connections at once; with socketserver's default backlog of 5
    # the kernel dropped the rest's SYNs, retried after 1, 3, 7 s: stalls of the harness, not ours.
    request_queue_size = 256

    def __init__(self, key, rng, failure_rate):
        super().__init__(("127.0.0.1", 0), Handler)
        self.setup_verdicts(key, rng, failure_rate)

    def handle_error(self, request, client_address):
        pass  # a deliverer killed mid-request resets its connection: no fault of the endpoint


class Sink(Verdicts):
    """The same endpoint as a separate Go process (Scripts/bench/event_sink), for the bench: checking
    signatures in Python took two thirds of a core the deliverer under test needed. Its verdicts
    arrive as lines on its stdout; the judgement of order and lag stays here."""

    def __init__(self, binary, key, seed, failure_rate):
        self.setup_tallies()
        self.proc = subprocess.Popen([binary, "-seed", str(seed), "-failure-rate", str(failure_rate)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.proc.stdin.write(base64.b64encode(key).decode() + "\n")
        self.proc.stdin.flush()
        first = self.proc.stdout.readline().split()
        if first[:1] != ["port"]:
            raise SystemExit(f"the sink {binary} did not start")
        self.server_address = ("127.0.0.1", int(first[1]))
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()

    def read(self):
        for line in self.proc.stdout:
            verdict = line.split()
            with self.lock:
                if verdict[0] == "cut":
                    self.cut_short += 1
                    continue
                self.requests += 1
                if verdict[0] in ("401", "400"):
                    self.bad_signatures += 1
                elif verdict[0] == "204":
                    self.accepted.append((verdict[1], verdict[2]))
                    self.arrived_at.setdefault(verdict[1], float(verdict[3]))

    def shutdown(self):
        self.proc.stdin.close()
        self.proc.wait()
        self.reader.join()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        s = self.server
        length = int(self.headers.get("content-length", "0"))
        body = self.rfile.read(length)
        if len(body) < length:  # the deliverer was killed while sending: nothing to answer
            with s.lock:
                s.cut_short += 1
            self.close_connection = True
            return
        status = s.judge(self.headers.get("webhook-id", ""), self.headers.get("webhook-timestamp", ""),
                         self.headers.get("webhook-signature", ""), body)
        self.send_response(status)
        self.send_header("content-length", "0")
        self.end_headers()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--workdir", required=True)
    p.add_argument("--kills", type=int, default=30)
    p.add_argument("--count", type=int, default=20000)
    p.add_argument("--users", type=int, default=400)
    p.add_argument("--seed", type=int, default=38)
    p.add_argument("--failure-rate", type=float, default=0.05)
    p.add_argument("--batch", type=int, default=50, help="events per writer transaction (one every 10 ms)")
    p.add_argument("--postgres", metavar="URL",
                   help="a migrated-or-empty PostgreSQL database instead of SQLite (its password in PGPASSWORD); written with --psql")
    p.add_argument("--psql", metavar="COMMAND", help="the psql command line (split as a shell would) that connects to it as its owner")
    p.add_argument("--rate", type=float, default=0, help="events per second offered, transactions paced on a schedule (0: one every 10 ms)")
    p.add_argument("--sink", metavar="BINARY", help="the endpoint as Scripts/bench/event_sink's Go binary instead of this script's server")
    a = p.parse_args()
    rng = random.Random(a.seed)
    db = a.postgres or os.path.join(a.workdir, "events.sqlite")
    subprocess.run([a.binary, "migrate", "--database", db], check=True, stdout=subprocess.DEVNULL)
    secret = subprocess.run([a.binary, "events", "secret"], check=True, capture_output=True, text=True).stdout.strip()
    secret_file = os.path.join(a.workdir, "web.whsec")
    with open(secret_file, "w") as f:
        f.write(secret + "\n")
    key = base64.b64decode(secret[len("whsec_"):])
    if a.sink:
        endpoint = Sink(a.sink, key, a.seed + 1, a.failure_rate)
    else:
        endpoint = Endpoint(key, random.Random(a.seed + 1), a.failure_rate)
        threading.Thread(target=endpoint.serve_forever, daemon=True).start()
    config = os.path.join(a.workdir, "config.json")
    with open(config, "w") as f:
        json.dump({"event_endpoints": {"web": {"url": f"http://127.0.0.1:{endpoint.server_address[1]}/hook", "secret_file": secret_file}},
                   "event_first_retry_seconds": 0.05, "event_max_retry_seconds": 0.2, "event_lease_seconds": 1}, f)

    written = []  # (event id, user), in outbox order
    now = int(time.time() * 1000)
    committed_at = {}  # event id: when its transaction committed

    def make_rows(start):
        rows = []
        for n in range(start, min(start + a.batch, a.count)):
            user = f"u{rng.randrange(a.users)}"
            event_id = f"evt_{n:032x}"
            body = json.dumps({"id": event_id, "type": "renewal", "timestamp": "", "data": {"user_id": user, "n": n}}, separators=(",", ":"))
            rows.append((event_id, "renewal", user, n, n, "poll", now, now, body))
            written.append((event_id, user))
        return rows

    def paced(start, began):
        if a.rate > 0:  # on schedule: the next transaction when the offered rate says, not 10 ms after this one
            time.sleep(max(0.0, began + (start + a.batch) / a.rate - time.monotonic()))
        else:
            time.sleep(0.01)

    def write_events():
        c = sqlite3.connect(db, timeout=60)
        c.execute("PRAGMA synchronous = NORMAL")  # as the poller's writers (WAL: no fsync per commit)
        began = time.monotonic()
        for start in range(0, a.count, a.batch):
            rows = make_rows(start)
            with c:
                c.executemany("INSERT INTO outbound_events (event_id, type, user_id, subscription_id, audit_event_id, source, apple_at, at, body)"
                              " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            done = time.time()
            for row in rows:
                committed_at[row[0]] = done
            paced(start, began)
        c.close()

    def write_events_postgres():
        # As the poller's writers do (OutboxSQL): the outbox's advisory lock (OutboxSQL.lock) to the commit, so ids
        # follow commits, and a NOTIFY that PostgreSQL sends at the commit. psql echoes a line after
        # each COMMIT: the commit's time.
        psql = subprocess.Popen(shlex.split(a.psql) + ["-o", "/dev/null"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        began = time.monotonic()
        for start in range(0, a.count, a.batch):
            rows = make_rows(start)
            values = ",".join("(" + ",".join(f"'{v}'" if isinstance(v, str) else str(v) for v in row) + ")" for row in rows)
            psql.stdin.write("BEGIN;\nSELECT pg_advisory_xact_lock(6004496033656274947);\n"
                             "INSERT INTO outbound_events (event_id, type, user_id, subscription_id, audit_event_id, source, apple_at, at, body)"
                             f" VALUES {values};\nSELECT pg_notify('status_poller_events', '');\nCOMMIT;\n\\echo committed\n")
            psql.stdin.flush()
            if psql.stdout.readline().strip() != "committed":
                raise SystemExit("psql stopped writing events")
            done = time.time()
            for row in rows:
                committed_at[row[0]] = done
            paced(start, began)
        psql.stdin.close()
        psql.wait()

    writer = threading.Thread(target=write_events_postgres if a.postgres else write_events)
    deliver = [a.binary, "events", "deliver", "--database", db, "--config", config, "--log-level", "error"]
    log = open(os.path.join(a.workdir, "deliverer.err"), "a")
    kills = 0
    try:
        if a.kills == 0:  # no kill: one deliverer, for the lag and the rate (Scripts/bench.sh's events case)
            # Written once it is up (its first line), so the lag is the deliverer's, not its start's.
            proc = subprocess.Popen(deliver, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL, text=True)
            proc.stdout.readline()
            writer.start()
            writer.join()
            for _ in range(3000):
                with endpoint.lock:
                    if len(endpoint.arrived_at) >= len(written):
                        break
                time.sleep(0.1)
            proc.send_signal(signal.SIGTERM)
            proc.wait()
        else:
            writer.start()
        while kills < a.kills:
            proc = subprocess.Popen(deliver, stdout=subprocess.DEVNULL, stderr=log, stdin=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.1, 0.8))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
        writer.join()
        for _ in range(600):  # drain: leases of the killed deliverer end after 1 s
            subprocess.run(deliver[:3] + ["--once"] + deliver[3:], stdout=subprocess.DEVNULL, stderr=log)
            with endpoint.lock:
                if len({e for e, _ in endpoint.accepted}) >= len(written):
                    break
            time.sleep(0.2)
    finally:
        if writer.is_alive():
            writer.join()
        endpoint.shutdown()

    violations = []
    accepted_ids = [e for e, _ in endpoint.accepted]
    lost = {e for e, _ in written} - set(accepted_ids)
    if lost:
        violations.append(f"{len(lost)} event(s) never accepted, e.g. {sorted(lost)[:5]}")
    order = {e: i for i, (e, _) in enumerate(written)}
    first_seen, out_of_order = {}, 0
    last_by_user = {}
    for e, user in endpoint.accepted:
        if e in first_seen:
            continue
        first_seen[e] = True
        if order[e] < last_by_user.get(user, -1):
            out_of_order += 1
        last_by_user[user] = max(last_by_user.get(user, -1), order[e])
    # Stronger: each user's first acceptances follow the outbox order exactly.
    for user in {u for _, u in written}:
        expected = [e for e, u in written if u == user]
        got = [e for e in dict.fromkeys(x for x, u in endpoint.accepted if u == user)]
        if got != expected[:len(got)]:
            out_of_order += 1
            violations.append(f"{user}: accepted {got[:5]}… not in the order written {expected[:5]}…")
            break
    if out_of_order:
        violations.append(f"{out_of_order} event(s) accepted before an earlier event of their user")
    if endpoint.bad_signatures:
        violations.append(f"{endpoint.bad_signatures} request(s) with a bad signature or body")
    lags = sorted(endpoint.arrived_at[e] - committed_at[e] for e in endpoint.arrived_at if e in committed_at)
    span = (max(endpoint.arrived_at.values()) - min(committed_at.values())) if lags else 0
    arrivals = (max(endpoint.arrived_at.values()) - min(endpoint.arrived_at.values())) if lags else 0
    commits = (max(committed_at.values()) - min(committed_at.values())) if committed_at else 0
    def pct(p):
        return round(lags[min(len(lags) - 1, int(len(lags) * p))], 3) if lags else None
    print(json.dumps({"events": len(written), "kills": kills, "requests": endpoint.requests, "accepted": len(accepted_ids),
                      "duplicates": len(accepted_ids) - len(set(accepted_ids)), "lost": len(lost), "out_of_order": out_of_order,
                      "cut_short": endpoint.cut_short,
                      "events_per_second": round(len(lags) / span) if span else None,
                      "arrivals_per_second": round(len(lags) / arrivals) if arrivals else None,
                      "commits_per_second": round(len(committed_at) / commits) if commits else None,
                      "lag_p50_s": pct(0.5), "lag_p95_s": pct(0.95), "lag_max_s": round(lags[-1], 3) if lags else None}))
    if violations:
        print("FAILED:\n  - " + "\n  - ".join(violations))
        sys.exit(1)
    print("no violation")


if __name__ == "__main__":
    main()
