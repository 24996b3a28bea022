"""Mints the App Store Server Notifications V2 conformance corpus, then checks it with Apple's verifier.

Run by Scripts/conformance/mint.sh (which installs Apple's app-store-server-library for Python, and
with it `cryptography`, into an ignored virtual environment). Writes one file per notificationType
and subtype of Apple's current list, plus the chains Apple's verifier refuses, into
Tests/StatusPollingTests/Fixtures/apple-conformance/notifications/, each the body Apple POSTs:
{"signedPayload": "<JWS>"}.

Every JWS is signed the way the App Store signs: ES256 by the leaf of an x5c chain of three. The
chain and key are the test ones of Apple's Java library (certs/, MIT, see LICENSE.txt): leaf and
intermediate carrying Apple's marker extensions under testCA.der, and the testInvalidOID* chains
for the refusals. Envelopes follow Apple's own model files (models/): `data`, `summary`,
`externalPurchaseToken`, `appData`. Every `signedDate` lies inside the test certificates' validity
(2023-01-05 … 2033-01-01), except the one case that tests exactly that. Signatures are
deterministic (RFC 6979), so minting again writes the same bytes.

After minting, each file is handed to Apple's SignedDataVerifier (offline, as Apple's own tests
run it: online checks off, so validity is checked at the payload's signedDate, and strict X.509
checks off because the test certificates carry no authority key identifiers), configured for the
notification's environment, bundle com.example and appAppleId 1234: the good ones must verify, the
refusals must be refused. The script exits 1 otherwise.
"""
import base64
import copy
import json
import pathlib
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "Tests/StatusPollingTests/Fixtures/apple-conformance"
CERTS = FIXTURES / "certs"
MODELS = FIXTURES / "models"
OUT = FIXTURES / "notifications"

BUNDLE = "com.example"
APP_APPLE_ID = 1234
S0 = 1777593600000  # 2026-05-01T00:00:00Z: the first notification's signedDate.
MINUTE = 60_000
DAY = 86_400_000
CHAIN_ID = "2000000912345678"  # originalTransactionId of the subscription every case is about.
FIRST_PURCHASE = 1767225600000  # 2026-01-01T00:00:00Z
MONTHLY = "com.example.premium.monthly"
YEARLY = "com.example.premium.yearly"
BASIC = "com.example.basic.monthly"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def certificate_b64(name: str) -> str:
    data = (CERTS / name).read_bytes()
    cert = x509.load_der_x509_certificate(data) if name.endswith(".der") else x509.load_pem_x509_certificate(data)
    return base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()


CHAINS = {
    "valid": ["testLeaf.pem", "testIntermediate.pem", "testCA.der"],
    "invalid-leaf-oid": ["testInvalidOIDLeaf.pem", "testIntermediate.pem", "testCA.der"],
    "invalid-intermediate-oid": ["testInvalidIntermediateLeaf.pem", "testInvalidOIDIntermediate.pem", "testCA.der"],
}
X5C = {name: [certificate_b64(c) for c in chain] for name, chain in CHAINS.items()}
KEY = serialization.load_pem_private_key((CERTS / "testLeaf.key").read_bytes(), password=None)


def sign(payload: dict, chain: str = "valid") -> str:
    """A compact JWS of `payload`: header {"alg", "x5c"}, ES256 as r‖s."""
    header = b64url(json.dumps({"alg": "ES256", "x5c": X5C[chain]}, separators=(",", ":")).encode())
    body = b64url(json.dumps(payload, separators=(",", ":")).encode())
    der = KEY.sign(f"{header}.{body}".encode(), ec.ECDSA(hashes.SHA256(), deterministic_signing=True))
    r, s = decode_dss_signature(der)
    return f"{header}.{body}.{b64url(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def model(name: str) -> dict:
    return json.loads((MODELS / f"{name}.json").read_text())


def uuid(number: int) -> str:
    return f"a3c1d1e0-5f6b-4c1e-9d2a-{number:012d}"


