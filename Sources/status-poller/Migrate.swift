import ArgumentParser
import Foundation
import PollerCommandLine

extension StatusPoller {
    /// `status-poller migrate`: creates or upgrades the schema; idempotent, safe on every deploy.
    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create or upgrade the database schema (idempotent; run it on every deploy).")

        @OptionGroup var storeOptions: StoreOptions

        func run() async throws {
            let location = try storeOptions.databasePath(try await storeOptions.settings())
            let database = Composition.displayName(location)
            do {
                let applied = try await Composition.database(location, writesOutbox: false).migrate()
                print(applied.isEmpty ? "schema is up to date: \(database)" : "applied \(applied.count) migration(s) to \(database): \(applied.joined(separator: ", "))")
            } catch let failure as CommandFailure {
                throw failure  // a malformed URL
            } catch {
                throw usageError("\(error)")
            }
        }
    }
}
