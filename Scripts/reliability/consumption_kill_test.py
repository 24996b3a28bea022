#!/usr/bin/env python3
"""The consumption sender under SIGKILL (issue 39), driven by Scripts/consumption-kill-test.sh.

A migrated SQLite database holds --count refund requests (consumption_requests, as the receiver
queues them) for users of whom most consented (consumption_consents) and some did not; a few
requests are already past their deadline. `status-poller consumption send` answers them against
a loopback stand-in for Send Consumption Information (this script's HTTP server: PUT
/inApps/v2/transactions/consumption/{id}, 202; 5 % 500s and 2 % 429s with Apple's Retry-After in
ms) and is SIGKILLed at random moments (seeded) and started again, until --kills kills. Then it
runs until nothing is pending.

- 0 lost: every consenting, unexpired request was accepted (202) at least once, and is `sent`;
- 0 sent after a recorded 202: no request arrived after the database recorded its 202;
- 0 duplicates beyond the kills: a repeat only where a kill fell between a 202 and its record,
  so at most one per kill (the sender answers one request at a time), always the same body;
- 0 answers without consent or after the deadline: those end `no_consent` / `expired`, never sent;
- every body is the policy's, with customerConsented true.
"""

import argparse
import http.server
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time

BODY = '{"customerConsented":true,"deliveryStatus":"DELIVERED","sampleContentProvided":false}'


