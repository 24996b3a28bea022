import Foundation
@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Server API answers for the client tests, signed by a test PKI the client is told to trust.
struct ServerAPIAnswers {
    let pki: TestPKI
    static let bundle = SignedPayloads.bundle
    static let keyPEM = AppStoreServerJWTTests.pem

    /// One chain's entry of `lastTransactions`.
    func lastTransaction(
        _ otid: String, environment: String = "Production", status: Int = 1, transaction: [String: Any] = [:], renewal: [String: Any] = [:]
    ) -> [String: Any] {
        var signedTransaction = SignedPayloads.transaction(["originalTransactionId": otid, "environment": environment])
        for (key, value) in transaction { signedTransaction[key] = value }
        var signedRenewal = SignedPayloads.renewal(["originalTransactionId": otid, "environment": environment])
        for (key, value) in renewal { signedRenewal[key] = value }
        return [
            "status": status, "originalTransactionId": otid,
            "signedTransactionInfo": pki.sign(signedTransaction), "signedRenewalInfo": pki.sign(signedRenewal),
        ]
    }

    /// A StatusResponse body holding `entries` in one group.
    func statuses(_ entries: [[String: Any]], environment: String = "Production") -> String {
        json(["environment": environment, "bundleId": Self.bundle, "appAppleId": 1_234_567_890, "data": [["subscriptionGroupIdentifier": "21000001", "lastTransactions": entries]]])
    }

    func json(_ object: [String: Any]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    func configuration(production: String, sandbox: String, rate: Int = 40, attempts: Int = 4, readHistory: Bool = false) throws -> ServerAPIConfiguration {
        ServerAPIConfiguration(
            productionURL: production, sandboxURL: sandbox,
            credentials: ServerAPICredentials(issuerID: "57246542-96fe-1a63-e053-0824d011072a", keyID: "ABCDEFGHIJ", key: try InAppPurchaseKey(pem: Self.keyPEM), bundleID: Self.bundle),
            appAppleID: 1_234_567_890, trustedRoots: [pki.root], ratePerSecond: rate, requestTimeout: VerifyReceiptTesting.patientTimeout,
            retry: RetryPolicy(maxAttempts: attempts, initialBackoff: .milliseconds(10), maxBackoff: .milliseconds(20), maxRetryAfter: .seconds(5)),
            longBackoff: .milliseconds(400), readHistory: readHistory)
    }

    static func row(_ otid: String? = "1000000100", environment: String? = nil, receipt: String = "cmVjZWlwdA==") -> SubscriptionRow {
        SubscriptionRow(id: 7, userID: "user-7", latestReceipt: receipt, state: SubscriptionState(originalTransactionID: otid, environment: environment))
    }
}
