"""The poller a team writes in an afternoon: InAppPy's asyncio validator, a semaphore, sqlite3, one
commit per answer. A benchmark peer for Scripts/bench.sh, not a product: it skips what it does not
understand. Secret from APPSTORE_SHARED_SECRET; prints one JSON line with its counts at the end."""
import argparse, asyncio, json, os, sqlite3, time
from aiohttp import ClientSession, TCPConnector
from inapppy.asyncio import AppStoreValidator
from inapppy.errors import InAppPyValidationError

H = 3_600_000  # one hour in ms
DUE = """SELECT id, latest_receipt FROM subscriptions WHERE original_transaction_id IS NULL
  OR receipt_uploaded = 1 OR expires_at BETWEEN :now - 48 * :h AND :now + 24 * :h
  OR (is_in_billing_retry = 1 AND expires_at >= :now - 60 * 24 * :h) OR grace_period_expires_at >= :now - 24 * :h"""
UPDATE = """UPDATE subscriptions SET original_transaction_id = ?, product_id = ?, environment = ?,
  expires_at = ?, grace_period_expires_at = ?, is_in_billing_retry = ?, auto_renew_status = ?,
  auto_renew_product_id = ?, cancelled_at = ?, latest_receipt = ?, last_verified_at = ?,
  last_attempt_at = ?, receipt_uploaded = 0, consecutive_failures = 0 WHERE id = ?"""


class Validator(AppStoreValidator):
    """InAppPy resets `url` to Apple's before every request; this points it at `target` instead. Its
    session keeps aiohttp's default of 100 connections: this one allows `connections` (the semaphore's C)."""
    def __init__(self, target, connections, **kwargs):
        self.target, self.connections = target, connections
        super().__init__(**kwargs)

    def _change_url_by_sandbox(self):
        self.url = self.target

    async def __aenter__(self):
        self._session = ClientSession(connector=TCPConnector(limit=self.connections))


def num(value):
    return None if value is None else int(value)


async def main(a):
    secret, counts = os.environ["APPSTORE_SHARED_SECRET"], {"verified": 0, "failed": 0}
    db = sqlite3.connect(a.database)
    db.execute("PRAGMA journal_mode = WAL")  # the same journal settings as status-poller
    db.execute("PRAGMA synchronous = NORMAL")
    rows = db.execute(DUE, {"now": a.now_ms, "h": H}).fetchall()
    semaphore, validator = asyncio.Semaphore(a.concurrency), Validator(a.url, a.concurrency, http_timeout=30)

    async def poll(row_id, receipt):
        async with semaphore:
            try:
                answer = await validator.validate(receipt, secret, exclude_old_transactions=True)
                assert answer["receipt"]["bundle_id"] == a.bundle_id
                last = max(answer["latest_receipt_info"], key=lambda e: int(e["expires_date_ms"]))
            except (InAppPyValidationError, asyncio.TimeoutError, AssertionError, KeyError, ValueError):
                counts["failed"] += 1
                return
            renewal = next((r for r in answer.get("pending_renewal_info", [])
                            if r.get("original_transaction_id") == last["original_transaction_id"]), {})
            db.execute(UPDATE, (last["original_transaction_id"], last["product_id"], answer.get("environment"),
                                num(last["expires_date_ms"]), num(renewal.get("grace_period_expires_date_ms")),
                                int(renewal.get("is_in_billing_retry_period") == "1"), num(renewal.get("auto_renew_status")),
                                renewal.get("auto_renew_product_id"), num(last.get("cancellation_date_ms")),
                                answer.get("latest_receipt", receipt), a.now_ms, a.now_ms, row_id))
            db.commit()
            counts["verified"] += 1

    async with validator:  # opens InAppPy's aiohttp session
        await asyncio.gather(*(poll(row_id, receipt) for row_id, receipt in rows))
    db.close()
    return len(rows), counts


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    for name, kind in [("database", str), ("url", str), ("concurrency", int), ("now-ms", int), ("bundle-id", str)]:
        parser.add_argument("--" + name, type=kind, required=True)
    args, started = parser.parse_args(), time.monotonic()
    selected, counts = asyncio.run(main(args))
    print(json.dumps({"poller": "inapppy", "selected": selected, **counts,
                      "seconds": round(time.monotonic() - started, 3)}))
