import Foundation
import Testing

@testable import EntitlementCore
@testable import StatusPolling

/// The report's money from the ledger, on both stores: sales, refunds (a prorated one by its
/// share), net, refund rates, offer starts and conversion, MRR at each month's end — per currency,
/// a Family Sharing member's transaction left out, a transaction without a price counted as such.
@Suite struct RevenueReportTests {
    static let september: Int64 = 1_788_220_800_000  // 2026-09-01T00:00:00Z
    static let october: Int64 = 1_790_812_800_000
    static let november: Int64 = 1_793_491_200_000
    static let day: Int64 = 86_400_000

    /// One transaction of `chain`, bought `from` days after September 1st for `days` days.
    static func transaction(
        _ id: String, chain: String, from: Int64, days: Int64, price: Int64?, currency: String?, offer: (Int, String)? = nil,
        refund: (atDay: Int64, type: String, percentage: Int?)? = nil, family: Bool = false
    ) -> SubscriptionTransaction {
        SubscriptionTransaction(
            productID: "premium", transactionID: id, originalTransactionID: chain, purchaseDateMs: september + from * day,
            expiresDateMs: september + (from + days) * day, revocationDateMs: refund.map { september + $0.atDay * day },
            ownershipType: family ? "FAMILY_SHARED" : "PURCHASED",
            facts: TransactionFacts(
                signedAtMs: november, environment: "Production", price: price, currency: currency, offerType: offer?.0, offerDiscountType: offer?.1,
                revocationType: refund?.type, revocationPercentage: refund?.percentage))
    }

    static let chains: [[SubscriptionTransaction]] = [
        // A free trial, then two paid months, the second refunded by half.
        [
            transaction("a1", chain: "A", from: 0, days: 7, price: 0, currency: "USD", offer: (1, "FREE_TRIAL")),
            transaction("a2", chain: "A", from: 7, days: 30, price: 9_990, currency: "USD"),
            transaction("a3", chain: "A", from: 37, days: 31, price: 9_990, currency: "USD", refund: (49, "REFUND_PRORATED", 50_000)),
        ],
        // An introductory offer paid as you go, two months of it: one start, not converted yet.
        [
            transaction("b1", chain: "B", from: 14, days: 30, price: 4_990, currency: "CAD", offer: (1, "PAY_AS_YOU_GO")),
            transaction("b2", chain: "B", from: 44, days: 31, price: 4_990, currency: "CAD", offer: (1, "PAY_AS_YOU_GO")),
        ],
        // verifyReceipt's: no price known.
        [transaction("c1", chain: "C", from: 19, days: 30, price: nil, currency: nil)],
        // A Family Sharing member's copy: not revenue.
        [transaction("d1", chain: "D", from: 9, days: 30, price: 9_990, currency: "USD", family: true)],
        // A year, paid up front.
        [transaction("e1", chain: "E", from: 4, days: 365, price: 99_990, currency: "USD")],
        // A month refunded in full two days in.
        [transaction("f1", chain: "F", from: 11, days: 30, price: 2_990, currency: "USD", refund: (13, "REFUND_FULL", nil))],
    ]

