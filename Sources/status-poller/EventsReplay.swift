import ArgumentParser
import Foundation
import PollerCommandLine
import StatusPolling

/// `status-poller events replay`: send events again (after an endpoint's outage, or a consumer's bug).
struct EventsReplay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Make events pending again, delivered or dead alike, so the deliverer sends them again in order (same id: consumers deduplicate).")

    @OptionGroup var storeOptions: StoreOptions

    @Option(help: "The event's id (evt_…).")
    var id: String?

    @Option(help: "Every event written at or after this instant, ISO 8601.")
    var since: String?

    @Option(help: "Only to this endpoint (default: every endpoint).")
    var endpoint: String?

    func validate() throws {
        guard (id == nil) != (since == nil) else { throw ValidationError("give exactly one of --id and --since.") }
        if let since, ISO8601.parse(since) == nil { throw ValidationError("--since must be ISO 8601 like 2026-11-22T03:00:00Z, got '\(since)'.") }
    }

    func run() async throws {
        let selection: ReplaySelection = id.map(ReplaySelection.id) ?? .since(ISO8601.milliseconds(since))
        try await storeOptions.withStore(try await storeOptions.settings()) { store, database in
            let count = try await store.replay(selection, endpoint: endpoint, nowMs: EventDeliverer.wallClock())
            print("\(count) deliver\(count == 1 ? "y" : "ies") pending again in \(database); the deliverer sends them in order")
            if count == 0, case .id(let id) = selection {
                throw exitError(.someFailed, "no delivery of \(id)\(endpoint.map { " to \($0)" } ?? ""): check the id with `events list`.")
            }
        }
    }
}
