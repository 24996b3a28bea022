import Foundation
import Testing

@testable import EntitlementCore
@testable import StatusPolling

/// The ledger's table (``LedgerColumn``) against what each store's migration builds, and against
/// what docs/DATABASE.md tells the web service's engineers.
@Suite struct LedgerSchemaTests {
    @Test(arguments: StoreKind.available) func bothStoresMigrateExactlyTheLedgersColumns(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let columns = try await store.declaredColumns("subscription_transactions")
            #expect(columns.keys.sorted() == LedgerColumn.allCases.map(\.rawValue).sorted())
            for column in LedgerColumn.allCases {
                let declared = try #require(columns[column.rawValue])
                #expect(declared["type"] == (store.sqlitePath != nil ? column.kind.sqliteType : column.kind.postgresType), "\(column.rawValue)")
                #expect(declared["required"] == (column.isRequired ? "1" : "0"), "\(column.rawValue)")
            }
        }
    }

    /// Every column has its line in the ledger's section of docs/DATABASE.md.
    @Test func theDatabasePageDescribesEveryLedgerColumn() throws {
        let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../docs/DATABASE.md")
        let text = try String(contentsOf: page, encoding: .utf8)
        let section = try #require(text.components(separatedBy: "## Transaction ledger").dropFirst().first)
        let described = section.split(separator: "\n").filter { $0.hasPrefix("| ") }.map { $0.dropFirst(2).prefix { $0 != " " } }.map(String.init)
        #expect(described.filter { $0 != "column" && !$0.hasPrefix("-") } == LedgerColumn.allCases.map(\.rawValue))
    }

    /// The upsert both dialects run, as each renders it: the same text, only the placeholders differ.
    @Test func theUpsertIsOneTextForBothDialects() {
        let entry = LedgerEntry(
            transaction: LedgerWriteTests.period("2000000102", month: 1), subscriptionID: 7, environment: "Production", asOfMs: 5, source: .poll,
            atMs: 6, precedence: .heldByRow)
        let statement = LedgerSQL.upsert(entry)
        #expect(statement.values.count == LedgerColumn.allCases.count)
        #expect(statement.values.first == .text("2000000102") && statement.values.last == .null)
        var recovery = entry
        recovery.endsBillingRetry = true
        #expect(LedgerSQL.upsert(recovery).values.last == .integer(1))
        #expect(statement.sql(.sqlite).contains("billing_recovery = coalesce(t.billing_recovery, excluded.billing_recovery)"))
        let sqlite = statement.sql(.sqlite), postgres = statement.sql(.postgres)
        #expect(sqlite.contains("VALUES (?, ?,") && postgres.contains("VALUES ($1, $2,") && postgres.contains("$\(LedgerColumn.allCases.count))"))
        #expect(sqlite.replacingOccurrences(of: "?", with: "") == postgres.replacingOccurrences(of: #"\$[0-9]+"#, with: "", options: .regularExpression))
        // A row the poll re-asks without a change is not written; a fact is never erased.
        #expect(sqlite.contains("WHERE t.original_transaction_id = excluded.original_transaction_id AND ((excluded.as_of >= t.as_of AND (excluded.expires_at IS DISTINCT FROM t.expires_at OR"))
        #expect(sqlite.contains("price = coalesce(t.price, excluded.price)"))
        #expect(!sqlite.contains("first_source ="), "who brought it first is written once")
    }
}
