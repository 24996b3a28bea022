"""Cross-checks the simulator's App Store Server API with Apple's own Python library.

Started by Scripts/server-api-crosscheck.sh with a running `status-poller-demo simulate`. With Apple's
app-store-server-library (code nobody here wrote) it calls Get All Subscription Statuses and Get
Transaction History v2 for production and sandbox subscribers at several simulated clocks,
decodes with the library's models, and checks that:
  - SignedDataVerifier(trusting the simulator's root, offline) accepts every signedTransactionInfo,
    signedRenewalInfo and history transaction, and rejects them when it trusts another root;
  - the decoded values equal the simulator's /simulator/truth (status, expiry, product, renewal);
  - a production id asked of the sandbox base is Apple's 4040010.
Prints a summary with counts; exits 1 on any mismatch.
"""
import argparse
import datetime
import http.client
import json
import re
import sys
import urllib.parse

from appstoreserverlibrary.api_client import APIException, AppStoreServerAPIClient, GetTransactionHistoryVersion
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.models.HistoryResponse import HistoryResponse
from appstoreserverlibrary.models.TransactionHistoryRequest import Order, TransactionHistoryRequest
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

STATUS = {"active": 1, "expired": 2, "billing_retry": 3, "grace_period": 4, "refunded": 5}


def read_ready_output(path):
    """The values `simulate` printed once ready: base URLs, ids and key file paths."""
    text = open(path).read()

    def value(label):
        found = re.search(r"^\s*" + re.escape(label) + r"\s+(\S+)\s*$", text, re.MULTILINE)
        if not found:
            raise SystemExit(f"error: the simulator printed no '{label}' line")
        return found.group(1)

    return {
        "production": value("server-api"), "sandbox": value("server-api-sandbox"), "bundle_id": value("bundle id"),
        "app_apple_id": int(value("app apple id")), "key_id": value("key id"), "issuer_id": value("issuer id"),
        "private_key": value("private key"), "root_der": value("root (DER)"), "base": value("server-api"),
    }


