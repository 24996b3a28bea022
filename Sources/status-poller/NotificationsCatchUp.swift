import AppStoreBackends
import ArgumentParser
import EntitlementCore
import Foundation
import PollerCommandLine
import StatusPolling

/// `status-poller notifications catch-up`: what Apple tried to send since the last catch-up, from
/// its notification history, into the same rows as the receiver.
struct NotificationsCatchUp: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catch-up",
        abstract: "Read Apple's notification history since the last catch-up and apply what the receiver missed (Server API credentials needed).",
        discussion: """
            Every record goes through the receiver's checks and ingest: one the receiver already took is a \
            duplicate and changes nothing. The checkpoint (per environment, in the database) moves only after \
            the last page, so a catch-up cut short is simply run again. The first catch-up reads --since-hours \
            back; never more than Apple keeps (180 days in production, 30 in the sandbox). Exit 0 when every \
            environment was read; 3 when a page could not be read or a record written (nothing is lost: run it again).
            """)

    @OptionGroup var storeOptions: StoreOptions

    @OptionGroup var appStore: AppStoreOptions

    @OptionGroup(title: "App Store Server API") var serverAPI: ServerAPIOptions

    @Option(help: "production, sandbox or both (default: both).")
    var environment: String = "both"

    @Option(help: "How far back the first catch-up reads, in hours (default: 24).")
    var sinceHours: Double = 24

    @Flag(help: "Only the notifications Apple has not delivered yet, or is still retrying.")
    var onlyFailures = false

    @Option(help: "The catch-up's clock as ISO 8601 (default: now).")
    var now: String?

    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard ["production", "sandbox", "both"].contains(environment) else {
            throw ValidationError("--environment must be production, sandbox or both, got '\(environment)'.")
        }
        guard sinceHours > 0, sinceHours <= 180 * 24 else { throw ValidationError("--since-hours must be above 0 and at most 4320 (180 days).") }
        if let now, ISO8601.parse(now) == nil { throw ValidationError("--now must be ISO 8601 like 2026-11-22T03:00:00Z, got '\(now)'.") }
    }

    func run() async throws {
        let settings = try await storeOptions.settings()
        let appStore = try self.appStore.resolve(settings)
        let configuration = try self.serverAPI.resolve(settings, allowInsecureHTTP: appStore.allowInsecureHTTP)
            .notificationsConfiguration(appStore: appStore, purpose: "the notification history is read")
        let output = try self.output.resolve(settings)
        let logger = LogSetup.make(level: output.logLevel, format: output.logFormat)
        let nowMs = ISO8601.milliseconds(now)
        let environments: [AppStoreEnvironment] = environment == "both" ? [.production, .sandbox] : [environment == "production" ? .production : .sandbox]
        try await storeOptions.withStore(settings) { (store: any NotificationInbox, _) in
            let receiver = NotificationReceiver(
                .init(bundleID: appStore.bundleID, appAppleID: configuration.appAppleID, trustedRoots: configuration.trustedRoots), inbox: store, logger: logger)
            try await KeepAliveHTTPClient.withClient(appStore.httpConfiguration) { http in
                let catchUp = NotificationCatchUp(client: ServerAPIClient(configuration: configuration, http: http), receiver: receiver, inbox: store)
                var reports: [NotificationCatchUp.Report] = []
                for environment in environments {
                    do {
                        reports.append(try await catchUp.run(
                            environment, nowMs: nowMs, since: .milliseconds(Int64(sinceHours * 3_600_000)), onlyFailures: onlyFailures, logger: logger))
                    } catch let error as StoreError {
                        Self.print(reports, format: output.report)
                        throw exitError(error.exitCode, "\(error)")
                    } catch let failure as VerificationFailure {
                        Self.print(reports, format: output.report)
                        throw exitError(.aborted, "could not read the \(environment.rawValue) notification history: \(failure.detail). Its checkpoint has not moved; run the catch-up again.")
                    } catch let abort as RunAbort {
                        Self.print(reports, format: output.report)
                        throw exitError(.aborted, "\(abort)")
                    }
                }
                Self.print(reports, format: output.report)
            }
        }
    }

    static func print(_ reports: [NotificationCatchUp.Report], format: ReportFormat) {
        if format == .json { return say(NotificationCatchUp.Report.json(reports)) }
        for report in reports { say(report.line) }
    }
}
