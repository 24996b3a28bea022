import Foundation
import Testing

/// What each target may import (docs/ARCHITECTURE.md, "Targets"). The build order keeps a lower
/// target from importing a higher one; this keeps a target from reaching sideways past its layer
/// (SwiftPM lets a target import any module built before it), the core free of I/O, and each
/// database driver in its store.
@Suite struct TargetBoundaryTests {
    static let sources = StoreBoundaryTests.sources

    /// The package's own modules each target may import.
    static let allowed: [String: Set<String>] = [
        "EntitlementCore": [],
        "AppStoreBackends": ["EntitlementCore"],
        "StatusPolling": ["EntitlementCore", "AppStoreBackends", "CZlib"],
        "SQLiteStore": ["StatusPolling"],
        "PostgresStore": ["StatusPolling", "AppStoreBackends"],
        "ReceiverServer": ["StatusPolling", "EntitlementCore"],
        "ReportPage": ["StatusPolling"],
        "AppStoreSimulator": [],
        "PollingDemo": ["StatusPolling", "EntitlementCore", "AppStoreBackends", "AppStoreSimulator", "ReceiverServer"],
        "PollerCommandLine": ["StatusPolling", "EntitlementCore", "SQLiteStore", "PostgresStore", "CMalloc"],
        "BuildInfo": [],
        // The system zlib's module map (the prune archive): no Swift of its own.
        "CZlib": [],
        // glibc's malloc.h (mallopt, at start-up).
        "CMalloc": [],
        "status-poller": [
            "StatusPolling", "EntitlementCore", "AppStoreBackends", "SQLiteStore", "PostgresStore", "ReceiverServer", "ReportPage", "PollerCommandLine",
            "BuildInfo",
        ],
        "status-poller-demo": ["StatusPolling", "SQLiteStore", "PostgresStore", "AppStoreSimulator", "PollingDemo", "PollerCommandLine", "BuildInfo"],
    ]

    /// Every module each target's sources import.
    static func imports() throws -> [String: Set<String>] {
        var imports: [String: Set<String>] = [:]
        for target in try FileManager.default.contentsOfDirectory(atPath: sources.path) {
            let folder = sources.appendingPathComponent(target)
            guard let files = FileManager.default.enumerator(atPath: folder.path) else { continue }
            var modules: Set<String> = []
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                for line in text.split(separator: "\n") {
                    let words = line.split(separator: " ").filter { $0 != "@testable" }
                    if words.count >= 2, words[0] == "import" { modules.insert(String(words[1])) }
                }
            }
            imports[target] = modules
        }
        return imports
    }

    @Test func eachTargetImportsOnlyTheLayersBelowIt() throws {
        let imports = try Self.imports()
        #expect(Set(imports.keys) == Set(Self.allowed.keys))
        let ours = Set(Self.allowed.keys)
        for (target, modules) in imports {
            let reached = modules.intersection(ours).subtracting(Self.allowed[target] ?? [])
            #expect(reached == [], "\(target) imports \(reached.sorted())")
        }
    }

    @Test func theCoreDoesNoIOAndEachDriverStaysInItsStore() throws {
        let imports = try Self.imports()
        #expect(imports["EntitlementCore"] == ["Logging", "Glibc", "Darwin"])
        #expect(imports.filter { $0.value.contains("GRDB") }.keys.sorted() == ["SQLiteStore"])
        #expect(imports.filter { $0.value.contains("GRDBSQLite") }.keys.sorted() == ["SQLiteStore"])
        #expect(imports.filter { $0.value.contains("PostgresNIO") }.keys.sorted() == ["PostgresStore"])
    }
}