def transaction(number: int, signed: int, environment: str, **changes) -> dict:
    """A subscription transaction of the chain, in the current period unless changed."""
    purchase = S0 - 4 * DAY
    value = {
        "transactionId": str(2000000912345700 + number),
        "originalTransactionId": CHAIN_ID,
        "webOrderLineItemId": str(2000000123456700 + number),
        "bundleId": BUNDLE,
        "productId": MONTHLY,
        "subscriptionGroupIdentifier": "21482947",
        "purchaseDate": purchase,
        "originalPurchaseDate": FIRST_PURCHASE,
        "expiresDate": purchase + 30 * DAY,
        "quantity": 1,
        "type": "Auto-Renewable Subscription",
        "inAppOwnershipType": "PURCHASED",
        "signedDate": signed,
        "environment": environment,
        "transactionReason": "RENEWAL",
        "storefront": "USA",
        "storefrontId": "143441",
        "price": 9990,
        "currency": "USD",
        "appTransactionId": "704289572311541234",
    }
    value.update(changes)
    return value


def renewal(signed: int, environment: str, **changes) -> dict:
    """The chain's renewal info: renewing monthly, unless changed."""
    value = {
        "originalTransactionId": CHAIN_ID,
        "autoRenewProductId": MONTHLY,
        "productId": MONTHLY,
        "autoRenewStatus": 1,
        "signedDate": signed,
        "environment": environment,
        "recentSubscriptionStartDate": FIRST_PURCHASE,
        "renewalDate": S0 + 26 * DAY,
        "renewalPrice": 9990,
        "currency": "USD",
        "appTransactionId": "704289572311541234",
    }
    value.update(changes)
    return value


# Each case: number (its uuid and signedDate), type, subtype, environment, what the payload carries.
# `status` None leaves it out (one-time purchases, TEST).
CASES = []


def case(number, type_, subtype=None, environment="Production", *, kind="subscription", status=1,
         tx=None, rn=None, data_extra=None, name=None, chain="valid", nested_chain="valid", signed=None):
    CASES.append(dict(number=number, type=type_, subtype=subtype, environment=environment, kind=kind, status=status,
                      tx=tx or {}, rn=rn, data_extra=data_extra or {}, chain=chain, nested_chain=nested_chain,
                      signed=signed or S0 + number * MINUTE,
                      name=name or (f"{type_}-{subtype}" if subtype else type_)))


renewed = S0 - MINUTE  # a renewal Apple charged a minute before it notified
commitment_tx = {"billingPlanType": "MONTHLY",
                 "commitmentInfo": {"billingPeriodNumber": 5, "commitmentExpiresDate": FIRST_PURCHASE + 365 * DAY,
                                    "commitmentPrice": 119880, "totalBillingPeriods": 12}}
commitment_rn = {"renewalBillingPlanType": "MONTHLY",
                 "commitmentInfo": {"commitmentAutoRenewProductId": YEARLY, "commitmentAutoRenewStatus": 1,
                                    "commitmentRenewalBillingPlanType": "BILLED_UPFRONT",
                                    "commitmentRenewalDate": FIRST_PURCHASE + 365 * DAY, "commitmentRenewalPrice": 99990}}

case(1, "SUBSCRIBED", "INITIAL_BUY", tx={"transactionId": CHAIN_ID, "purchaseDate": FIRST_PURCHASE, "expiresDate": FIRST_PURCHASE + 31 * DAY,
                                          "transactionReason": "PURCHASE"})
case(2, "SUBSCRIBED", "RESUBSCRIBE", "Sandbox", tx={"transactionReason": "PURCHASE", "offerType": 4, "offerIdentifier": "com.example.winback",
                                                     "offerDiscountType": "FREE_TRIAL", "offerPeriod": "P1M"})
case(3, "DID_CHANGE_RENEWAL_PREF", "UPGRADE", tx={"productId": YEARLY, "purchaseDate": S0 - MINUTE, "expiresDate": S0 - MINUTE + 365 * DAY,
                                                   "transactionReason": "PURCHASE", "price": 99990}, rn={"autoRenewProductId": YEARLY, "productId": YEARLY})
