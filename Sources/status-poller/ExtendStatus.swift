import AppStoreBackends
import ArgumentParser
import Foundation
import PollerCommandLine
import StatusPolling

/// `status-poller extend status`: asks Apple how far each mass extension got, records it, and
/// lists every request the database holds.
struct ExtendStatus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Ask Apple how far each mass renewal-date extension got, and list them with their counts.",
        discussion: """
            Every request Apple took and has not finished is asked once (Get Status of Subscription Renewal Date \
            Extensions) and its answer recorded; the nightly run does the same. Exit 0; 3 when Apple could not be asked.
            """)

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var appStore: AppStoreOptions
    @OptionGroup(title: "App Store Server API") var serverAPI: ServerAPIOptions

    @Option(help: "Output: text or json.")
    var format: ReportFormat = .text

    @Option(help: "The clock recorded with Apple's answer, ISO 8601 (default: now).")
    var now: String?

    func validate() throws {
        if let now, ISO8601.parse(now) == nil { throw ValidationError("--now must be ISO 8601 like 2026-11-22T03:00:00Z, got '\(now)'.") }
    }

    func run() async throws {
        let nowMs = ISO8601.milliseconds(now)
        let requests = try await SupportSession.run(
            store: storeOptions, appStore: appStore, serverAPI: serverAPI, endpointRate: 1, purpose: "mass extensions are followed"
        ) { session in
            try await session.desk.followMassExtensions(client: session.client, nowMs: nowMs, logger: session.logger)
        }
        if format == .json {
            let rows: [[String: Any]] = requests.map { r in
                var row: [String: Any] = [
                    "request_id": r.requestIdentifier, "product_id": r.productID, "days": r.days, "reason": r.reasonCode, "environment": r.environment,
                    "requested_at": Display.time(r.requestedAtMs), "state": Self.state(r),
                ]
                row["storefronts"] = r.storefrontCountryCodes
                row["accepted_at"] = r.acceptedAtMs.map(Display.time)
                row["apple_error"] = r.appleError
                row["completed_at"] = r.completedAtMs.map(Display.time)
                row["succeeded"] = r.succeeded
                row["failed"] = r.failed
                return row
            }
            let data = try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys])
            return print(String(decoding: data, as: UTF8.self))
        }
        if requests.isEmpty { return print("no mass extension recorded (status-poller extend --all … makes one).") }
        for r in requests {
            var line = "\(r.requestIdentifier)  \(r.productID) +\(r.days)d  \(r.environment)  requested \(Display.time(r.requestedAtMs))  \(Self.state(r))"
            if let completed = r.completedAtMs { line += " \(Display.time(completed)): \(r.succeeded ?? 0) extended, \(r.failed ?? 0) failed" }
            if let error = r.appleError { line += " (Apple error \(error): \(RenewalExtensionRefusal(rawValue: error)?.explanation ?? "see Apple's documentation"))" }
            print(line)
        }
    }

    /// complete, in_progress, refused or unsent (recorded, Apple's answer never heard: send it again).
    static func state(_ r: MassExtensionRequest) -> String {
        if r.completedAtMs != nil { return "complete" }
        if r.acceptedAtMs != nil { return "in_progress" }
        return r.appleError != nil ? "refused" : "unsent"
    }
}
