import AppStoreSimulator
import Foundation
import Logging
import Testing

@testable import StatusPolling

/// The consumption answers' world in a test: ``SupportFixture`` (the simulator on loopback, a
/// store of either kind holding its population, a Server API client), a settable clock for the
/// sender, and Apple's `CONSUMPTION_REQUEST` for a chain the store holds.
struct ConsumptionFixture {
    typealias Support = SupportFixture

    let support: SupportFixture
    let clock: SettableClock
    var db: StoreUnderTest { support.db }
    var simulator: AppStoreSimulator { support.simulator }

    static func with(_ kind: StoreKind, _ body: (ConsumptionFixture) async throws -> Void) async throws {
        try await SupportFixture.with(kind) { support in
            try await body(ConsumptionFixture(support: support, clock: SettableClock(Support.start + Support.day)))
        }
    }

    /// A sender over the store, the fixture's client and clock.
    func sender(_ policy: ConsumptionPolicy = ConsumptionPolicy()) -> ConsumptionSender {
        ConsumptionSender(ledger: db.store, client: support.client, policy: policy, logger: support.logger, now: { [clock] in clock.ms })
    }

    /// A production chain in a paid period at the clock, its current transaction, and its user.
    func paidChain() throws -> (userID: String, chain: String, transaction: SimulatedChain.Transaction) {
        let (subscriber, chain) = try #require(support.activePaid(at: clock.ms))
        let current = try #require(chain.current(at: clock.ms))
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