case(4, "DID_CHANGE_RENEWAL_PREF", "DOWNGRADE", rn={"autoRenewProductId": BASIC})
case(5, "DID_CHANGE_RENEWAL_PREF")
case(6, "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED")
case(7, "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", rn={"autoRenewStatus": 0})
case(8, "OFFER_REDEEMED", tx={"offerType": 2, "offerIdentifier": "com.example.promo.half", "offerDiscountType": "PAY_AS_YOU_GO", "offerPeriod": "P3M"},
     rn={"offerType": 2, "offerIdentifier": "com.example.promo.half", "offerDiscountType": "PAY_AS_YOU_GO", "offerPeriod": "P3M"})
case(9, "OFFER_REDEEMED", "UPGRADE", tx={"productId": YEARLY, "transactionReason": "PURCHASE", "offerType": 3, "offerIdentifier": "YEARLYCODE",
                                          "offerDiscountType": "PAY_UP_FRONT", "expiresDate": S0 + 365 * DAY},
     rn={"autoRenewProductId": YEARLY, "productId": YEARLY})
case(10, "OFFER_REDEEMED", "DOWNGRADE", rn={"autoRenewProductId": BASIC, "offerType": 2, "offerIdentifier": "com.example.basic.promo"})
# A monthly subscription with a 12-month commitment renews into its fifth billing period.
case(11, "DID_RENEW", tx={"purchaseDate": renewed, "expiresDate": renewed + 30 * DAY, **commitment_tx},
     rn={"renewalDate": renewed + 30 * DAY, **commitment_rn})
case(12, "DID_RENEW", "BILLING_RECOVERY", tx={"purchaseDate": renewed, "expiresDate": renewed + 30 * DAY})
case(13, "EXPIRED", "VOLUNTARY", status=2, tx={"expiresDate": S0 - DAY}, rn={"autoRenewStatus": 0, "expirationIntent": 1})
case(14, "EXPIRED", "BILLING_RETRY", status=2, tx={"expiresDate": S0 - 60 * DAY},
     rn={"autoRenewStatus": 0, "expirationIntent": 2, "isInBillingRetryPeriod": False})
case(15, "EXPIRED", "PRICE_INCREASE", status=2, tx={"expiresDate": S0 - DAY},
     rn={"autoRenewStatus": 0, "expirationIntent": 3, "priceIncreaseStatus": 0, "renewalPrice": 12990})
case(16, "EXPIRED", "PRODUCT_NOT_FOR_SALE", status=2, tx={"expiresDate": S0 - DAY}, rn={"autoRenewStatus": 0, "expirationIntent": 4})
case(17, "EXPIRED", status=2, tx={"expiresDate": S0 - DAY}, rn={"autoRenewStatus": 0, "expirationIntent": 5})
case(18, "DID_FAIL_TO_RENEW", status=3, tx={"expiresDate": S0 - MINUTE}, rn={"isInBillingRetryPeriod": True, "expirationIntent": 2})
case(19, "DID_FAIL_TO_RENEW", "GRACE_PERIOD", status=4, tx={"expiresDate": S0 - MINUTE},
     rn={"isInBillingRetryPeriod": True, "expirationIntent": 2, "gracePeriodExpiresDate": S0 + 16 * DAY})
case(20, "GRACE_PERIOD_EXPIRED", status=3, tx={"expiresDate": S0 - 16 * DAY},
     rn={"isInBillingRetryPeriod": True, "expirationIntent": 2, "gracePeriodExpiresDate": S0 - MINUTE})
case(21, "PRICE_INCREASE", "PENDING", rn={"priceIncreaseStatus": 0, "renewalPrice": 12990})
case(22, "PRICE_INCREASE", "ACCEPTED", rn={"priceIncreaseStatus": 1, "renewalPrice": 12990})
case(23, "REFUND", status=5, tx={"revocationDate": S0 - MINUTE, "revocationReason": 0, "revocationType": "REFUND_FULL",
                                  "revocationPercentage": 100000}, rn={"autoRenewStatus": 0})
