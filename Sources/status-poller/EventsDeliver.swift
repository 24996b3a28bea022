import ArgumentParser
import Foundation
import PollerCommandLine
import ReceiverServer
import StatusPolling

/// `status-poller events deliver`: the outbox to the configured endpoints.
struct EventsDeliver: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deliver",
        abstract: "POST each outbound event to the endpoints of the config file (event_endpoints), signed, in order per user, until SIGTERM; --once for cron.",
        discussion: """
            Each event goes to each endpoint at least once, with Standard Webhooks headers (webhook-id, webhook-timestamp, \
            webhook-signature: v1,<base64 HMAC-SHA256>). A user's next event waits for the previous one's 2xx; users go at once. \
            A failure (no 2xx, a timeout, a redirect: none is followed) is retried with exponential backoff and jitter until \
            event_max_age_hours (72) from when the endpoint got it, then dead-lettered (`events list --failed`, `events replay`). Delivered events are deleted \
            after event_keep_days (7). HTTPS only, except to loopback. Exit codes of --once: 0 every due event delivered, \
            1 some failed (retried later or dead-lettered), 2 configuration, 3 database. See docs/EVENTS.md.
            """)

    @OptionGroup var storeOptions: StoreOptions

    @Flag(help: "Deliver what is due now, prune, and exit (for cron); without it, run until SIGTERM.")
    var once = false

    @OptionGroup var output: OutputOptions

    func run() async throws {
        let settings = try await storeOptions.settings()
        let database = try storeOptions.databasePath(settings)
        let events = try EventSettings.load(settings, configPath: storeOptions.config)
        guard !events.endpoints.isEmpty else {
            throw usageError("no endpoints: add event_endpoints to the config file, e.g. {\"web\": {\"url\": \"https://…\", \"secret_file\": \"/etc/status-poller/web.whsec\"}}.")
        }
        let output = try self.output.resolve(settings)
        let logger = LogSetup.make(level: output.logLevel, format: output.logFormat)
        let store: any PollingStore
        do {
            store = try await Composition.database(database, writesOutbox: true).open()
        } catch let error as StoreError {
            throw exitError(error.exitCode, "\(error)")
        }
        let client = try events.client()
        let metrics = output.metricsFile.map { EventMetrics(file: $0) }
        let deliverer = events.deliverer(store, client: client, logger: logger, metrics: metrics)
        do {
            if once {
                let report = try await deliverer.deliverDue()
                let pruned = try await deliverer.prune()
                if let metrics {
                    metrics.update(counts: try await store.deliveryCounts())
                    try metrics.flush()
                }
                say("events: \(report.added) new, \(report.delivered) delivered, \(report.retried) to retry, \(report.dead) dead-lettered, \(pruned) pruned")
                try await client.shutdown()
                try? await store.close()
                if report.retried + report.dead > 0 { throw exitError(.someFailed, "some events could not be delivered; see `events list --pending` and `--failed`.") }
                return
            }
            say("delivering events to \(events.endpoints.map(\.name).joined(separator: ", ")) until SIGTERM")
            // PostgreSQL wakes the deliverer at each commit that wrote events (NOTIFY).
            try await EventDeliveryService.runUntilSignalled(EventDeliveryService.services(deliverer, store: store), logger: logger)
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            try? await client.shutdown()
            try? await store.close()
            throw exitError(.aborted, "event delivery stopped: \(error)")
        }
        try await client.shutdown()
        try? await store.close()
    }
}
