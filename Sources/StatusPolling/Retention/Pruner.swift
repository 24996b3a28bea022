import Foundation
import Logging
import Synchronization

/// Deletes the history a ``RetentionPolicy`` lets go, table by table, a bounded batch per
/// transaction until a batch comes back short: the work is what became old since the last prune,
/// never the whole trail, so a nightly prune costs the same in the first month as in the fifth
/// year. With an archive folder, each table's rows go first to a gzip JSON lines file.
public struct Pruner: Sendable {
    let store: any TrailRetention
    let policy: RetentionPolicy
    let logger: Logger

    public init(store: any TrailRetention, policy: RetentionPolicy, logger: Logger) {
        self.store = store
        self.policy = policy
        self.logger = logger
    }

    /// What one prune deleted (and archived where).
    public struct Report: Sendable, Equatable {
        /// Rows deleted per table, every table with a setting (0 when nothing was old enough).
        public var deleted: [RetainedTable: Int] = [:]
        /// The archive file of each table that had rows to delete.
        public var archives: [RetainedTable: String] = [:]

        public var total: Int { deleted.values.reduce(0, +) }

        /// One line per table: `subscription_events: 1,204 deleted (archived in …)`.
        public var text: String {
            RetainedTable.allCases.compactMap { table in
                deleted[table].map { "\(table.rawValue): \($0) deleted" + (archives[table].map { " (archived in \($0))" } ?? "") }
            }.joined(separator: "\n")
        }
    }

    /// Prunes every table whose setting is given, as of `nowMs`.
    public func prune(nowMs: Int64) async throws -> Report {
        var report = Report()
        let stamp = Self.stamp(nowMs)
        for table in RetainedTable.allCases {
            guard let cutoff = policy.cutoff(table, nowMs: nowMs) else { continue }
            let archive = policy.archiveDirectory.map { LazyArchive(directory: $0, table: table, stamp: stamp) }
            let archiving: (@Sendable ([String]) async throws -> Void)? = archive.map { archive in { @Sendable rows in try archive.append(rows) } }
            var deleted = 0
            do {
                while true {
                    let batch = try await store.prune(table, olderThan: cutoff, limit: policy.batchSize, archive: archiving)
                    deleted += batch
                    if batch < policy.batchSize { break }
                }
            } catch {
                _ = try? archive?.finish()
                throw error
            }
            if let path = try archive?.finish() { report.archives[table] = path }
            report.deleted[table] = deleted
            if deleted > 0 {
                logger.info("pruned", metadata: ["table": "\(table.rawValue)", "deleted": "\(deleted)", "older_than_ms": "\(cutoff)"])
            }
        }
        return report
    }

    /// `20261129T120000Z`: the prune's time in the archive's file names.
    static func stamp(_ ms: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }
}

/// A table's archive file, created when its first batch comes (a prune with nothing to delete
/// leaves no empty file).
private final class LazyArchive: Sendable {
    let directory: String
    let table: RetainedTable
    let stamp: String
    private let opened = Mutex<JSONLinesArchive?>(nil)

    init(directory: String, table: RetainedTable, stamp: String) {
        self.directory = directory
        self.table = table
        self.stamp = stamp
    }

    /// Appends a batch, making the file first if this is the first.
    func append(_ rows: [String]) throws {
        try opened.withLock { file in
            if file == nil { file = try JSONLinesArchive(directory: directory, table: table, stamp: stamp) }
            try file?.append(rows)
        }
    }

    /// Closes the file, if one was made; its path.
    func finish() throws -> String? {
        try opened.withLock { file in
            guard let file else { return nil }
            try file.finish()
            return file.path
        }
    }
}
