import AppStoreSimulator
import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// `lookup`'s library side on every store, against the simulator over loopback: an order id from
/// the customer's receipt (or a transaction id) names Apple's verified transactions and the row
/// that owns their chain; an order id Apple does not know, or one of another app, names nothing.
@Suite struct OrderLookupTests {
    typealias Fixture = SupportFixture

    static let mixed = Population(PopulationConfiguration(
        subscribers: 60, seed: 40, startMs: Fixture.start, horizonMs: Fixture.start + 200 * Fixture.day, sandboxShare: 0.2, refundRate: 0.3, earlierRefundRate: 0.2))

    @Test(arguments: StoreKind.available) func anOrderIDNamesItsTransactionAndTheRowThatOwnsItsChain(kind: StoreKind) async throws {
        try await Fixture.with(kind, population: Self.mixed) { f in
            let clock = Fixture.start
            // A chain whose second transaction is a renewal (not a resubscription or an upgrade).
            let (subscriber, chain) = try #require(f.subscriber { _, chain in
                let visible = chain.transactions.filter { $0.purchaseMs <= clock }
                return visible.count >= 2 && !chain.purchases.contains { $0.atMs == visible[1].purchaseMs }
            })
            // A renewal's order, not only the first purchase's.
            let renewal = chain.transactions.filter { $0.purchaseMs <= clock }[1]
            let orderID = try #require(f.simulator.orderID(ofTransaction: renewal.transactionID))
            #expect(orderID.count == 10)
            #expect(orderID.first == "M")

            let transactions = try await f.client.lookUpOrder(orderID, logger: f.logger)
            #expect(transactions.count == 1)
            let t = try #require(transactions.first)
            #expect(t.transactionID == renewal.transactionID)
            #expect(t.originalTransactionID == chain.originalTransactionID)
            #expect(t.productID == renewal.productID)
            #expect(t.purchaseDateMs == renewal.purchaseMs)
            #expect(t.expiresDateMs == renewal.expiresMs)
            #expect(t.environment == "Production")
            #expect(t.transactionReason == "RENEWAL")
            #expect(t.webOrderLineItemID == "9\(renewal.transactionID)")