def stranger_root():
    """A self-signed P-256 CA nobody issued the simulator's chain from."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Someone Else's Root")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=3650))
                   .not_valid_after(now + datetime.timedelta(days=3650))
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .sign(key, hashes.SHA256()))
    return certificate.public_bytes(serialization.Encoding.DER)


class Admin:
    """The simulator's /simulator/… routes."""

    def __init__(self, base):
        parsed = urllib.parse.urlsplit(base)
        self.host, self.port = parsed.hostname, parsed.port

    def call(self, method, path):
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            connection.request(method, path)
            response = connection.getresponse()
            return response.status, json.loads(response.read())
        finally:
            connection.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--simulator-output", required=True)
    parser.add_argument("--subscribers", type=int, required=True)
    parser.add_argument("--per-clock", type=int, default=40, help="subscribers checked at each clock")
    args = parser.parse_args()
    ready = read_ready_output(args.simulator_output)
    admin = Admin(ready["base"])
    signing_key = open(ready["private_key"], "rb").read()
    root = open(ready["root_der"], "rb").read()
    other_root = stranger_root()
    bundle, app_apple_id = ready["bundle_id"], ready["app_apple_id"]
    clients, verifiers, strangers = {}, {}, {}
    for name, environment in (("Production", Environment.PRODUCTION), ("Sandbox", Environment.SANDBOX)):
        client = AppStoreServerAPIClient(signing_key, ready["key_id"], ready["issuer_id"], bundle, environment)
        # The library's base URL attribute (api_client.py, BaseAppStoreServerAPIClient.__init__).
        client._base_url = ready["production"] if name == "Production" else ready["sandbox"]
        clients[name] = client
        verifiers[name] = SignedDataVerifier([root], False, environment, bundle, app_apple_id)
        strangers[name] = SignedDataVerifier([other_root], False, environment, bundle, app_apple_id)

    counts = {"statuses": 0, "signed_accepted": 0, "signed_rejected_by_other_root": 0, "history_pages": 0,
              "history_transactions": 0, "wrong_environment_4040010": 0, "mismatches": 0}
    environments_seen, statuses_seen = set(), set()

    def mismatch(message):
        counts["mismatches"] += 1
        if counts["mismatches"] <= 20:
            print("MISMATCH " + message, file=sys.stderr)

    def accepted(verify, stranger_verify, jws, what):
        decoded = verify(jws)
        counts["signed_accepted"] += 1
        try:
            stranger_verify(jws)
            mismatch(f"{what} verified against a root that did not issue it")
        except VerificationException:
            counts["signed_rejected_by_other_root"] += 1
        return decoded

    # Every subscriber is looked at once, spread over clocks 0, 40, 100 and 200 days on.
    users = list(range(1, args.subscribers + 1))
    for step, advance in enumerate((0, 40, 60, 100)):
        if advance:
            admin.call("POST", f"/simulator/clock?advance_days={advance}")
        for index in users[step::4][: args.per_clock]:
            _, truth = admin.call("GET", f"/simulator/truth?user_id=sim-user-{index}")
            environment = truth["environment"]
            environments_seen.add(environment)
            chains = {chain["original_transaction_id"]: chain for chain in truth["chains"]}
            if not chains:
                continue
            first_id = next(iter(chains))
            verifier, stranger = verifiers[environment], strangers[environment]
            response = clients[environment].get_all_subscription_statuses(first_id)
            if response.environment.value != environment or response.bundleId != bundle:
                mismatch(f"sim-user-{index}: response environment/bundle {response.environment} {response.bundleId}")
            if (response.appAppleId == app_apple_id) != (environment == "Production"):
                mismatch(f"sim-user-{index}: appAppleId {response.appAppleId} in {environment}")
            seen = set()
            for group in response.data or []:
                for item in group.lastTransactions or []:
                    counts["statuses"] += 1
                    chain = chains.get(item.originalTransactionId)
                    if chain is None:
                        mismatch(f"sim-user-{index}: unknown chain {item.originalTransactionId}")
                        continue
                    seen.add(item.originalTransactionId)
                    statuses_seen.add(chain["state"])
                    transaction = accepted(verifier.verify_and_decode_signed_transaction, stranger.verify_and_decode_signed_transaction,
                                           item.signedTransactionInfo, "signedTransactionInfo")
                    renewal = accepted(verifier.verify_and_decode_renewal_info, stranger.verify_and_decode_renewal_info,
                                       item.signedRenewalInfo, "signedRenewalInfo")
                    expected = [
                        ("status", item.rawStatus, STATUS[chain["state"]]),
                        ("expiresDate", transaction.expiresDate, chain["expires_at"]),
                        ("productId", transaction.productId, chain["product_id"]),
                        ("subscriptionGroupIdentifier", transaction.subscriptionGroupIdentifier, group.subscriptionGroupIdentifier),
                        ("revocationDate", transaction.revocationDate, chain.get("cancelled_at")),
                        ("renewal.originalTransactionId", renewal.originalTransactionId, item.originalTransactionId),
                        ("renewal.autoRenewStatus", renewal.rawAutoRenewStatus, 1 if chain["auto_renew_status"] else 0),
                        ("renewal.autoRenewProductId", renewal.autoRenewProductId, chain["auto_renew_product_id"]),
                        ("renewal.gracePeriodExpiresDate", renewal.gracePeriodExpiresDate, chain.get("grace_period_expires_at")),
                        ("renewal.expirationIntent", renewal.rawExpirationIntent, chain.get("expiration_intent")),
                        ("renewal.renewalDate", renewal.renewalDate, chain["expires_at"]),
                    ]
                    for field, got, want in expected:
                        if got != want:
                            mismatch(f"sim-user-{index} {item.originalTransactionId} ({chain['state']}): {field} {got!r} != {want!r}")
            if seen != set(chains):
                mismatch(f"sim-user-{index}: chains answered {sorted(seen)} != truth {sorted(chains)}")

            # History v2, every page, ascending: the latest purchase not upgraded away is the truth's
            # (not the latest expiry: an upgrade from yearly to monthly starts a shorter period).
            revision, latest = None, {}
            while True:
                page: HistoryResponse = clients[environment].get_transaction_history(
                    first_id, revision, TransactionHistoryRequest(sort=Order.ASCENDING), GetTransactionHistoryVersion.V2)
                counts["history_pages"] += 1
                if len(page.signedTransactions or []) > 20:
                    mismatch(f"sim-user-{index}: a page of {len(page.signedTransactions)}")
                for jws in page.signedTransactions or []:
                    decoded = accepted(verifier.verify_and_decode_signed_transaction, stranger.verify_and_decode_signed_transaction, jws, "history")
                    counts["history_transactions"] += 1
                    if not decoded.isUpgraded:
                        known = latest.get(decoded.originalTransactionId)
                        if known is None or decoded.purchaseDate >= known[0]:
                            latest[decoded.originalTransactionId] = (decoded.purchaseDate, decoded.expiresDate)
                revision = page.revision
                if not page.hasMore:
                    break
            for original, chain in chains.items():
                if latest.get(original, (0, None))[1] != chain["expires_at"]:
                    mismatch(f"sim-user-{index}: history's latest purchase of {original} expires {latest.get(original)} != {chain['expires_at']}")
                elif latest[original][0] != chain["purchased_at"]:
                    mismatch(f"sim-user-{index}: history's latest purchase of {original} {latest[original][0]} != {chain['purchased_at']}")

            # The other environment does not know this id: Apple's 4040010.
            other = "Sandbox" if environment == "Production" else "Production"
            try:
                clients[other].get_all_subscription_statuses(first_id)
                mismatch(f"sim-user-{index}: {other} answered for a {environment} id")
            except APIException as error:
                if error.http_status_code == 404 and error.raw_api_error == 4040010:
                    counts["wrong_environment_4040010"] += 1
                else:
                    mismatch(f"sim-user-{index}: {other} answered {error.http_status_code} {error.raw_api_error}")

    print("server-api crosscheck (Apple's app-store-server-library): "
          + ", ".join(f"{name} {value}" for name, value in counts.items())
          + f"; environments {sorted(environments_seen)}; states {sorted(statuses_seen)}")
    if "Sandbox" not in environments_seen or "Production" not in environments_seen:
        mismatch("both environments were not exercised")
    if counts["statuses"] == 0 or counts["signed_rejected_by_other_root"] != counts["signed_accepted"]:
        mismatch("not every signed item was verified and rejected by the other root")
    if counts["mismatches"]:
        print(f"{counts['mismatches']} mismatches", file=sys.stderr)
        return 1
    print("server-api crosscheck: every answer verified and agreed with the truth")
    return 0


if __name__ == "__main__":
    sys.exit(main())
