import AppStoreSimulator
import Foundation
import Logging
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The consumption answers' world in a test: the simulator on loopback, a store of either kind, a
/// Server API client (as a ``SupportFixture``, without its night), a settable clock for the
/// sender, rows holding the simulator's chains, and Apple's `CONSUMPTION_REQUEST` for one of them.
struct ConsumptionFixture {
    typealias Support = SupportFixture

    let support: SupportFixture
    let clock: SettableClock
    var db: StoreUnderTest { support.db }
    var simulator: AppStoreSimulator { support.simulator }

    /// The simulator on loopback, an empty store of `kind` and a Server API client trusting the
    /// simulator — no night run (a row is inserted per test by ``paidChain()``), so a case holds
    /// only the store's and the web service's connections.
    static func with(_ kind: StoreKind, _ body: (ConsumptionFixture) async throws -> Void) async throws {
        let population = SupportFixture.population()
        let simulator = AppStoreSimulator(population: population)
        var logger = Logger(label: "consumption")
        logger.logLevel = .critical
        try await withStore(kind) { db in
            try await SimulatorServer.withRunning(simulator) { endpoints in
                let key = simulator.serverAPIKey
                let credentials = ServerAPICredentials(
                    issuerID: key.issuerID, keyID: key.keyID, key: try InAppPurchaseKey(pem: key.privateKeyPEM), bundleID: population.configuration.bundleID)
                let configuration = ServerAPIConfiguration(
                    productionURL: endpoints.serverAPIURL, sandboxURL: endpoints.serverAPISandboxURL, credentials: credentials,
                    appAppleID: population.configuration.appAppleID, trustedRoots: AppleRootCertificate.defaultRoots + [simulator.pki.root], ratePerSecond: 200,
                    requestTimeout: VerifyReceiptTesting.patientTimeout, retry: RetryPolicy(maxAttempts: 2, initialBackoff: .milliseconds(5), maxBackoff: .milliseconds(20)))
                try await ServerAPIClient.withClient(configuration) { client in
                    let support = SupportFixture(simulator: simulator, endpoints: endpoints, db: db, client: client, logger: logger)
                    try await body(ConsumptionFixture(support: support, clock: SettableClock(Support.start + Support.day)))
                }
            }
        }
    }

    /// A sender over the store, the fixture's client and clock.
    func sender(_ policy: ConsumptionPolicy = ConsumptionPolicy()) -> ConsumptionSender {
        ConsumptionSender(ledger: db.store, client: support.client, policy: policy, logger: support.logger, now: { [clock] in clock.ms })
    }

    /// A production chain in a paid period at the clock, its current transaction, and its user,
    /// whose row holds it as a verification would have left it.
    func paidChain() async throws -> (userID: String, chain: String, transaction: SimulatedChain.Transaction) {
        let (subscriber, chain) = try #require(support.activePaid(at: clock.ms))
        let current = try #require(chain.current(at: clock.ms))
        try await db.insert(userID: subscriber.userID, receipt: "R", SubscriptionState(
            originalTransactionID: chain.originalTransactionID, productID: current.productID, environment: "Production", expiresAt: current.expiresMs,
            autoRenewStatus: true, autoRenewProductID: current.productID, transactionID: current.transactionID, purchasedAt: current.purchaseMs,
            ownershipType: "PURCHASED"))
        return (subscriber.userID, chain.originalTransactionID, current)
    }

    /// Apple's V2 `CONSUMPTION_REQUEST` about `transaction` of `chain`, signed at `signedAtMs`, with
    /// the renewal info the chain has (auto-renew on).
    func request(
        id: String, chain: String, transaction: SimulatedChain.Transaction, signedAtMs: Int64, source: NotificationSource = .push,
        transactionID: String? = nil
    ) -> ReceivedNotification {
        let answer = StatusAnswer(
            upstreamStatus: UpstreamStatus(backend: .notification, code: 1), bundleID: support.bundleID, environment: "Production",
            transactions: [SubscriptionTransaction(
                productID: transaction.productID, transactionID: transactionID ?? transaction.transactionID, originalTransactionID: chain,
                purchaseDateMs: transaction.purchaseMs, expiresDateMs: transaction.expiresMs, ownershipType: "PURCHASED")],
            renewals: [SubscriptionRenewalInfo(
                originalTransactionID: chain, productID: transaction.productID, autoRenewProductID: transaction.productID, autoRenewStatus: true,
                isInBillingRetryPeriod: false)],
            scope: .oneTransaction, subscriptionStatus: .active)
        return ReceivedNotification(
            id: id, version: 2, type: "CONSUMPTION_REQUEST", subtype: nil, signedAtMs: signedAtMs, appleStateAtMs: signedAtMs, originalTransactionID: chain,
            appAccountToken: nil, environment: .production, source: source, receivedAtMs: signedAtMs, answer: answer)
    }

    /// Receives `n` as the receiver would.
    func receive(_ n: ReceivedNotification) async throws -> [NotificationOutcome] {
        try await db.store.receive([n], ingest: NotificationIngest(bundleID: support.bundleID), nowMs: n.receivedAtMs)
    }

    /// The one recorded request of `id`.
    func recorded(_ id: String) async throws -> ConsumptionRequestRecord {
        try #require(try await db.store.consumptionRequests(ConsumptionQuery(notificationID: id)).first)
    }
}