            let chains = try await f.desk.chains(of: transactions)
            #expect(chains.count == 1)
            let owned = try #require(chains.first)
            let row = try #require(owned.row)
            let truth = try #require(subscriber.entitlement(originalTransactionID: chain.originalTransactionID, at: clock))
            #expect(row.userID == subscriber.userID)
            #expect(row.state.originalTransactionID == chain.originalTransactionID)
            #expect(row.state.expiresAt == truth.expiresAtMs)
            #expect(row.state.transactionID == truth.transactionID)
            #expect(owned.bookkeeping?.lastVerifiedAt == clock)
            #expect(owned.history.count == 1)
            #expect(owned.history.first?.entitlementBefore == "unverified")
            #expect(owned.history.first?.source == "poll")
            // Production knew the order: one request.
            #expect(f.simulator.statistics.serverAPIRequests["inApps/v1/lookup"] == 1)
        }
    }

    @Test(arguments: StoreKind.available) func unknownOrdersAndOtherAppsOrdersNameNothing(kind: StoreKind) async throws {
        try await Fixture.with(kind, population: Self.mixed) { f in
            // Another app's simulator (another seed) issues other order ids.
            let other = AppStoreSimulator(population: Fixture.population(subscribers: 60, seed: 41))
            let (_, foreignChain) = try #require(other.population.subscribers.first { $0.environment == "Production" }.map { ($0, $0.chains[0]) })
            let foreign = try #require(other.orderID(ofTransaction: foreignChain.transactions[0].transactionID))
            for orderID in [foreign, "MZZZZZZZZZ", "M000000000", "NOTANORDER"] {
                #expect(try await f.client.lookUpOrder(orderID, logger: f.logger).isEmpty, "\(orderID)")
            }
            // Each was asked in production, then in the sandbox (Apple's status 1 both times).
            #expect(f.simulator.statistics.serverAPIRequests["inApps/v1/lookup"] == 8)
            // A transaction id Apple does not know.
            #expect(try await f.client.transactionInfo("999999999", logger: f.logger) == nil)
        }
    }

    @Test(arguments: StoreKind.available) func aSandboxOrderAndATransactionIDAreFoundToo(kind: StoreKind) async throws {
        try await Fixture.with(kind, population: Self.mixed) { f in
            let clock = Fixture.start
            let (subscriber, chain) = try #require(f.subscriber("Sandbox") { _, _ in true })
            let first = chain.transactions[0]
            let orderID = try #require(f.simulator.orderID(ofTransaction: first.transactionID))
            let transactions = try await f.client.lookUpOrder(orderID, logger: f.logger)
            #expect(transactions.map(\.transactionID) == [first.transactionID])
            #expect(transactions.first?.environment == "Sandbox")
            #expect(transactions.first?.transactionReason == "PURCHASE")
            let owned = try await f.desk.chains(of: transactions)
            #expect(owned.first?.row?.userID == subscriber.userID)

            let current = try #require(chain.current(at: clock))
            let info = try #require(try await f.client.transactionInfo(current.transactionID, logger: f.logger))
            #expect(info.transactionID == current.transactionID)
            #expect(info.originalTransactionID == chain.originalTransactionID)
            #expect(info.expiresDateMs == current.expiresMs)
            #expect(info.environment == "Sandbox")
            // Production answered 4040010 first.
            #expect(f.simulator.statistics.serverAPIRequests["inApps/v1/transactions"] == 2)
        }
    }

    @Test(arguments: StoreKind.available) func refundsAreListedWithWhetherTheRowShowsThem(kind: StoreKind) async throws {
        try await Fixture.with(kind, population: Self.mixed) { f in
            let clock = Fixture.start
            let (subscriber, chain) = try #require(f.subscriber { subscriber, chain in
                !chain.isFamilyShared && subscriber.chains.contains { !$0.isFamilyShared && $0.transactions.contains { $0.refund(at: clock) != nil } }
                    && chain.transactions.contains { $0.refund(at: clock) != nil }
            })
            let expected = subscriber.chains.filter { !$0.isFamilyShared }.flatMap { c in c.transactions.filter { $0.purchaseMs <= clock && $0.refund(at: clock) != nil } }
                .sorted { ($0.refund(at: clock)!, $0.transactionID) < ($1.refund(at: clock)!, $1.transactionID) }
            let refunds = try #require(try await f.client.refundHistory(chain.originalTransactionID, logger: f.logger))
            #expect(refunds.map(\.transactionID) == expected.map(\.transactionID))
            #expect(refunds.map(\.revocationDateMs) == expected.map { $0.refund(at: clock) })
            #expect(refunds.map(\.revocationReason) == expected.map(\.refundReason))
            #expect(refunds.allSatisfy { $0.revocationType == "REFUND_FULL" })

            let lines = try await f.desk.refundLines(refunds)
            for (line, refunded) in zip(lines, expected) {
                let row = try await f.row(owning: line.transaction.originalTransactionID ?? "")
                #expect(line.subscriptionID == row.id)
                let owner = try #require(subscriber.chains.first { $0.originalTransactionID == line.transaction.originalTransactionID })
                let isCurrent = owner.current(at: clock)?.transactionID == refunded.transactionID
                #expect(line.reflection == (isCurrent ? .reflected : .earlierPeriod), "\(refunded.transactionID)")
                if isCurrent { #expect(row.state.cancelledAt == refunded.refund(at: clock)) }
                // The ledger holds what the night's answers brought: each row's current transaction
                // (the Server API's statuses carry no earlier period), with its refund and price.
                if isCurrent {
                    let record = try #require(line.ledger, "\(refunded.transactionID)")
                    let offer = SimulatedOffer.of(refunded, in: owner)
                    #expect(record == LedgerRecord(
                        transactionID: refunded.transactionID, originalTransactionID: line.transaction.originalTransactionID ?? "", subscriptionID: row.id,
                        productID: refunded.productID, purchasedAtMs: refunded.purchaseMs, expiresAtMs: refunded.expiresMs,
                        revokedAtMs: refunded.refund(at: clock), revocationReason: refunded.refundReason, revocationType: "REFUND_FULL",
                        price: Int64(SimulatedOffer.price(refunded, in: owner)), currency: Storefront.of(owner).currency, storefront: Storefront.of(owner).code,
                        offerType: offer?.type, offerIdentifier: offer?.identifier, offerDiscountType: offer?.discountType, asOfMs: clock,
                        firstSource: "poll", firstSeenAtMs: clock, updatedAtMs: clock))
                } else {
                    #expect(line.ledger == nil, "\(refunded.transactionID)")
                }
            }
            // A customer without refunds: an empty history, one page.
            let (_, calm) = try #require(f.subscriber { subscriber, _ in subscriber.chains.allSatisfy { $0.transactions.allSatisfy { $0.refundedAtMs == nil } } })
            #expect(try await f.client.refundHistory(calm.originalTransactionID, logger: f.logger) == [])
            #expect(try await f.client.refundHistory("999999999", logger: f.logger) == nil)
        }
    }
}
