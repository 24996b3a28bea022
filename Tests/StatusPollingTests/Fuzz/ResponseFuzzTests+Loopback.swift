import AppStoreSimulator
import Foundation
import GRDB
import Logging
import NIOCore
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import SQLiteStore
@testable import StatusPolling

/// The loopback slice of the fuzz: rows, their answers, and how the run's result is read.
extension ResponseFuzzTests {
    /// The rows as a web service (and earlier runs) left them, in one transaction.
    static func insert(_ plans: [LoopbackPlan], into db: TemporaryDatabase) throws {
        try db.webService.write { d in
            for plan in plans {
                let s = plan.row.state
                try d.execute(literal: """
                    INSERT INTO subscriptions (id, user_id, latest_receipt, original_transaction_id, product_id, environment,
                        expires_at, grace_period_expires_at, is_in_billing_retry, auto_renew_status, auto_renew_product_id,
                        expiration_intent, cancelled_at)
                    VALUES (\(plan.row.id), \(plan.row.userID), \(plan.row.latestReceipt), \(s.originalTransactionID), \(s.productID),
                        \(s.environment), \(s.expiresAt), \(s.gracePeriodExpiresAt), \(s.isInBillingRetry), \(s.autoRenewStatus),
                        \(s.autoRenewProductID), \(s.expirationIntent), \(s.cancelledAt))
                    """)
            }
        }
    }

