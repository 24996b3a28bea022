import EntitlementCore
import Testing

import StatusPolling

/// The library's shared SQL as each store runs it, and the one rule that matches a notification
/// to its row; what the statements do is the store contract's tests' business, on both stores.
struct SharedSQLTests {
    @Test func aStatementBindsEveryValueWithEachDialectsPlaceholders() {
        let user: String? = "u1"
        let statement: SQLStatement = "SELECT id FROM subscriptions WHERE user_id = \(user) AND id > \(Int64(7)) LIMIT \(10)"
        #expect(statement.sql(.sqlite) == "SELECT id FROM subscriptions WHERE user_id = ? AND id > ? LIMIT ?")
        #expect(statement.sql(.postgres) == "SELECT id FROM subscriptions WHERE user_id = $1 AND id > $2 LIMIT $3")
        #expect(statement.values == [.text("u1"), .integer(7), .integer(10)])
    }

    @Test func composedConditionsKeepTheirValuesInOrder() {
        let conditions: [SQLStatement] = ["a = \(true)", "b IS NULL", "c >= \(Int64?.none)"]
        let statement: SQLStatement = "SELECT 1 \(SQLStatement(where: conditions)) LIMIT \(5)"
        #expect(statement.sql(.postgres) == "SELECT 1 WHERE a = $1 AND b IS NULL AND c >= $2 LIMIT $3")
        #expect(statement.values == [.integer(1), .null, .integer(5)])
        #expect(SQLStatement(where: []).sql(.sqlite).isEmpty)
        #expect(SQLDialect.sqlite.greatest("x", "\(Int64(3))").sql(.sqlite) == "max(x, ?)")
        #expect(SQLDialect.postgres.greatest("x", "\(Int64(3))").sql(.postgres) == "GREATEST(x, $1)")
    }

    static func notification(chain: String?, token: String?, withData: Bool) -> ReceivedNotification {
        ReceivedNotification(
            id: "n", version: 2, type: "DID_RENEW", subtype: nil, signedAtMs: 1, appleStateAtMs: 1, originalTransactionID: chain, appAccountToken: token,
            environment: .sandbox, source: .push, receivedAtMs: 2,
            answer: withData ? StatusAnswer(upstreamStatus: UpstreamStatus(backend: .serverAPI, code: 0), bundleID: nil, environment: nil, transactions: [], renewals: []) : nil)
    }

    @Test(arguments: [
        (chain: "c", token: "t", withData: true, lookups: [NotificationMatch.chain("c"), .token("t")]),
        (chain: "c", token: "t", withData: false, lookups: [.chain("c")]),
        (chain: nil, token: "t", withData: true, lookups: [.token("t")]),
        (chain: nil, token: nil, withData: true, lookups: []),
    ])
    func aNotificationLooksForItsChainsOwnerThenForTheRowItsTokenNames(
        _ c: (chain: String?, token: String?, withData: Bool, lookups: [NotificationMatch])
    ) {
        #expect(NotificationMatch.lookups(for: Self.notification(chain: c.chain, token: c.token, withData: c.withData)) == c.lookups)
    }

    @Test func theFirstLookupThatFindsARowWins() {
        let row = SubscriptionRow(id: 4, userID: "u", latestReceipt: "", state: .unverified)
        var asked: [NotificationMatch] = []
        let found = NotificationMatch.row(for: Self.notification(chain: "c", token: "t", withData: true)) { lookup in
            asked.append(lookup)
            return lookup == .token("t") ? row : nil
        }
        #expect(found == row)
        #expect(asked == [.chain("c"), .token("t")])
        #expect(NotificationMatch.outcomeWithoutRow(Self.notification(chain: "c", token: nil, withData: true)) == .unmatched)
        #expect(NotificationMatch.outcomeWithoutRow(Self.notification(chain: "c", token: nil, withData: false)) == .ignored)
    }
}
