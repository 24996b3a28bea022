import Logging
import PollingDemo

/// The demos the report's tests read: fault-free, instant answers (a timeout that never fires), 15 % of renewals failing (so
/// there are billing episodes to count), the same final night; each test picks its size and seed.
enum ReportDemo {
    static let finalNightMs: Int64 = 1_790_000_000_000
    /// The report's end: the day after the final night.
    static let toMs = finalNightMs + 86_400_000

    static func configuration(
        subscribers: Int, nights: Int, seed: UInt64, backend: DemoBackend = .verifyReceipt, notifications: Bool = false
    ) -> DemoConfiguration {
        var configuration = DemoConfiguration(
            subscribers: subscribers, nights: nights, seed: seed, faultRate: 0, latency: .none, concurrency: 16, requestTimeout: VerifyReceiptTesting.patientTimeout,
            slowAnswers: false, finalNightMs: finalNightMs, backend: backend)
        configuration.notifications = notifications
        configuration.rates = ["billing_failure=0.15"]
        return configuration
    }

    /// Plays `configuration` quietly.
    static func play(_ configuration: DemoConfiguration, database: DemoDatabase) async throws -> Demo.Outcome {
        var logger = Logger(label: "report-demo")
        logger.logLevel = .critical
        return try await Demo.play(configuration, database: database, logger: logger)
    }
}
