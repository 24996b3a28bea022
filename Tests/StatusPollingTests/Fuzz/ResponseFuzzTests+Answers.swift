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

// MARK: - The answers mutated

extension ResponseFuzzTests {
    /// A well-formed answer the mutations start from.
    struct Base: Sendable {
        var name: String
        var bytes: [UInt8]
        var tree: JSONValue
        var isFixture: Bool
        /// `status` 0 and the app's `bundle_id`: the decision is reached.
        var reachesDecision: Bool
        var chainIDs: [String]
        /// `tree` written plainly, and its members: worked out once, used by every case.
        var rendered: [UInt8]
        var members: [Member]
    }

    /// Where a member sits, which decides whether and how the client reads it.
    enum Place { case top, receipt, transaction, renewal, elsewhere }

    /// How the client reads a member's value.
    enum Kind: Equatable { case status, string, int64, bool, object, objects, ignored }

    /// One member of an object in an answer.
    struct Member {
        var path: [Int]
        var key: String
        var value: JSONValue
        var kind: Kind
        /// The depth of the object holding it (the document is 1).
        var depth: Int
    }

    /// A generated body and what must come of it.
    typealias Generated = (body: [UInt8], expected: Expected, note: String)

    static let fixtureNames = [
        "renewal-production.json", "grace-period-single-object.json", "internal-error-is_retryable.json", "internal-error-is-retryable-false.json",
    ]

    /// The stored fixtures, and Apple-shaped answers made for this seed.
    static func bases(seed: UInt64) throws -> [Base] {
        var bases = try fixtureNames.map { try base($0, bytes: Array(Fixture.data($0)), isFixture: true) }
        for index in 0..<40 {
            var rng = SeededRandom(seed: seed, 99, UInt64(index))
            bases.append(try base("generated-\(index)", bytes: Array(generatedAnswer(&rng).utf8), isFixture: false))
        }
        return bases
    }

    static func base(_ name: String, bytes: [UInt8], isFixture: Bool) throws -> Base {
        let tree = try JSONValue.parse(bytes)
        // The trees the mutations start from agree with Foundation's independent reader.
        try #require(JSONValueTests.same(tree, try JSONSerialization.jsonObject(with: Data(bytes))), "\(name)")
        let reaches = tree.member("status") == .number("0") && tree.member("receipt")?.member("bundle_id") == .string(AppleJSON.bundleID)
        let entries: [JSONValue]
        switch tree.member("latest_receipt_info") {
        case .array(let elements)?: entries = elements
        case .object(let single)?: entries = [.object(single)]
        default: entries = []
        }
        let chains = entries.compactMap { entry -> String? in
            if case .string(let id)? = entry.member("original_transaction_id"), entry.member("expires_date_ms") != nil { return id }
            return nil
        }
        return Base(
            name: name, bytes: bytes, tree: tree, isFixture: isFixture, reachesDecision: reaches, chainIDs: Array(Set(chains)).sorted(),
            rendered: tree.rendered, members: members(of: tree))
    }

    /// An answer of one to three subscriptions with their renewals, built the way Apple writes it.
    static func generatedAnswer(_ rng: inout SeededRandom) -> String {
        let (t0, day) = (AppleJSON.t0, AppleJSON.day)
        var transactions: [AppleJSON.Transaction] = []
        var renewals: [AppleJSON.Renewal] = []
        for chain in 0..<Int.random(in: 1...3, using: &rng) {
            let otid = "47\(Int.random(in: 10_000_000...99_999_999, using: &rng))\(chain)"
            let product = ["premium.monthly", "premium.yearly", "storage.monthly"].randomElement(using: &rng)!
            let periods = Int.random(in: 1...4, using: &rng)
            for period in 0..<periods {
                var t = AppleJSON.Transaction()
                t.productID = product
                t.originalTransactionID = otid
                t.transactionID = "\(otid)\(period)"
                t.purchaseMs = t0 + Int64(period) * 30 * day
                t.expiresMs = t0 + Int64(period + 1) * 30 * day
                if rng.chance(0.08) { t.cancellationMs = t.purchaseMs + 5 * day }
                if rng.chance(0.05) { t.isUpgraded = true }
                transactions.append(t)
            }
            if rng.chance(0.85) {
                var r = AppleJSON.Renewal()
                r.originalTransactionID = otid
                r.productID = product
                r.autoRenewProductID = product
                r.autoRenewStatus = rng.chance(0.7) ? "1" : "0"
                if rng.chance(0.3) { r.expirationIntent = String(Int.random(in: 1...5, using: &rng)) }
                if rng.chance(0.3) { r.isInBillingRetry = rng.chance(0.5) ? "1" : "0" }
                if rng.chance(0.2) { r.graceEndsMs = t0 + Int64(periods) * 30 * day + 16 * day }
                renewals.append(r)
            }
        }
        if rng.chance(0.2) {
            var coins = AppleJSON.Transaction()
            coins.productID = "coins.100"
            coins.originalTransactionID = "48\(Int.random(in: 10_000_000...99_999_999, using: &rng))"
            coins.transactionID = coins.originalTransactionID
            coins.expiresMs = nil
            transactions.append(coins)
        }
        transactions.shuffle(using: &rng)
        return AppleJSON.valid(
            environment: rng.chance(0.8) ? "Production" : "Sandbox", latestReceipt: rng.chance(0.9) ? "MIIT\(rng.next() % 1_000_000)" : nil,
            transactions: transactions, renewals: renewals)
    }

    /// A row that is new, owns one of the answer's chains, or owns a chain the answer does not hold.
    static func row(for base: Base, rng: inout SeededRandom) -> SubscriptionRow {
        var state = SubscriptionState.unverified
        let roll = Double.random(in: 0..<1, using: &rng)
        if roll >= 0.4 {
            let owned = roll < 0.85 ? base.chainIDs.randomElement(using: &rng) : nil
            state = SubscriptionState(
                originalTransactionID: owned ?? "1999999999", productID: "premium.monthly", environment: "Production",
                expiresAt: AppleJSON.t0, autoRenewStatus: true, autoRenewProductID: "premium.monthly")
        }
        return SubscriptionRow(id: 1, userID: "user-1", latestReceipt: "OLD-RECEIPT", state: state)
    }

    static func generate(_ category: Category, from bases: [Base], rng: inout SeededRandom) -> Case {
        let candidates = category == .fixtureMutation ? bases.filter(\.isFixture) : bases
        let base = candidates.randomElement(using: &rng)!
        let row = row(for: base, rng: &rng)
        let generated = mutate(base, category, row: row, rng: &rng)
        return Case(baseName: base.name, row: row, body: generated.body, expected: generated.expected, note: generated.note)
    }

    static func mutate(_ base: Base, _ category: Category, row: SubscriptionRow, rng: inout SeededRandom) -> Generated {
        switch category {
        case .truncated: truncated(base, &rng)
        case .wrongType: wrongType(base, &rng)
        case .missingOrNullArray: missingOrNullArray(base, row, &rng)
        case .hugeBody: hugeBody(base, &rng)
        case .deepNesting: deepNesting(base, &rng)
        case .nonNumericString: nonNumericString(base, &rng)
        case .otherDateForm: otherDateForm(base, &rng)
        case .duplicateKey: duplicateKey(base, &rng)
        case .nanLike: nanLike(base, &rng)
        case .utf8Oddity: utf8Oddity(base, &rng)
        case .fixtureMutation: fixtureMutation(base, &rng)
        }
    }
}
