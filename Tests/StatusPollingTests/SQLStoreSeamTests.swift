import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import PostgresStore
@testable import SQLiteStore
@testable import StatusPolling

/// The seam the library's workflows run on, on both stores: a transaction's statements see each
/// other, it commits when the body returns and leaves nothing when it throws, and on SQLite (whose
/// transaction runs the async body on GRDB's writer thread) a body that hops to an actor between
/// statements still finishes inside its transaction.
@Suite struct SQLStoreSeamTests {
    struct Refused: Error {}

    actor Counter {
        var hops = 0
        func hop() -> Int { hops += 1; return hops }
    }

    /// `body` on the store as the seam it is (each store's concrete type).
    func onSeam(_ db: StoreUnderTest, _ body: (any SQLStore) async throws -> Void) async throws {
        switch db.store {
        case let store as SQLiteSubscriptionStore: try await body(store)
        case let store as PostgresSubscriptionStore: try await body(store)
        default: Issue.record("\(type(of: db.store)) is not a SQL store")
        }
    }

    func users<S: SQLStore>(_ store: S) async throws -> [String] {
        try await store.rows("SELECT user_id FROM subscriptions ORDER BY id") { row -> String in try row.column() }
    }

    func commitsAcrossAnActor<S: SQLStore>(_ store: S) async throws -> (seen: Int, hops: Int) {
        let counter = Counter()
        return try await store.transaction { session in
            try await session.execute("INSERT INTO subscriptions (user_id, latest_receipt) VALUES ('u1', 'R1')")
            let first = await counter.hop()
            try await session.execute("INSERT INTO subscriptions (user_id, latest_receipt) VALUES ('u2', 'R2')")
            let second = await counter.hop()
            let seen: Int = try await session.rows("SELECT count(*) FROM subscriptions") { try $0.column() }[0]
            return (seen, first + second)
        }
    }

    func rollsBack<S: SQLStore>(_ store: S) async throws {
        await #expect(throws: Refused.self) {
            try await store.transaction { session -> Void in
                try await session.execute("INSERT INTO subscriptions (user_id, latest_receipt) VALUES ('u3', 'R3')")
                throw Refused()
            }
        }
    }

    @Test(arguments: StoreKind.available) func aTransactionCommitsWhatItsBodyDidAndNothingWhenItThrows(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await onSeam(db) { store in
                let (seen, hops) = try await commitsAcrossAnActor(store)
                #expect(seen == 2)
                #expect(hops == 3)
                #expect(try await users(store) == ["u1", "u2"])
                try await rollsBack(store)
                #expect(try await users(store) == ["u1", "u2"])
                // The writer is free again after a rollback.
                try await store.commit("INSERT INTO subscriptions (user_id, latest_receipt) VALUES ('u4', 'R4')")
                #expect(try await users(store) == ["u1", "u2", "u4"])
            }
        }
    }
}
