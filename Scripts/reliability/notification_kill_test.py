#!/usr/bin/env python3
"""The receiver under SIGKILL (issue 23), driven by Scripts/notification-kill-test.sh.

Senders post signed V2 notifications (`status-poller-demo notifications simulate`: DID_RENEW for chains
sim-0 … sim-(C-1), each signed later than the one before) to `status-poller notifications serve`
over a SQLite database holding the rows that own the chains, and retry each one until it is
answered 200, as Apple does. Meanwhile the receiver is SIGKILLed at random moments (seeded) and
started again on the same port, until --kills kills. Then, with every notification answered 200:

- recorded once: app_store_notifications holds exactly the notifications sent, each once;
- applied once: each notification has exactly one audit row (renewed, or stale when a newer one of
  its chain was applied before it), naming it; none has two (a retry after a commit whose 200 was
  lost is a duplicate);
- newer wins: each row holds the data of its chain's newest notification (expires_at and
  apple_state_at), whatever order they were applied in;
- integrity: PRAGMA integrity_check says ok.
"""

import argparse
import http.client
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import demo_binary_of  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--workdir", required=True)
    p.add_argument("--kills", type=int, default=30)
    p.add_argument("--count", type=int, default=20000)
    p.add_argument("--chains", type=int, default=500)
    p.add_argument("--senders", type=int, default=16)
    p.add_argument("--seed", type=int, default=7)
    a = p.parse_args()
    rng = random.Random(a.seed)
    work = a.workdir
    db = os.path.join(work, "notifications.sqlite")
    bodies_file = os.path.join(work, "bodies.jsonl")
    keys = os.path.join(work, "keys")
    rows = os.path.join(work, "rows.csv")
    subprocess.run([a.binary, "migrate", "--database", db], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([demo_binary_of(a.binary), "notifications", "simulate", "--count", str(a.count), "--chains", str(a.chains), "--out", bodies_file,
                    "--key-dir", keys, "--rows", rows], check=True)
    with sqlite3.connect(db) as c:
        lines = open(rows).read().splitlines()[1:]
        c.executemany(
            "INSERT INTO subscriptions (user_id, latest_receipt, original_transaction_id, product_id, environment, expires_at, auto_renew_status) "
            "VALUES (?, 'R', ?, 'com.example.premium.monthly', 'Production', ?, 1)", [tuple(line.split(",")) for line in lines])
    bodies = open(bodies_file, "rb").read().splitlines()
    newest = {}
    for body in bodies:
        jws = json.loads(body)["signedPayload"]
        payload = json.loads(decode(jws.split(".")[1]))
        transaction = json.loads(decode(payload["data"]["signedTransactionInfo"].split(".")[1]))
        chain = transaction["originalTransactionId"]
        if chain not in newest or payload["signedDate"] > newest[chain][0]:
            newest[chain] = (payload["signedDate"], transaction["expiresDate"])

    port = free_port()
    logs = os.path.join(work, "receiver.log")
    log = open(logs, "ab")

    def start():
        process = subprocess.Popen([a.binary, "notifications", "serve", "--database", db, "--listen", f"127.0.0.1:{port}",
                                    "--bundle-id", "com.example.premium", "--app-apple-id", "1234567890",
                                    "--trusted-root-file", os.path.join(keys, "simulator-root.pem"), "--log-level", "warning"],
                                   stdout=log, stderr=log)
        return process

    receiver = start()
    lock = threading.Lock()
    next_index = [0]
    answered = set()
    attempts = [0]

    def sender():
        connection = None
        while True:
            with lock:
                if next_index[0] >= len(bodies):
                    return
                index = next_index[0]
                next_index[0] += 1
            while True:
                with lock:
                    attempts[0] += 1
                try:
                    if connection is None:
                        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                    connection.request("POST", "/app-store/notifications", body=bodies[index], headers={"Content-Type": "application/json"})
                    response = connection.getresponse()
                    response.read()
                    if response.status == 200:
                        with lock:
                            answered.add(index)
                        break
                except (OSError, http.client.HTTPException):
                    if connection is not None:
                        connection.close()
                    connection = None
                time.sleep(0.02)

    threads = [threading.Thread(target=sender) for _ in range(a.senders)]
    for t in threads:
        t.start()
    kills = 0
    while kills < a.kills and any(t.is_alive() for t in threads):
        time.sleep(rng.uniform(0.05, 0.4))
        receiver.send_signal(signal.SIGKILL)
        receiver.wait()
        kills += 1
        receiver = start()
    for t in threads:
        t.join()
    # SIGTERM only once the last receiver serves (its signal handling is installed by then).
    for _ in range(600):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            time.sleep(0.05)
    receiver.send_signal(signal.SIGTERM)
    code = receiver.wait()
    violations = []
    if kills < a.kills:
        violations.append(f"only {kills} kills before every notification was answered; raise --count")
    if code != 0:
        violations.append(f"the last receiver exited {code} on SIGTERM")
    with sqlite3.connect(db) as c:
        if c.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
            violations.append("integrity_check failed")
        recorded = c.execute("SELECT count(*), count(DISTINCT notification_id) FROM app_store_notifications").fetchone()
        if recorded != (len(bodies), len(bodies)):
            violations.append(f"{recorded[0]} notifications recorded ({recorded[1]} distinct), {len(bodies)} sent")
        outcomes = dict(c.execute("SELECT outcome, count(*) FROM app_store_notifications GROUP BY outcome").fetchall())
        if set(outcomes) - {"applied", "stale"}:
            violations.append(f"outcomes {outcomes}")
        events = c.execute("SELECT notification_id, count(*) FROM subscription_events GROUP BY notification_id").fetchall()
        per = {k: v for k, v in events}
        twice = [k for k, v in per.items() if v != 1]
        missing = len(bodies) - len(per)
        if twice:
            violations.append(f"{len(twice)} notifications with more than one audit row, e.g. {twice[:3]}")
        if missing:
            violations.append(f"{missing} notifications without an audit row")
        wrong = 0
        for chain, apple_state_at, expires_at in c.execute("SELECT original_transaction_id, apple_state_at, expires_at FROM subscriptions"):
            if (apple_state_at, expires_at) != newest[chain]:
                wrong += 1
        if wrong:
            violations.append(f"{wrong} rows do not hold their chain's newest notification")
    print(json.dumps({
        "kills": kills, "notifications": len(bodies), "answered_200": len(answered), "posts": attempts[0],
        "outcomes": outcomes, "violations": violations,
    }))
    return 1 if violations else 0


def decode(segment):
    import base64
    return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))


if __name__ == "__main__":
    sys.exit(main())
