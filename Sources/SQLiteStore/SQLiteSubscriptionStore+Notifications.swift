import Foundation
import GRDB
import StatusPolling

extension SQLiteSubscriptionStore {
    public func receive(_ notifications: [ReceivedNotification], ingest: NotificationIngest, nowMs: Int64) async throws -> [NotificationOutcome] {
        guard !notifications.isEmpty else { return [] }
        do {
            return try await pool.write { db in
                // An id the batch already holds is a duplicate, whatever the first copy's outcome
                // (an `unmatched` one would otherwise be claimed again), as on PostgreSQL.
                var seen: Set<String> = []
                return try notifications.map { n in
                    seen.insert(n.id).inserted ? try Self.receive(db, n, ingest: ingest, nowMs: nowMs) : .duplicate
                }
            }
        } catch let error as DatabaseError {
            throw Self.storeError(error, path: path, writing: true)
        }
    }

    /// One notification inside the batch's transaction: claimed by its id first (a duplicate stops
    /// there), a consumption request it makes queued, then applied to its row through the row
    /// update plan, then its outcome recorded.
    private static func receive(_ db: Database, _ n: ReceivedNotification, ingest: NotificationIngest, nowMs: Int64) throws -> NotificationOutcome {
        try db.execute(shared: NotificationsSQL.claim(n))
        guard db.changesCount > 0 else { return .duplicate }
        let row = try NotificationMatch.row(for: n) { lookup in try Self.row(db, lookup) }
        // A consumption request is queued with the row as it stood (before this notification's
        // confirmation clears a failure standing on it).
        for statement in ConsumptionQueue.statements(for: n, row: row) { try db.execute(shared: statement) }
        var outcome = NotificationMatch.outcomeWithoutRow(n)
        var statusAgrees: Bool?
        if let row {
            switch ingest.effect(of: n, on: row, nowMs: nowMs) {
            case .settled(let settled): outcome = settled
            case .write(let result):
                let session = SQLiteSession(db: db)
                let plan = try InlineExecutor.run {
                    var writer = PlanWriter(session: session, dialect: .sqlite, leases: false, releasing: nil)
                    return try await writer.write([result]).plans[0]
                }
                outcome = NotificationIngest.outcome(of: plan)
                statusAgrees = plan.statusAgrees
            }
        }
        try db.execute(shared: NotificationsSQL.settle(.init(n, outcome: outcome, subscriptionID: row?.id, statusAgrees: statusAgrees)))
        return outcome
    }

    /// One lookup of ``NotificationMatch``, as this transaction sees the rows (an earlier
    /// notification of the batch counts).
    private static func row(_ db: Database, _ lookup: NotificationMatch) throws -> SubscriptionRow? {
        let statement: SQLStatement
        switch lookup {
        case .chain(let chain): statement = "SELECT \(unescaped: SubscriptionRowSQL.columns) FROM subscriptions WHERE original_transaction_id = \(chain)"
        case .token(let token): statement = NotificationsSQL.adoptable(token: token, columns: SubscriptionRowSQL.columns, lock: false)
        }
        return try db.fetchOne(shared: statement) { try SubscriptionRowSQL.row(&$0) }
    }

    /// A read, SQLite's errors as the store's.
    func reading<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.read(body)
        } catch let error as DatabaseError {
            throw Self.storeError(error, path: path)
        }
    }

    /// A write, SQLite's errors as the store's (the inbox, the event feed, the extensions' ledger).
    func writing<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.write(body)
        } catch let error as DatabaseError {
            throw Self.storeError(error, path: path, writing: true)
        }
    }
}
