import ArgumentParser
import Foundation
import SQLiteStore

extension StatusPoller {
    /// `status-poller migrate`: creates or upgrades the schema; idempotent, safe on every deploy.
    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create or upgrade the database schema (idempotent; run it on every deploy).")

        @Option(help: "Path of the SQLite database (created if missing).")
        var database: String?

        @OptionGroup var configOptions: ConfigOptions

        func run() async throws {
            let database = try Settings(reader: try await configOptions.reader()).required(self.database, "database", flag: "--database")
            do {
                let (store, applied) = try SQLiteSubscriptionStore.migrate(path: database)
                try store.close()
                print(applied.isEmpty ? "schema is up to date: \(database)" : "applied \(applied.count) migration(s) to \(database): \(applied.joined(separator: ", "))")
            } catch {
                throw usageError("\(error)")
            }
        }
    }
}

