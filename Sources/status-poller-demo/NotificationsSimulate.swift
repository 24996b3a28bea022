import AppStoreSimulator
import ArgumentParser
import Foundation
import PollerCommandLine

/// `status-poller-demo notifications simulate`: V2 notifications signed by a simulator PKI, written to
/// a file for the receiver's load and reliability harnesses (the simulator posting its own
/// lifecycle's notifications is `simulate --notify-url`, a later issue).
struct NotificationsSimulate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Write signed V2 notifications (DID_RENEW, one body per line) and the rows owning their chains, for the receiver's harnesses.",
        discussion: """
            Chains sim-0 … sim-(N-1); notification i renews chain i mod N, each signed later than the one \
            before (signedDate = --start + i ms), so every one is newer than what its row holds. The \
            PKI's root goes to --key-dir (simulator-root.pem): give it to `notifications serve \
            --trusted-root-file` on loopback. --rows writes user_id,original_transaction_id,expires_at (CSV \
            with a header) for the rows to enrol first.
            """)

    @Option(help: "Notifications to write.")
    var count = 1000

    @Option(help: "Distinct chains (rows) they renew.")
    var chains = 100

    @Option(help: "File for the bodies, one JSON object per line.")
    var out: String

    @Option(help: "Directory for the PKI's root (simulator-root.pem, simulator-root.der).")
    var keyDir: String

    @Option(help: "File for the rows owning the chains (CSV: user_id,original_transaction_id,expires_at).")
    var rows: String?

    @Option(help: "The first signedDate, ISO 8601 (default: now).")
    var start: String?

    @Option(help: "Bundle id of every notification.")
    var bundleId = "com.example.premium"

    @Option(help: "The app's Apple id, in production notifications.")
    var appAppleId: Int64 = 1_234_567_890

    func validate() throws {
        guard (1...10_000_000).contains(count) else { throw ValidationError("--count must be between 1 and 10,000,000.") }
        guard (1...count).contains(chains) else { throw ValidationError("--chains must be between 1 and --count.") }
        if let start, ISO8601.parse(start) == nil { throw ValidationError("--start must be ISO 8601, got '\(start)'.") }
    }

    func run() async throws {
        let startMs = ISO8601.milliseconds(start)
        let startDate = Date(timeIntervalSince1970: Double(startMs) / 1000)
        let pki = try SimulatorPKI(notValidBefore: startDate.addingTimeInterval(-86_400), notValidAfter: startDate.addingTimeInterval(400 * 86_400))
        _ = try ServerAPIKeyFiles.write(pki: pki, key: SimulatedInAppPurchaseKey(), into: keyDir)
        let period: Int64 = 30 * 86_400_000
        guard FileManager.default.createFile(atPath: out, contents: nil), let file = FileHandle(forWritingAtPath: out) else {
            throw usageError("cannot write \(out).")
        }
        defer { try? file.close() }
        for index in 0..<count {
            let chain = "sim-\(index % chains)"
            let expires = startMs + period / 2 + Int64(index / chains + 1) * period
            let notification = SimulatedNotification(
                type: "DID_RENEW", uuid: String(format: "00000000-0000-4000-8000-%012d", index), signedDateMs: startMs + Int64(index), bundleID: bundleId,
                appAppleID: appAppleId, originalTransactionID: chain, transactionID: "\(chain)-\(index)", productID: "com.example.premium.monthly",
                purchaseDateMs: expires - period, expiresDateMs: expires)
            try file.write(contentsOf: notification.body(signedBy: pki) + Data("\n".utf8))
        }
        if let rows {
            let lines = ["user_id,original_transaction_id,expires_at"] + (0..<chains).map { "sim-user-\($0),sim-\($0),\(startMs + period / 2)" }
            guard FileManager.default.createFile(atPath: rows, contents: Data((lines.joined(separator: "\n") + "\n").utf8)) else {
                throw usageError("cannot write \(rows).")
            }
        }
    }
}
