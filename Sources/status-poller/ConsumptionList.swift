import ArgumentParser
import Foundation
import StatusPolling

/// `status-poller consumption list`: the recorded refund requests and their answers, newest first.
struct ConsumptionList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List Apple's refund requests and what was answered, newest first, with the counts.",
        discussion: "--pending: still to be answered; --failed: refused by Apple or expired unanswered. Exit 0.")

    @OptionGroup var storeOptions: StoreOptions

    @Flag(help: "Only requests still to be answered.")
    var pending = false

    @Flag(help: "Only requests Apple refused or that expired unanswered.")
    var failed = false

    @Option(help: "At most this many requests (default: 100).")
    var limit: Int = 100

    @Option(help: "Output: text or json.")
    var format: ReportFormat = .text

    func validate() throws {
        if pending && failed { throw ValidationError("--pending and --failed go one at a time.") }
        if limit < 1 { throw ValidationError("--limit must be at least 1, got \(limit).") }
    }

    func run() async throws {
        let settings = try await storeOptions.settings()
        let states: [ConsumptionState]? = pending ? [.pending] : failed ? ConsumptionQuery.failedStates : nil
        let (requests, all) = try await storeOptions.withStore(settings) { store, _ in
            (try await store.consumptionRequests(ConsumptionQuery(states: states, limit: limit)), try await store.consumptionRequests(ConsumptionQuery(limit: Int(Int32.max))))
        }
        let counts = ConsumptionCounts(all)
        if format == .json {
            let object: [String: Any] = ["requests": requests.map(Self.json), "counts": counts.json]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
            return print(String(decoding: data, as: UTF8.self))
        }
        print(counts.line)
        for r in requests { print(Self.line(r)) }
    }

    static func line(_ r: ConsumptionRequestRecord) -> String {
        var line = "\(r.notificationID)  \(r.userID)  transaction \(r.transactionID)  requested \(Display.time(r.requestedAtMs))  \(r.state.rawValue)"
        if let sent = r.sentAtMs { line += " \(Display.time(sent))\(r.answeredOnTime ? "" : " (late)")" }
        if r.state == .pending { line += " (next \(Display.time(r.nextAttemptAtMs)), deadline \(Display.time(r.deadlineMs)))" }
        if let status = r.appleStatus, r.state != .sent { line += "  Apple HTTP \(status)" }
        if let error = r.appleError { line += " error \(error)" }
        if r.body != nil { line += "  preference \(r.refundPreference?.rawValue ?? "none")" }
        if let decision = r.decision { line += "  Apple \(decision)" }
        return line
    }

    static func json(_ r: ConsumptionRequestRecord) -> [String: Any] {
        var row: [String: Any] = [
            "notification_id": r.notificationID, "transaction_id": r.transactionID, "user_id": r.userID, "subscription_id": r.subscriptionID,
            "requested_at": Display.time(r.requestedAtMs), "deadline_at": Display.time(r.deadlineMs), "state": r.state.rawValue, "attempts": r.attempts,
            "delivery_status": r.deliveryStatus.rawValue, "prior_refunds": r.priorRefunds,
        ]
        row["environment"] = r.environment?.rawValue
        row["apple_status"] = r.appleStatus
        row["apple_error"] = r.appleError
        row["body"] = r.body
        row["refund_preference"] = r.refundPreference?.rawValue
        row["sent_at"] = r.sentAtMs.map(Display.time)
        row["on_time"] = r.sentAtMs.map { _ in r.answeredOnTime }
        row["decision"] = r.decision
        return row
    }
}
