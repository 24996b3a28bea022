import Foundation
import Testing

@testable import EntitlementCore
@testable import StatusPolling

/// The ledger (`subscription_transactions`) as every writer fills it, on both stores: each Apple
/// transaction once, a fact once known kept, what Apple changes later taken from the newest data,
/// and an answer that changes nothing writing nothing.
@Suite struct LedgerWriteTests {
    static let t0: Int64 = 1_790_000_000_000
    static let day: Int64 = 86_400_000
    static let chain = "2000000100"

    /// A monthly period of the chain: id, purchased `n` months after t0.
    static func period(_ id: String, month n: Int64, revokedAt: Int64? = nil, facts: TransactionFacts = TransactionFacts()) -> SubscriptionTransaction {
        SubscriptionTransaction(
            productID: "com.example.premium.monthly", transactionID: id, originalTransactionID: chain, purchaseDateMs: t0 + n * 30 * day,
            expiresDateMs: t0 + (n + 1) * 30 * day, revocationDateMs: revokedAt, ownershipType: "PURCHASED", facts: facts)
    }

    static func state(of transaction: SubscriptionTransaction) -> SubscriptionState {
        SubscriptionState(
            originalTransactionID: chain, productID: transaction.productID, environment: "Production", expiresAt: transaction.expiresDateMs,
            autoRenewStatus: true, cancelledAt: transaction.revocationDateMs, transactionID: transaction.transactionID,
            purchasedAt: transaction.purchaseDateMs, ownershipType: "PURCHASED")
    }

    /// An answer about row `id` whose effective transaction is the last of `transactions`, true at `asOf`.
    static func update(
        _ id: Int64, _ transactions: [SubscriptionTransaction], asOf: Int64, provenance: Provenance = .poll(runID: nil), ledgerSource: LedgerSource? = nil
    ) -> ResultBatch {
        ResultBatch([.verified(VerifiedUpdate(
            subscriptionID: id, provenance: provenance, receiptSent: nil, state: state(of: transactions.last!), latestReceipt: nil,
            upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: asOf + 1_000, appleStateAtMs: asOf, transactions: transactions,
            ledgerSource: ledgerSource))])
    }

    static func ledger(_ store: StoreUnderTest) async throws -> [[String: String]] {
        try await store.rows("SELECT \(LedgerColumn.list) FROM subscription_transactions ORDER BY transaction_id")
    }