case(24, "REFUND_DECLINED")
case(25, "REFUND_REVERSED")
case(26, "CONSUMPTION_REQUEST", data_extra={"consumptionRequestReason": "UNINTENDED_PURCHASE"})
case(27, "RENEWAL_EXTENDED", tx={"expiresDate": S0 + 33 * DAY}, rn={"renewalDate": S0 + 33 * DAY})
case(28, "RENEWAL_EXTENSION", "SUMMARY", kind="summary")
case(29, "RENEWAL_EXTENSION", "FAILURE")
case(30, "REVOKE", status=5, tx={"inAppOwnershipType": "FAMILY_SHARED", "revocationDate": S0 - MINUTE, "revocationReason": 0,
                                  "revocationType": "FAMILY_REVOKE", "price": 0})
case(31, "TEST", environment="Sandbox", kind="test")
case(32, "EXTERNAL_PURCHASE_TOKEN", "UNREPORTED", kind="token")
case(33, "EXTERNAL_PURCHASE_TOKEN", "CREATED", kind="token")
case(34, "EXTERNAL_PURCHASE_TOKEN", "ACTIVE_TOKEN_REMINDER", kind="token")
case(35, "ONE_TIME_CHARGE", kind="one-time")
case(36, "RESCIND_CONSENT", kind="consent")
case(37, "METADATA_UPDATE", kind="advanced-commerce")
case(38, "MIGRATION", kind="advanced-commerce")
case(39, "PRICE_CHANGE", kind="advanced-commerce")
# Refusals: the testInvalidOID* chains of Apple's Java library, on the outer payload and nested.
case(90, "DID_RENEW", name="refused-invalid-leaf-oid", chain="invalid-leaf-oid")
case(91, "DID_RENEW", name="refused-invalid-intermediate-oid", chain="invalid-intermediate-oid")
case(92, "DID_RENEW", name="refused-nested-invalid-leaf-oid", nested_chain="invalid-leaf-oid")
# Signed after the test certificates expired (2034-01-01): a chain not valid at signedDate.
case(93, "DID_RENEW", name="refused-signed-after-expiry", signed=2019686400000)


