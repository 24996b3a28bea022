import ArgumentParser
import Foundation
import StatusPolling

/// `status-poller events list`: the outbox and each event's delivery, for support.
struct EventsList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List outbound events, newest first, with their delivery to each endpoint (never a body).")

    @OptionGroup var storeOptions: StoreOptions

    @Flag(help: "Only deliveries given up (dead-lettered): replay them with `events replay`.")
    var failed = false

    @Flag(help: "Only deliveries not made yet, waiting for their turn or a retry.")
    var pending = false

    @Option(help: "How many.")
    var last = 50

    @Option(help: "Output: text or json.")
    var format: ReportFormat = .text

    func validate() throws {
        guard !(failed && pending) else { throw ValidationError("--failed and --pending exclude each other.") }
        guard last >= 1 else { throw ValidationError("--last must be at least 1.") }
    }

    func run() async throws {
        let filter: EventFilter = failed ? .failed : pending ? .pending : .all
        try await storeOptions.withStore(try await storeOptions.settings()) { store, database in
            let events = try await store.events(filter, limit: last)
            switch format {
            case .json: print(try StoredEvent.json(events))
            case .text:
                guard !events.isEmpty else { return print("no events\(failed ? " failed" : pending ? " pending" : "") in \(database)") }
                print(([StoredEvent.tableHeader] + events.map(\.line)).joined(separator: "\n"))
            }
        }
    }
}