    @Test(arguments: StoreKind.available) func theLedgersMoneyByCurrencyDayAndMonth(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            for (index, chain) in Self.chains.enumerated() {
                let last = chain.last!
                let state = SubscriptionState(
                    originalTransactionID: last.originalTransactionID, productID: "premium", environment: "Production", expiresAt: last.expiresDateMs,
                    cancelledAt: last.revocationDateMs, transactionID: last.transactionID, purchasedAt: last.purchaseDateMs)
                let id = try await store.insert(userID: "u\(index)", receipt: "R\(index)", state)
                _ = try await store.store.apply(ResultBatch([.verified(VerifiedUpdate(
                    subscriptionID: id, provenance: .notification(notificationUUID: "n\(index)", type: "DID_RENEW", signedAtMs: Self.november),
                    receiptSent: nil, state: state, latestReceipt: nil, upstreamStatus: UpstreamStatus(backend: .serverAPI, code: 200),
                    verifiedAtMs: Self.november, appleStateAtMs: Self.november, transactions: chain))]))
            }
            let revenue = RevenueReport(try await store.store.revenueSums(toMs: Self.november, environment: "Production"), fromMs: Self.september, toMs: Self.november)
            typealias T = RevenueReport.Totals
            #expect(revenue.months == [
                T(startMs: Self.september, currency: "CAD", transactions: 1, grossMilliunits: 4_990),
                T(startMs: Self.september, currency: "USD", transactions: 4, grossMilliunits: 112_970, refunds: 1, refundedMilliunits: 2_990),
                T(startMs: Self.october, currency: "CAD", transactions: 1, grossMilliunits: 4_990),
                T(startMs: Self.october, currency: "USD", transactions: 1, grossMilliunits: 9_990, refunds: 1, refundedMilliunits: 4_995),
            ])
            #expect(revenue.months[1].netMilliunits == 109_980 && revenue.months[3].netMilliunits == 4_995)
            #expect(revenue.months[1].refundRateByCount == 0.25 && revenue.months[3].refundRateByMoney == 0.5)
            #expect(revenue.days.map { "\(($0.startMs - Self.september) / Self.day) \($0.currency) \($0.transactions) \($0.grossMilliunits) \($0.refunds) \($0.refundedMilliunits)" } == [
                "0 USD 1 0 0 0", "4 USD 1 99990 0 0", "7 USD 1 9990 0 0", "11 USD 1 2990 0 0", "13 USD 0 0 1 2990", "14 CAD 1 4990 0 0",
                "37 USD 1 9990 0 0", "44 CAD 1 4990 0 0", "49 USD 0 0 1 4995",
            ])
            #expect(revenue.priceUnknown == [RevenueReport.PriceUnknown(dateMs: Self.september + 19 * Self.day, sales: 1, refunds: 0)])
            #expect(revenue.offers == [
                RevenueReport.OfferCohort(monthMs: Self.september, offerType: 1, discountType: "FREE_TRIAL", starts: 1, converted: 1),
                RevenueReport.OfferCohort(monthMs: Self.september, offerType: 1, discountType: "PAY_AS_YOU_GO", starts: 1, converted: 0),
            ])
            // At September's end: a2's month and e1's year (99 990 / 12); at October's: e1's, and b2's (a3 refunded).
            #expect(revenue.monthlyRecurringRevenue == [
                .init(atMs: Self.october - 1, currency: "CAD", subscriptions: 1, milliunits: 4_990),
                .init(atMs: Self.october - 1, currency: "USD", subscriptions: 2, milliunits: 9_990 + 8_332),
                .init(atMs: Self.november - 1, currency: "CAD", subscriptions: 1, milliunits: 4_990),
                .init(atMs: Self.november - 1, currency: "USD", subscriptions: 1, milliunits: 8_332),
            ])
            // MRR's movement: a2 and e1 new in September, b1 too (in CAD); a2 ends in October with no
            // period after it (a3 refunded): churn. b2 continues b1 at the same price: no movement.
            typealias Change = RevenueReport.MRRMovement.Change
            var september = (cad: RevenueReport.MRRMovement(monthMs: Self.september, currency: "CAD"), usd: RevenueReport.MRRMovement(monthMs: Self.september, currency: "USD"))
            september.cad.new = Change(subscriptions: 1, milliunits: 4_990)
            september.usd.new = Change(subscriptions: 2, milliunits: 9_990 + 8_332)
            var octoberChurn = RevenueReport.MRRMovement(monthMs: Self.october, currency: "USD")
            octoberChurn.churn = Change(subscriptions: 1, milliunits: 9_990)
            #expect(revenue.mrrMovement == [september.cad, september.usd, octoberChurn])
            // A month's net movement is its MRR minus the month before's.
            #expect(octoberChurn.netMilliunits == revenue.monthlyRecurringRevenue[3].milliunits - revenue.monthlyRecurringRevenue[1].milliunits)
            // Sandbox's figures are apart: none here.
            #expect(try await store.store.revenueSums(toMs: Self.november, environment: "Sandbox") == RevenueReport.Sums())
            // A report of October alone: September's sales and refunds are outside it, its running periods are not.
            let october = RevenueReport(try await store.store.revenueSums(toMs: Self.november, environment: "Production"), fromMs: Self.october, toMs: Self.november)
            #expect(october.months == Array(revenue.months.suffix(2)))
            #expect(october.monthlyRecurringRevenue == Array(revenue.monthlyRecurringRevenue.suffix(2)))
            #expect(october.offers.isEmpty && october.priceUnknown.isEmpty)
            #expect(october.mrrMovement == [octoberChurn])
            // Pages of subscriptions split anywhere give the same movement.
            let sql = try #require(store.store as? any SQLStore)
            #expect(try await sql.mrrMovement(toMs: Self.november, environment: "Production", pageSize: 2) == revenue.mrrMovement)
            // Ids far apart are read without a page for each range between them: a period of row
            // 10¹² (no such row: the ledger keeps a deleted row's revenue) is new in October.
            try await store.execute("""
                INSERT INTO subscription_transactions (transaction_id, original_transaction_id, subscription_id, environment, purchased_at, expires_at,
                    is_upgraded, price, currency, as_of, first_source, first_seen_at, updated_at)
                VALUES ('z1', 'Z', 1000000000000, 'Production', \(Self.october + 3 * Self.day), \(Self.october + 33 * Self.day), 0, 2000, 'USD', 1, 'poll', 1, 1)
                """)
            var octoberNew = octoberChurn
            octoberNew.new = Change(subscriptions: 1, milliunits: 2_000)
            #expect(try await sql.mrrMovement(toMs: Self.november, environment: "Production", pageSize: 2) == [september.cad, september.usd, octoberNew])
            if kind == .sqlite {
                // SQLite reads a page's paid periods from the ledger's index alone (v20), never its table.
                let plan = try await store.rows("EXPLAIN QUERY PLAN " + RevenueSQL.paidPeriods(.sqlite, subscriptions: 0..<9, toMs: 1, environment: "Production").sql(.sqlite)
                    .replacingOccurrences(of: "?", with: "0"))
                #expect(plan.compactMap { $0["detail"] } == [
                    "SEARCH t USING COVERING INDEX subscription_transactions_subscription (subscription_id>? AND subscription_id<?)",
                ])
                // The offers' starts and their earlier transactions of the offer from v23's index of the offers alone.
                let offers = try await store.rows("EXPLAIN QUERY PLAN " + RevenueSQL.offers(.sqlite, toMs: 1, environment: "Production").sql(.sqlite)
                    .replacingOccurrences(of: "?", with: "0")).compactMap { $0["detail"] }
                #expect(offers.contains("SCAN t USING COVERING INDEX subscription_transactions_offers"), "\(offers)")
                #expect(offers.contains("SEARCH p USING COVERING INDEX subscription_transactions_offers (subscription_id=? AND purchased_at<?)"), "\(offers)")
            }
        }
    }

    /// Money recovered from billing retry: the transaction each row recovered with (marked in the
    /// ledger) by its price, on the day Apple bought it — also when the ledger held it already
    /// (the catch-up brought it first), when the recovery is on another product (the change is
    /// named `upgraded`), and, when one answer carries the recovery and a later renewal, the
    /// recovery only; one without a known price (verifyReceipt's) counted as price unknown;
    /// Sandbox's and a Family Sharing member's left out.
    @Test(arguments: StoreKind.available) func recoveriesFromBillingRetryArePricedByTheirTransaction(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            func recover(
                _ user: String, _ id: String, environment: String = "Production", price: Int64?, family: Bool = false, product: String = "premium",
                seenBefore: Bool = false, laterRenewal: Bool = false
            ) async throws {
                let retrying = SubscriptionState(
                    originalTransactionID: "chain-\(id)", productID: "premium", environment: environment, expiresAt: Self.october + 2 * Self.day,
                    isInBillingRetry: true, transactionID: "\(id)-1", purchasedAt: Self.september + 2 * Self.day)
                let row = try await store.insert(userID: user, receipt: "R-\(id)", retrying)
                if seenBefore {
                    try await store.execute("""
                        INSERT INTO subscription_transactions (transaction_id, original_transaction_id, subscription_id, purchased_at, expires_at, is_upgraded,
                            as_of, first_source, first_seen_at, updated_at)
                        VALUES ('\(id)-2', 'chain-\(id)', \(row), \(Self.october + 6 * Self.day), \(Self.october + 36 * Self.day), 0, 1, 'history', 1, 1)
                        """)
                }
                var transactions = [Self.transaction("\(id)-2", chain: "chain-\(id)", from: 36, days: 30, price: price, currency: price.map { _ in "EUR" }, family: family)]
                if laterRenewal {
                    transactions.append(Self.transaction("\(id)-3", chain: "chain-\(id)", from: 66, days: 30, price: price, currency: price.map { _ in "EUR" }))
                }
                for index in transactions.indices {
                    transactions[index].facts.environment = environment
                    transactions[index].productID = product
                }
                let last = transactions.last!
                var recovered = retrying
                recovered.isInBillingRetry = false
                recovered.productID = product
                recovered.transactionID = last.transactionID
                recovered.purchasedAt = last.purchaseDateMs
                recovered.expiresAt = last.expiresDateMs
                recovered.ownershipType = family ? "FAMILY_SHARED" : "PURCHASED"
                _ = try await store.store.apply(ResultBatch([.verified(VerifiedUpdate(
                    subscriptionID: row, provenance: .notification(notificationUUID: "n-\(id)", type: "DID_RENEW", signedAtMs: Self.october + 7 * Self.day),
                    receiptSent: nil, state: recovered, latestReceipt: nil, upstreamStatus: UpstreamStatus(backend: .serverAPI, code: 200),
                    verifiedAtMs: Self.october + 7 * Self.day, appleStateAtMs: Self.october + 7 * Self.day, transactions: transactions))]))
            }
            try await recover("u1", "r1", price: 8_990)
            try await recover("u2", "r2", price: 8_990, seenBefore: true)
            try await recover("u3", "r3", price: nil)
            try await recover("u4", "r4", environment: "Sandbox", price: 8_990)
            try await recover("u5", "r5", price: 8_990, family: true)
            try await recover("u6", "r6", price: 8_990, product: "premium.lite")
            try await recover("u7", "r7", price: 8_990, laterRenewal: true)
            #expect(try await store.rows("SELECT reason, transaction_id FROM subscription_events WHERE subscription_id = 1") == [["reason": "recovered", "transaction_id": "r1-2"]])
            #expect(try await store.rows("SELECT reason FROM subscription_events WHERE subscription_id = 6") == [["reason": "upgraded"]])
            #expect(try await store.rows("SELECT transaction_id, price FROM subscription_transactions WHERE billing_recovery = 1 ORDER BY 1") == [
                "r1-2", "r2-2", "r3-2", "r4-2", "r5-2", "r6-2", "r7-2",
            ].map { $0 == "r3-2" ? ["transaction_id": $0] : ["transaction_id": $0, "price": "8990"] })
            let revenue = RevenueReport(try await store.store.revenueSums(toMs: Self.november, environment: "Production"), fromMs: Self.september, toMs: Self.november)
            let october = try #require(revenue.months.first { $0.startMs == Self.october && $0.currency == "EUR" })
            #expect(october.recoveries == 4 && october.recoveredMilliunits == 35_960)
            #expect(october.transactions == 4 && october.grossMilliunits == 35_960)
            #expect(revenue.days.filter { $0.recoveries > 0 }.map(\.startMs) == [Self.october + 6 * Self.day])
            #expect(revenue.priceUnknown == [RevenueReport.PriceUnknown(dateMs: Self.october + 6 * Self.day, sales: 1, refunds: 0, recoveries: 1)])
            let sandbox = RevenueReport(try await store.store.revenueSums(toMs: Self.november, environment: "Sandbox"), fromMs: Self.september, toMs: Self.november)
            #expect(sandbox.months.map(\.recoveredMilliunits) == [8_990])
        }
    }

    @Test func monthEndsCutTheLastMonthAtTheReportsEnd() {
        #expect(RevenueReport.monthEnds(fromMs: Self.september + 5 * Self.day, toMs: Self.october + 10 * Self.day)
            == [Self.october - 1, Self.october + 10 * Self.day - 1])
    }
}
