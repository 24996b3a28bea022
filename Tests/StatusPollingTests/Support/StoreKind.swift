import Foundation
import Testing

/// The stores the store contract's tests run against: SQLite always; PostgreSQL when a server is
/// given (`Scripts/test.sh` starts a throwaway one and sets `STATUS_POLLER_TEST_POSTGRES_URL`).
enum StoreKind: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case sqlite
    case postgres

    /// The stores available here; under CI the PostgreSQL server is required (see ``PostgresTestServer``).
    static var available: [StoreKind] { PostgresTestServer.url == nil ? [.sqlite] : [.sqlite, .postgres] }

    var testDescription: String { rawValue }
}
