import EntitlementCore
import Foundation
import GRDB
import Logging
import PostgresNIO
import StatusPolling

@testable import PostgresStore
@testable import SQLiteStore

/// A fresh, migrated store of either kind, with the web service's own connection beside it: what
/// the store contract's tests need to arrange rows and to read every column back, in one shape for
/// both stores. Column values come back as text (NULL: absent), as a web service would print them.
struct StoreUnderTest: Sendable {
    let kind: StoreKind
    let store: any PollingStore
    private let sqlite: TemporaryDatabase?
    private let postgres: (location: PostgresLocation, webService: PostgresConnector)?

    static func make(_ kind: StoreKind) async throws -> StoreUnderTest {
        switch kind {
        case .sqlite: return sqlite(try TemporaryDatabase())
        case .postgres: return try await postgres(try await PostgresTestServer.createDatabase())
        }
    }

    static func sqlite(_ database: TemporaryDatabase) -> StoreUnderTest {
        StoreUnderTest(kind: .sqlite, store: database.store, sqlite: database, postgres: nil)
    }

    /// The database at `location`, migrated (whatever it held before).
    static func postgres(_ location: PostgresLocation) async throws -> StoreUnderTest {
        let database = PostgreSQLDatabase(location: location, worker: "tests", logger: PostgresTestServer.logger)
        _ = try await database.migrate()
        let store = try await database.open()
        let webService = try await PostgresConnector.connect(location, maximumConnections: 2, logger: PostgresTestServer.logger)
        return StoreUnderTest(kind: .postgres, store: store, sqlite: nil, postgres: (location, webService))
    }

    /// Where the PostgreSQL database is (nil for SQLite): for worker processes.
    var postgresLocation: PostgresLocation? { postgres?.location }

    /// The database as the command line and the job see it, for a second worker or a new process.
    func database(worker: String = "tests", leaseDuration: Duration = PostgreSQLDatabase.defaultLeaseDuration, writesOutbox: Bool = true) -> any PollingDatabase {
        if let sqlite { return SQLiteDatabase(path: sqlite.path, writesOutbox: writesOutbox) }
        return PostgreSQLDatabase(
            location: postgres!.location, worker: worker, leaseDuration: leaseDuration, writesOutbox: writesOutbox, logger: PostgresTestServer.logger)
    }

    func remove() async {
        if let sqlite { sqlite.remove() }
        if let postgres {
            try? await store.close()
            postgres.webService.close()
            await PostgresTestServer.dropDatabase(postgres.location)
        }
    }