    @Test(arguments: StoreKind.available) func aPollWritesEachTransactionOnceAndARedeliveryChangesNothing(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let earlier = Self.period("2000000101", month: 0), current = Self.period("2000000102", month: 1)
            let id = try await store.insert(userID: "u1", receipt: "R1", Self.state(of: earlier))
            _ = try await store.store.apply(Self.update(id, [earlier, current], asOf: Self.t0 + 40 * Self.day))
            let first = try await Self.ledger(store)
            #expect(first.map { $0["transaction_id"] } == ["2000000101", "2000000102"])
            let row = try #require(first.last)
            #expect(row == [
                "transaction_id": "2000000102", "original_transaction_id": Self.chain, "subscription_id": "\(id)",
                "product_id": "com.example.premium.monthly", "environment": "Production", "purchased_at": "\(Self.t0 + 30 * Self.day)",
                "expires_at": "\(Self.t0 + 60 * Self.day)", "is_upgraded": "0", "in_app_ownership_type": "PURCHASED",
                "as_of": "\(Self.t0 + 40 * Self.day)", "first_source": "poll", "first_seen_at": "\(Self.t0 + 40 * Self.day + 1_000)",
                "updated_at": "\(Self.t0 + 40 * Self.day + 1_000)",
            ], "a verifyReceipt answer: no price, currency, storefront or signing, never guessed")
            // The same answer again: not a byte changes.
            _ = try await store.store.apply(Self.update(id, [earlier, current], asOf: Self.t0 + 40 * Self.day))
            #expect(try await Self.ledger(store) == first)
            // The next night's unchanged answer: the row vouches for its current transaction (no
            // write); the earlier period's as-of moves, so a message signed before it reads as older.
            _ = try await store.store.apply(Self.update(id, [earlier, current], asOf: Self.t0 + 41 * Self.day))
            let next = try await Self.ledger(store)
            #expect(next[1] == first[1])
            #expect(next[0]["as_of"] == "\(Self.t0 + 41 * Self.day)" && next[0]["first_seen_at"] == first[0]["first_seen_at"])
        }
    }

    @Test(arguments: StoreKind.available) func aSignedTransactionFillsThePriceAndAnOlderOneChangesNothingElse(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let current = Self.period("2000000102", month: 1)
            let id = try await store.insert(userID: "u1", receipt: "R1", Self.state(of: current))
            _ = try await store.store.apply(Self.update(id, [current], asOf: Self.t0 + 40 * Self.day))
            // A notification signed before that poll, delivered after it, priced and with an expiry
            // Apple has since changed: its facts fill in, its expiry does not win.
            var signed = current
            signed.expiresDateMs = current.expiresDateMs! - Self.day
            signed.facts = TransactionFacts(
                signedAtMs: Self.t0 + 35 * Self.day, environment: "Production", price: 9_990, currency: "CAD", storefront: "CAN", storefrontID: "143455",
                transactionReason: "RENEWAL", offerType: 2, offerIdentifier: "winback.1", offerDiscountType: "PAY_AS_YOU_GO", offerPeriod: "P1M")
            _ = try await store.store.apply(Self.update(
                id, [signed], asOf: Self.t0 + 35 * Self.day, provenance: .notification(notificationUUID: "n1", type: "DID_RENEW", signedAtMs: Self.t0 + 35 * Self.day)))
            let row = try #require(try await Self.ledger(store).first)
            #expect(row["price"] == "9990" && row["currency"] == "CAD" && row["storefront"] == "CAN" && row["storefront_id"] == "143455")
            #expect(row["transaction_reason"] == "RENEWAL" && row["offer_type"] == "2" && row["offer_identifier"] == "winback.1")
            #expect(row["offer_discount_type"] == "PAY_AS_YOU_GO" && row["offer_period"] == "P1M")
            #expect(row["expires_at"] == "\(current.expiresDateMs!)" && row["as_of"] == "\(Self.t0 + 40 * Self.day)" && row["signed_at"] == nil)
            #expect(row["first_source"] == "poll")
            // A later poll without a price never erases it.
            _ = try await store.store.apply(Self.update(id, [current], asOf: Self.t0 + 42 * Self.day))
            #expect(try await Self.ledger(store).first?["price"] == "9990")
        }
    }

    @Test(arguments: StoreKind.available) func aRefundAndItsReversalUpdateTheEntryAndALateRefundDoesNot(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let earlier = Self.period("2000000101", month: 0), current = Self.period("2000000102", month: 1)
            let id = try await store.insert(userID: "u1", receipt: "R1", Self.state(of: current))
            func notification(_ uuid: String, _ type: String, at ms: Int64, _ transaction: SubscriptionTransaction) -> ResultBatch {
                var batch = Self.update(id, [transaction, current], asOf: ms, provenance: .notification(notificationUUID: uuid, type: type, signedAtMs: ms))
                if case .verified(var update) = batch.results[0] { update.state = Self.state(of: current); batch.results[0] = .verified(update) }
                return batch
            }
            let refundedAt = Self.t0 + 45 * Self.day
            let refund = Self.period("2000000101", month: 0, revokedAt: refundedAt, facts: TransactionFacts(
                signedAtMs: refundedAt, price: 9_990, currency: "AUD", revocationReason: 1, revocationType: "REFUND_PRORATED", revocationPercentage: 50_000))
            _ = try await store.store.apply(notification("n1", "REFUND", at: refundedAt, refund))
            var row = try #require(try await Self.ledger(store).first)
            #expect(row["revoked_at"] == "\(refundedAt)" && row["revocation_reason"] == "1" && row["revocation_type"] == "REFUND_PRORATED")
            #expect(row["revocation_percentage"] == "50000" && row["as_of"] == "\(refundedAt)" && row["first_source"] == "notification")
            // The reversal, signed later: every revocation column cleared, the price kept.
            let reversedAt = refundedAt + Self.day
            var reversed = earlier
            reversed.facts = TransactionFacts(signedAtMs: reversedAt)
            _ = try await store.store.apply(notification("n2", "REFUND_REVERSED", at: reversedAt, reversed))
            row = try #require(try await Self.ledger(store).first)
            #expect(row["revoked_at"] == nil && row["revocation_reason"] == nil && row["revocation_type"] == nil && row["revocation_percentage"] == nil)
            #expect(row["price"] == "9990" && row["as_of"] == "\(reversedAt)" && row["signed_at"] == "\(reversedAt)")
            // The refund delivered again after its reversal: older, so nothing changes.
            let before = try await Self.ledger(store)
            _ = try await store.store.apply(notification("n1", "REFUND", at: refundedAt, refund))
            #expect(try await Self.ledger(store) == before)
        }
    }

    /// A new row adopting one chain of its receipt enrols the others; each chain's transactions
    /// belong to the row that owns it. An answer listing an id twice keeps one entry.
    @Test(arguments: StoreKind.available) func discoveredChainsGetTheirRowsAndAnIdListedTwiceIsOneEntry(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let id = try await store.insert(userID: "u1", receipt: "R1")
            let mine = Self.period("2000000102", month: 1)
            var other = Self.period("3000000201", month: 0)
            other.originalTransactionID = "3000000200"
            var otherState = Self.state(of: other)
            otherState.originalTransactionID = "3000000200"
            let update = VerifiedUpdate(
                subscriptionID: id, receiptSent: "R1", state: Self.state(of: mine), otherChains: [otherState], latestReceipt: nil,
                upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: Self.t0 + 40 * Self.day, transactions: [mine, other, mine])
            _ = try await store.store.apply(ResultBatch([.verified(update)]))
            let enrolled = try #require(try await store.row("SELECT id FROM subscriptions WHERE original_transaction_id = '3000000200'"))
            let rows = try await Self.ledger(store)
            #expect(rows.map { [$0["transaction_id"]!, $0["original_transaction_id"]!, $0["subscription_id"]!] } == [
                ["2000000102", Self.chain, "\(id)"], ["3000000201", "3000000200", enrolled["id"]!],
            ])
        }
    }

    /// What is not the row's to write leaves no ledger row: a failure, an answer for a receipt the
    /// web service replaced, a chain another row owns.
    @Test(arguments: StoreKind.available) func answersTheRowDoesNotTakeWriteNoLedgerRow(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let current = Self.period("2000000102", month: 1)
            let owner = try await store.insert(userID: "u1", receipt: "R1", Self.state(of: current))
            let newcomer = try await store.insert(userID: "u2", receipt: "R2")
            let replaced = try await store.insert(userID: "u3", receipt: "R3-new")
            var foreign = Self.period("4000000301", month: 0)
            foreign.originalTransactionID = "4000000300"
            var foreignState = Self.state(of: foreign)
            foreignState.originalTransactionID = "4000000300"
            _ = try await store.store.apply(ResultBatch([
                .failed(FailedVerification(subscriptionID: owner, provenance: .poll(runID: nil), failure: VerificationFailure(.appleStatus, "21199"), attemptedAtMs: Self.t0)),
                .verified(VerifiedUpdate(
                    subscriptionID: newcomer, receiptSent: nil, state: Self.state(of: current), latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid),
                    verifiedAtMs: Self.t0, transactions: [current])),
                .verified(VerifiedUpdate(
                    subscriptionID: replaced, receiptSent: "R3-old", state: foreignState, latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid),
                    verifiedAtMs: Self.t0, transactions: [foreign])),
            ]))
            #expect(try await Self.ledger(store).isEmpty)
        }
    }

    /// One refund, two messengers: a poll that read the whole history saw the earlier period
    /// refunded, then Apple's delayed REFUND notification for it came. The trail and the events
    /// out count it once, whichever came first.
    @Test(arguments: StoreKind.available) func aRefundSeenByAHistoryPollIsNotRecordedAgainByItsNotification(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            for pollFirst in [true, false] {
                let user = pollFirst ? "poll-first" : "notification-first"
                let chain = pollFirst ? Self.chain : "5000000100"
                func inChain(_ t: SubscriptionTransaction) -> SubscriptionTransaction {
                    var t = t
                    t.originalTransactionID = chain
                    t.transactionID = String(chain.dropLast(3)) + String(t.transactionID!.suffix(3))
                    return t
                }
                func stated(_ t: SubscriptionTransaction) -> SubscriptionState {
                    var state = Self.state(of: t)
                    state.originalTransactionID = chain
                    return state
                }
                let refundedAt = Self.t0 + 45 * Self.day
                let earlier = inChain(Self.period("2000000101", month: 0)), current = inChain(Self.period("2000000102", month: 1))
                let refunded = inChain(Self.period("2000000101", month: 0, revokedAt: refundedAt))
                let id = try await store.insert(userID: user, receipt: "R-\(user)", stated(current))
                // The row's first answer, before the refund.
                _ = try await store.store.apply(ResultBatch([.verified(VerifiedUpdate(
                    subscriptionID: id, receiptSent: nil, state: stated(current), latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid),
                    verifiedAtMs: Self.t0 + 40 * Self.day, transactions: [earlier, current]))]))
                let poll = ResultBatch([.verified(VerifiedUpdate(
                    subscriptionID: id, receiptSent: nil, state: stated(current), latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid),
                    verifiedAtMs: Self.t0 + 46 * Self.day,
                    evidence: ChainEvidence(revokedPeriods: [RevokedTransaction(transactionID: refunded.transactionID, productID: refunded.productID, revokedAtMs: refundedAt)]),
                    transactions: [refunded, current]))])
                var earlierState = stated(refunded)
                earlierState.autoRenewStatus = nil
                let notification = ResultBatch([.verified(VerifiedUpdate(
                    subscriptionID: id, provenance: .notification(notificationUUID: "refund-\(user)", type: "REFUND", signedAtMs: refundedAt), receiptSent: nil,
                    state: earlierState, latestReceipt: nil, upstreamStatus: UpstreamStatus(backend: .serverAPI, code: 200), verifiedAtMs: refundedAt + 2 * Self.day,
                    appleStateAtMs: refundedAt, evidence: ChainEvidence(scope: .oneTransaction), transactions: [refunded]))])
                for batch in pollFirst ? [poll, notification] : [notification, poll] { _ = try await store.store.apply(batch) }
                let refunds = try await store.rows("""
                    SELECT transaction_id, revoked_at FROM subscription_events WHERE subscription_id = \(id) AND reason = 'refunded_earlier_period'
                    """)
                #expect(refunds == [["transaction_id": refunded.transactionID!, "revoked_at": "\(refundedAt)"]], "\(user)")
                let events = try await store.row("""
                    SELECT count(*) AS n FROM outbound_events WHERE subscription_id = \(id) AND type = 'refunded_earlier_period'
                    """)
                #expect(events == ["n": "1"], "\(user)")
                let ledger = try await store.row("SELECT revoked_at FROM subscription_transactions WHERE transaction_id = '\(refunded.transactionID!)'")
                #expect(ledger == ["revoked_at": "\(refundedAt)"], "\(user)")
            }
        }
    }
}