    /// One real run: request timeouts far above any loopback stall, two attempts, the breaker off.
    static func poll(_ db: TemporaryDatabase, _ production: String, _ sandbox: String) async throws -> RunReport {
        let configuration = VerifyReceiptTesting.configuration(production, sandbox, attempts: 2)
        let http = KeepAliveHTTPClient.Configuration(connectTimeout: .seconds(30), maxResponseBytes: maxResponseBytes)
        let logger = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }
        return try await VerifyReceiptClient.withClient(configuration, http: http, jitter: { 0.5 }) { client in
            // A stretch of outage pages is the point here, not a reason to stop.
            let run = PollRun(
                configuration: .init(bundleID: AppleJSON.bundleID, nowMs: now, concurrency: 8, circuitBreaker: nil),
                store: db.store, source: client, logger: logger)
            return await run.run()
        }
    }

    /// Rows that did not end as planned: a refused answer must leave every entitlement column and
    /// the stored receipt byte for byte as they were, and record its reason; an accepted one must
    /// hold exactly the decided state.
    static func problems(_ plans: [LoopbackPlan], before: [Int64: [String]], after: [Int64: [String]], in db: TemporaryDatabase) async throws -> [String] {
        let reasons: [Int64: String?] = try await db.webService.read { d in
            let rows = try Row.fetchAll(d, sql: "SELECT id, last_error_reason FROM subscriptions")
            return Dictionary(uniqueKeysWithValues: rows.map { ($0["id"] as Int64, $0["last_error_reason"] as String?) })
        }
        var problems: [String] = []
        for plan in plans {
            let id = plan.row.id
            switch plan.wanted {
            case .failed(let reason, _):
                if after[id] != before[id] { problems.append("row \(id) (\(plan.note)) changed on \(reason.rawValue): \(before[id] ?? []) → \(after[id] ?? [])") }
                if reasons[id] != .some(reason.rawValue) { problems.append("row \(id) (\(plan.note)) failed as \(String(describing: reasons[id])), not \(reason.rawValue)") }
            case .decided(let outcome):
                guard let (state, receipt) = adoption(outcome) else {
                    problems.append("row \(id): planned \(outcome)")
                    continue
                }
                let stored = try await db.store.subscription(id: id)
                if stored?.state != state || stored?.latestReceipt != (receipt ?? plan.row.latestReceipt) {
                    problems.append("row \(id) (\(plan.note)) holds \(String(describing: stored)), not \(state)")
                }
            default:
                problems.append("row \(id): no plan for \(plan.wanted)")
            }
        }
        return problems
    }

    /// The contract columns, the user and the stored receipt of every row, each as its SQLite type
    /// and the hex of its bytes: "unchanged" means byte for byte.
    static func columns(_ db: TemporaryDatabase) throws -> [Int64: [String]] {
        let names = ["user_id", "latest_receipt"] + ContractColumn.allCases.map(\.rawValue)
        let sql = "SELECT id, " + names.map { "typeof(\($0)) || ':' || hex(\($0))" }.joined(separator: ", ") + " FROM subscriptions"
        return try db.webService.read { d in
            try Dictionary(uniqueKeysWithValues: Row.fetchAll(d, sql: sql).map { row in
                (row[0] as Int64, (1...names.count).map { row[$0] as String })
            })
        }
    }

    /// One row of the loopback run: what it holds, what its receipt is answered with, and what
    /// must come of that.
    struct LoopbackPlan {
        var row: SubscriptionRow
        var body: String
        var wanted: Reading
        var note: String
    }

    /// 1,500 rows — renewing, in a grace period, or new — each answered once: as Apple sends it or
    /// mutated by one of the categories. Only answers the run must refuse, or adopt on a chain no
    /// other row holds, are kept, so every count of the report is known in advance.
    static func loopbackPlans(rows: Int, seed: UInt64) throws -> [LoopbackPlan] {
        let (t0, day) = (AppleJSON.t0, AppleJSON.day)
        var renewed = AppleJSON.Transaction()
        renewed.originalTransactionID = "CHAIN"
        renewed.transactionID = "CHAIN2"
        renewed.purchaseMs = t0 + 30 * day
        renewed.expiresMs = t0 + 60 * day
        var first = renewed
        first.transactionID = "CHAIN1"
        first.purchaseMs = t0
        first.expiresMs = t0 + 30 * day
        var renewal = AppleJSON.Renewal()
        renewal.originalTransactionID = "CHAIN"
        let template = AppleJSON.valid(latestReceipt: "NEW-CHAIN", transactions: [first, renewed], renewals: [renewal])

        var plans: [LoopbackPlan] = []
        /// Chains a row holds or will adopt: a second row adopting one would be a conflict.
        var chainsInUse: Set<String> = []
        for index in 0..<rows {
            var rng = SeededRandom(seed: seed, 77, UInt64(index))
            let chain = String(format: "7%09d", index)
            var state = SubscriptionState.unverified
            if !rng.chance(0.2) {
                chainsInUse.insert(chain)
                state = SubscriptionState(
                    originalTransactionID: chain, productID: "premium.monthly", environment: "Production",
                    expiresAt: t0 + 30 * day, autoRenewStatus: true, autoRenewProductID: "premium.monthly")
                if rng.chance(0.3) {
                    state.expiresAt = now - 2 * day
                    state.gracePeriodExpiresAt = now + 3 * day
                    state.isInBillingRetry = true
                    state.expirationIntent = 2
                }
            }
            let row = SubscriptionRow(id: Int64(index + 1), userID: "fuzz-\(index)", latestReceipt: "R-\(index)", state: state)
            let base = try base("row-\(index)", bytes: Array(template.replacingOccurrences(of: "CHAIN", with: chain).utf8), isFixture: false)
            if index % 250 == 0 {
                let padded = adding("x_fuzz_padding", raw: quoted(String(repeating: "A", count: maxResponseBytes + 100_000)), to: base.tree)
                plans.append(LoopbackPlan(row: row, body: String(decoding: padded, as: UTF8.self), wanted: .failed(.unexpectedResponse, transient: false), note: "over the size limit"))
                continue
            }
            while true {
                let generated: Generated
                if rng.chance(0.3) {
                    generated = (base.tree.rendered, .like(base.rendered), "as Apple sends it")
                } else {
                    generated = mutate(base, Category.allCases.randomElement(using: &rng)!, row: row, rng: &rng)
                }
                guard generated.body.count < maxResponseBytes - 4_096, let body = String(validating: generated.body, as: UTF8.self) else { continue }
                let wanted: Reading
                switch generated.expected {
                case .notJSON: wanted = .failed(.notJSON, transient: true)
                case .unexpectedResponse: wanted = .failed(.unexpectedResponse, transient: false)
                case .rejected: continue
                case .like(let reference):
                    let reading = read(reference, row: row)
                    guard case .decided(let outcome) = reading, let id = adoption(outcome)?.state.originalTransactionID else { continue }
                    if id != state.originalTransactionID {
                        // A new row takes the one chain it is offered: which of several it would
                        // prefer depends on the run's clock, and is the decision's tests' business.
                        guard let response = try? VerifyReceiptResponse(json: reference),
                            Set(response.latestReceiptInfo.filter { $0.expiresDateMs != nil }.compactMap(\.originalTransactionID)).count == 1
                        else { continue }
                        guard !chainsInUse.contains(id) else { continue }
                        chainsInUse.insert(id)
                    }
                    wanted = reading
                }
                plans.append(LoopbackPlan(row: row, body: body, wanted: wanted, note: generated.note))
                break
            }
        }
        return plans
    }
}