class Apple(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, rng):
        super().__init__(("127.0.0.1", 0), Handler)
        self.rng, self.lock = rng, threading.Lock()
        self.accepted, self.requests, self.bad = [], 0, []  # accepted: (transaction id, arrival ms, body)

    def handle_error(self, request, client_address):
        pass  # a sender killed mid-request resets its connection


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_PUT(self):
        s = self.server
        length = int(self.headers.get("content-length", "0"))
        body = self.rfile.read(length).decode()
        prefix = "/inApps/v2/transactions/consumption/"
        with s.lock:
            s.requests += 1
            draw = s.rng.random()
            headers = {}
            if not self.path.startswith(prefix) or not self.headers.get("authorization", "").startswith("Bearer "):
                s.bad.append(f"{self.path}: no bearer token or another path")
                status, answer = 401, b""
            elif draw < 0.05:
                status, answer = 500, b'{"errorCode":5000000,"errorMessage":"An unknown error occurred."}'
            elif draw < 0.07:
                status, answer = 429, b'{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}'
                headers["Retry-After"] = str(int(time.time() * 1000) + 200)
            else:
                if body != BODY:
                    s.bad.append(f"{self.path}: body {body}")
                s.accepted.append((self.path[len(prefix):], int(time.time() * 1000), body))
                status, answer = 202, b""
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--workdir", required=True)
    p.add_argument("--kills", type=int, default=30)
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--seed", type=int, default=39)
    a = p.parse_args()
    rng = random.Random(a.seed)
    db = os.path.join(a.workdir, "consumption.sqlite")
    subprocess.run([a.binary, "migrate", "--database", db], check=True, stdout=subprocess.DEVNULL)
    key = subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"], check=True, capture_output=True, text=True).stdout
    apple = Apple(random.Random(a.seed + 1))
    threading.Thread(target=apple.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{apple.server_address[1]}"
    config = os.path.join(a.workdir, "config.json")
    with open(config, "w") as f:
        json.dump({"bundle_id": "com.example.premium", "issuer_id": "57246542-96fe-1a63-e053-0824d011072a", "key_id": "ABCDEFGHIJ",
                   "server_api_url": url, "server_api_sandbox_url": url + "/sandbox", "server_api_rate": 200,
                   "consumption_claim_seconds": 1, "consumption_first_retry_seconds": 0.05, "consumption_max_retry_seconds": 0.2}, f)

    now = int(time.time() * 1000)
    expected, no_consent, expired = set(), set(), set()
    c = sqlite3.connect(db, timeout=60)
    with c:
        for n in range(a.count):
            user, transaction = f"u{n}", f"2000{n:08d}"
            draw = rng.random()
            requested = now - 13 * 3_600_000 if draw < 0.05 else now - rng.randrange(3_600_000)
            consented = 0 if 0.05 <= draw < 0.15 else 1
            c.execute("INSERT INTO consumption_consents (user_id, customer_consented, last_used_at, updated_at) VALUES (?, ?, NULL, ?)", (user, consented, now))
            c.execute("""INSERT INTO consumption_requests (notification_id, transaction_id, original_transaction_id, subscription_id, user_id, environment,
                             requested_at, deadline_at, period_started_at, delivery_status, prior_refunds, state, attempts, next_attempt_at)
                         VALUES (?, ?, ?, ?, ?, 'Production', ?, ?, ?, 'DELIVERED', 0, 'pending', 0, ?)""",
                      (f"n{n}", transaction, transaction, n, user, requested, requested + 12 * 3_600_000, requested - 86_400_000, requested))
            (expired if draw < 0.05 else no_consent if not consented else expected).add(transaction)
    c.close()

    env = dict(os.environ, APPSTORE_PRIVATE_KEY=key)
    send = [a.binary, "consumption", "send", "--database", db, "--config", config]
    log = open(os.path.join(a.workdir, "sender.err"), "a")
    kills = 0
    while kills < a.kills:
        proc = subprocess.Popen(send, stdout=subprocess.DEVNULL, stderr=log, stdin=subprocess.DEVNULL, env=env)
        time.sleep(rng.uniform(0.1, 0.8))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
    for _ in range(200):  # drain: a killed sender's claim ends after 1 s, a retry after 0.2 s at most
        subprocess.run(send, stdout=subprocess.DEVNULL, stderr=log, env=env)
        c = sqlite3.connect(db, timeout=60)
        pending = c.execute("SELECT count(*) FROM consumption_requests WHERE state = 'pending'").fetchone()[0]
        c.close()
        if pending == 0:
            break
        time.sleep(0.3)
    apple.shutdown()

    c = sqlite3.connect(db, timeout=60)
    rows = {t: (state, sent_at, attempts) for t, state, sent_at, attempts in c.execute("SELECT transaction_id, state, sent_at, attempts FROM consumption_requests")}
    c.close()
    violations = list(apple.bad)
    accepted = {}
    for transaction, at, body in apple.accepted:
        accepted.setdefault(transaction, []).append(at)
    lost = [t for t in expected if t not in accepted or rows[t][0] != "sent"]
    if lost:
        violations.append(f"{len(lost)} consenting request(s) not accepted and recorded sent, e.g. {sorted(lost)[:5]}")
    unwanted = [t for t in accepted if t not in expected]
    if unwanted:
        violations.append(f"{len(unwanted)} request(s) sent without consent or past the deadline, e.g. {sorted(unwanted)[:5]}")
    wrong_state = [t for t in no_consent if rows[t][0] != "no_consent"] + [t for t in expired if rows[t][0] != "expired"]
    if wrong_state:
        violations.append(f"{len(wrong_state)} request(s) without consent or past the deadline not settled so, e.g. {wrong_state[:5]}")
    after_record = [t for t, ats in accepted.items() if rows[t][1] is not None and max(ats) > rows[t][1]]
    if after_record:
        violations.append(f"{len(after_record)} request(s) sent again after their 202 was recorded, e.g. {sorted(after_record)[:5]}")
    duplicates = sum(len(ats) - 1 for ats in accepted.values())
    if duplicates > kills:
        violations.append(f"{duplicates} duplicates for {kills} kills: more than one per kill")
    print(json.dumps({"requests": a.count, "consenting": len(expected), "no_consent": len(no_consent), "expired": len(expired), "kills": kills,
                      "http_requests": apple.requests, "accepted": len(apple.accepted), "duplicates": duplicates, "lost": len(lost),
                      "sent_after_record": len(after_record), "sent_without_consent_or_late": len(unwanted)}))
    if violations:
        print("FAILED:\n  - " + "\n  - ".join(violations))
        sys.exit(1)
    print("no violation")


if __name__ == "__main__":
    main()
