import Foundation
import Testing

/// The stores only speak SQL (issue 48): no store source outside its schema names the domain's
/// types — the workflows that use them are the library's, written once — and the store code
/// outside schemas and migrations stays small.
@Suite struct StoreBoundaryTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources").standardized
    static let stores = ["SQLiteStore", "PostgresStore"]
    /// The schemas and migrations: released SQL, never edited (a comment of one names an event kind).
    static let schemas: Set<String> = ["SQLiteSchema.swift", "PostgresSchema.swift", "PostgresMigrator.swift"]
    static let domainTypes = [
        "RowUpdatePlan", "ChainMerge", "NotificationMatch", "OutboundEvent", "EventKind", "ConsumptionQueue", "NotificationIngest", "PlanWriter",
        "NotificationWriter",
    ]

    static func storeFiles() throws -> [(name: String, text: String)] {
        try stores.flatMap { store in
            let folder = sources.appendingPathComponent(store)
            return try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }.sorted().map { name in
                ("\(store)/\(name)", try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8))
            }
        }
    }

    @Test func noStoreNamesTheDomainsTypes() throws {
        let files = try Self.storeFiles().filter { !Self.schemas.contains(URL(fileURLWithPath: $0.name).lastPathComponent) }
        #expect(files.count >= 20)
        var named: [String] = []
        for (name, text) in files {
            let words = Set(text.split { !($0.isLetter || $0.isNumber || $0 == "_") }.map(String.init))
            named += Self.domainTypes.filter(words.contains).map { "\(name): \($0)" }
        }
        #expect(named == [])
    }

    @Test func storeCodeOutsideSchemasIsAtMost1800Lines() throws {
        let lines = try Self.storeFiles().filter { !Self.schemas.contains(URL(fileURLWithPath: $0.name).lastPathComponent) }
            .map { $0.text.split(separator: "\n", omittingEmptySubsequences: false).count - 1 }.reduce(0, +)
        #expect(lines > 500)
        #expect(lines <= 1_800)
    }
}