    /// Inserts a row with the given contract columns, as a web service (or an earlier run) left it.
    @discardableResult
    func insert(userID: String, receipt: String, _ state: SubscriptionState = .unverified) async throws -> Int64 {
        if let sqlite { return try sqlite.insert(userID: userID, receipt: receipt, state) }
        var binds = PostgresBindings()
        binds.append(userID)
        binds.append(receipt)
        for column in ContractColumn.allCases { binds.append(column.value(in: state)) }
        let sql = """
            INSERT INTO subscriptions (user_id, latest_receipt, \(ContractColumn.list))
            VALUES ($1, $2, \(PostgresBindings.contractPlaceholders(from: 3))) RETURNING id
            """
        return try await postgres!.webService.withConnection { connection in
            try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: PostgresTestServer.logger).decode(Int64.self).collect()[0]
        }
    }

    /// The SQLite file, for a second store of other settings on it; nil for PostgreSQL.
    var sqlitePath: String? { sqlite?.path }

    /// Runs a statement as the web service.
    func execute(_ sql: String) async throws {
        if let sqlite {
            try await sqlite.webService.write { db in try db.execute(sql: sql) }
            return
        }
        _ = try await postgres!.webService.withConnection { connection in
            try await connection.query(PostgresQuery(unsafeSQL: sql), logger: PostgresTestServer.logger)
        }
    }

    /// The first row of a query, every column as text (NULL: absent).
    func row(_ sql: String) async throws -> [String: String]? {
        try await rows(sql).first
    }

    /// Every row of a query, in its order, every column as text (NULL: absent): a snapshot to compare.
    func rows(_ sql: String) async throws -> [[String: String]] {
        if let sqlite {
            return try await sqlite.webService.read { db in
                try Row.fetchAll(db, sql: sql).map { row in
                    Dictionary(uniqueKeysWithValues: row.columnNames.compactMap { name -> (String, String)? in
                        switch (row[name] as DatabaseValue).storage {
                        case .null: return nil
                        case .int64(let value): return (name, "\(value)")
                        case .double(let value): return (name, "\(value)")
                        case .string(let value): return (name, value)
                        case .blob(let value): return (name, value.base64EncodedString())
                        }
                    })
                }
            }
        }
        let json = try await postgres!.webService.withConnection { connection in
            try await connection.query(PostgresQuery(unsafeSQL: "SELECT row_to_json(q)::text FROM (\(sql)) AS q"), logger: PostgresTestServer.logger)
                .decode(String.self).collect()
        }
        return try json.map { json in
            let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] ?? [:]
            return object.compactMapValues { value in value is NSNull ? nil : (value as? String) ?? "\(value)" }
        }
    }

    /// Every column of subscription `id`.
    func rawRow(_ id: Int64) async throws -> [String: String]? {
        try await row("SELECT * FROM subscriptions WHERE id = \(id)")
    }

    /// The contract columns only, for "nothing changed" checks.
    func contractColumns(_ id: Int64) async throws -> [String: String] {
        let contract = Set(["user_id"] + ContractColumn.allCases.map(\.rawValue))
        return (try await rawRow(id) ?? [:]).filter { contract.contains($0.key) }
    }

    /// Makes every update that sets `original_transaction_id` on `userID`'s rows fail with a
    /// constraint error, as a constraint the poller does not know of would: SQLite's `RAISE(ABORT)`
    /// is `SQLITE_CONSTRAINT`, so PostgreSQL's trigger raises `integrity_constraint_violation`.
    func poisonUpdates(ofUser userID: String) async throws {
        if sqlite != nil {
            try await execute("""
                CREATE TRIGGER poison BEFORE UPDATE OF original_transaction_id ON subscriptions WHEN NEW.user_id = '\(userID)'
                BEGIN SELECT RAISE(ABORT, 'poisoned row'); END
                """)
            return
        }
        try await execute("""
            CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN RAISE EXCEPTION 'poisoned row' USING ERRCODE = 'integrity_constraint_violation'; END $$
            """)
        try await execute("""
            CREATE TRIGGER poison BEFORE UPDATE OF original_transaction_id ON subscriptions
            FOR EACH ROW WHEN (NEW.user_id = '\(userID)') EXECUTE FUNCTION poison()
            """)
    }

    /// Runs `body` while another connection holds the database's write lock, as another process's
    /// long write would (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: `subscriptions` locked in EXCLUSIVE
    /// mode, which plain reads pass and every writer waits for). `body` gets a store of its own that
    /// waits for the lock as long as it takes, and `release`, which lets the lock go (so does the end of `body`).
    func withWriteLockHeld<R>(_ body: (_ store: any PollingStore, _ release: @escaping @Sendable () -> Void) async throws -> R) async throws -> R {
        let release: @Sendable () -> Void
        let store: any PollingStore
        if let sqlite {
            let blocker = try DatabaseQueue(path: sqlite.path)
            let semaphore = DispatchSemaphore(value: 0)
            try await withCheckedThrowingContinuation { (held: CheckedContinuation<Void, any Error>) in
                Thread.detachNewThread {
                    try? blocker.inDatabase { database in
                        do { try database.execute(sql: "BEGIN IMMEDIATE") } catch { held.resume(throwing: error); return }
                        held.resume()
                        semaphore.wait()
                        try database.execute(sql: "COMMIT")
                    }
                }
            }
            // A second signal is harmless.
            release = { semaphore.signal() }
            store = try SQLiteSubscriptionStore.open(path: sqlite.path, busyTimeout: 600)
        } else {
            let (released, continuation) = AsyncStream<Void>.makeStream()
            let webService = postgres!.webService
            try await withCheckedThrowingContinuation { (held: CheckedContinuation<Void, any Error>) in
                Task {
                    var locked = false
                    do {
                        try await webService.transaction { connection in
                            try await connection.query("LOCK TABLE subscriptions IN EXCLUSIVE MODE", logger: PostgresTestServer.logger)
                            locked = true
                            held.resume()
                            for await _ in released {}
                        }
                    } catch {
                        if !locked { held.resume(throwing: error) }
                    }
                }
            }
            release = { continuation.finish() }
            store = try await database().open()
        }
        defer { release() }
        do {
            let result = try await body(store, release)
            try await store.close()
            return result
        } catch {
            try? await store.close()
            throw error
        }
    }
}

/// Runs `body` with a fresh store of `kind` and removes it afterwards.
func withStore<R>(_ kind: StoreKind, _ body: (StoreUnderTest) async throws -> R) async throws -> R {
    let database = try await StoreUnderTest.make(kind)
    do {
        let result = try await body(database)
        await database.remove()
        return result
    } catch {
        await database.remove()
        throw error
    }
}

extension StoreUnderTest {
    /// `table`'s columns as this store's migrations declared them, by name: `type` (SQLite's or
    /// PostgreSQL's spelling) and `required` ("1" for NOT NULL).
    func declaredColumns(_ table: String) async throws -> [String: [String: String]] {
        let sql = sqlitePath != nil
            ? #"SELECT name, type, "notnull" AS required FROM pragma_table_info('\#(table)')"#
            : """
              SELECT column_name AS name, data_type AS type, CASE WHEN is_nullable = 'NO' THEN 1 ELSE 0 END AS required
              FROM information_schema.columns WHERE table_name = '\(table)' AND table_schema = current_schema()
              """
        return Dictionary(uniqueKeysWithValues: try await rows(sql).map { ($0["name"]!, $0) })
    }
}