def payload(c: dict) -> dict:
    signed, env, number = c["signed"], c["environment"], c["number"]
    app_id = {"appAppleId": APP_APPLE_ID} if env == "Production" else {}
    outer = {"notificationType": c["type"]}
    if c["subtype"]:
        outer["subtype"] = c["subtype"]
    outer["notificationUUID"] = uuid(number)
    kind = c["kind"]
    if kind == "summary":
        summary = model("signedSummaryNotification")["summary"]
        summary.update(environment=env, appAppleId=APP_APPLE_ID, bundleId=BUNDLE, productId=MONTHLY,
                       requestIdentifier="5b4ac4e3-6a7c-4f7e-8d6e-0f2f3c1d9a77", storefrontCountryCodes=["USA", "CAN", "MEX"],
                       succeededCount=2418, failedCount=3)
        outer["summary"] = summary
    elif kind == "token":
        token = model("signedExternalPurchaseTokenNotification")["externalPurchaseToken"]
        token.update(externalPurchaseId=f"b2158121-7af9-49d4-9561-{number:012d}", tokenCreationDate=signed - 10 * DAY,
                     appAppleId=APP_APPLE_ID, bundleId=BUNDLE)
        if c["subtype"] != "UNREPORTED":  # custom link tokens (June 2025)
            token.update(tokenExpirationDate=signed + 20 * DAY, tokenType="SERVICES" if c["subtype"] == "CREATED" else "ACQUISITION")
        outer["externalPurchaseToken"] = token
    elif kind == "consent":
        app_transaction = model("appTransaction")
        app_transaction.update(receiptType=env, appAppleId=APP_APPLE_ID, bundleId=BUNDLE, receiptCreationDate=signed,
                               originalPurchaseDate=FIRST_PURCHASE, appTransactionId="704289572311541234")
        for key in ("deviceVerification", "deviceVerificationNonce", "preorderDate"):
            app_transaction.pop(key)
        app_data = model("signedRescindConsentNotification")["appData"]
        app_data.update(appAppleId=APP_APPLE_ID, bundleId=BUNDLE, environment=env, signedAppTransactionInfo=sign(app_transaction))
        outer["appData"] = app_data
    else:
        data = {"appAppleId": APP_APPLE_ID, "bundleId": BUNDLE, "bundleVersion": "4.2.1", "environment": env}
        if env != "Production":
            data.pop("appAppleId")  # Apple sends none in the sandbox
        if kind == "subscription":
            data["signedTransactionInfo"] = sign(transaction(number, signed, env, **c["tx"]), c["nested_chain"])
            data["signedRenewalInfo"] = sign(renewal(signed, env, **(c["rn"] or {})))
            data["status"] = c["status"]
        elif kind == "one-time":
            data["signedTransactionInfo"] = sign({
                "transactionId": str(2000000912345700 + number), "originalTransactionId": str(2000000912345700 + number),
                "bundleId": BUNDLE, "productId": "com.example.coins.500", "purchaseDate": signed - MINUTE,
                "originalPurchaseDate": signed - MINUTE, "quantity": 2, "type": "Consumable", "inAppOwnershipType": "PURCHASED",
                "signedDate": signed, "environment": env, "transactionReason": "PURCHASE", "storefront": "GBR",
                "storefrontId": "143444", "price": 4990, "currency": "GBP", "appTransactionId": "704289572311541234"})
        elif kind == "advanced-commerce":
            info = model("signedTransaction")["advancedCommerceInfo"]
            tx = transaction(number, signed, env, productId="com.example.ac.plan", **{"advancedCommerceInfo": info})
            rn_info = model("signedRenewalInfo")["advancedCommerceInfo"]
            rn = renewal(signed, env, productId="com.example.ac.plan", autoRenewProductId="com.example.ac.plan", advancedCommerceInfo=rn_info)
            data.update(signedTransactionInfo=sign(tx), signedRenewalInfo=sign(rn), status=1)
        data.update(c["data_extra"])
        outer["data"] = data
    outer["version"] = "2.0"
    outer["signedDate"] = signed
    return outer


def check_with_apple(c: dict, body: dict) -> str | None:
    """None when Apple's verifier agrees with the case; else what went wrong."""
    from appstoreserverlibrary.models.Environment import Environment
    from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException

    environment = Environment.SANDBOX if c["environment"] == "Sandbox" else Environment.PRODUCTION
    verifier = SignedDataVerifier([(CERTS / "testCA.der").read_bytes()], False, environment, BUNDLE, APP_APPLE_ID)
    verifier._chain_verifier.enable_strict_checks = False  # as Apple's tests: no authority key identifiers
    refused = c["name"].startswith("refused-")
    try:
        decoded = verifier.verify_and_decode_notification(body["signedPayload"])
        if decoded.data and decoded.data.signedTransactionInfo:
            verifier.verify_and_decode_signed_transaction(decoded.data.signedTransactionInfo)
        if decoded.data and decoded.data.signedRenewalInfo:
            verifier.verify_and_decode_renewal_info(decoded.data.signedRenewalInfo)
    except VerificationException as error:
        return None if refused else f"refused by Apple's verifier: {error}"
    if refused:
        return "accepted by Apple's verifier, expected a refusal"
    if decoded.rawNotificationType != c["type"] or decoded.rawSubtype != c["subtype"] or decoded.notificationUUID != uuid(c["number"]):
        return "decoded to another type, subtype or uuid"
    return None


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for stale in OUT.glob("*.json"):
        stale.unlink()
    problems = []
    for c in CASES:
        body = {"signedPayload": sign(payload(c), c["chain"])}
        (OUT / f"{c['name']}.json").write_text(json.dumps(body) + "\n")
        problem = check_with_apple(c, body)
        if problem:
            problems.append(f"{c['name']}: {problem}")
    print(f"minted {len(CASES)} notification(s) into {OUT.relative_to(ROOT)}; Apple's verifier agreed with {len(CASES) - len(problems)}")
    for problem in problems:
        print(f"  {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
