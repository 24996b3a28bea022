import AppStoreBackends
import EntitlementCore
import Logging

/// Reads back what Apple tried to send (Get Notification History) since the last catch-up and
/// gives every record to the receiver's ingest with `source = history`: a notification the
/// receiver already took is a duplicate and changes nothing; one it missed (a receiver down, a
/// certificate expired, Apple's incident) is applied now. The checkpoint moves only after the last
/// page, so a catch-up cut short is read again from the same start, and applies each record once.
public struct NotificationCatchUp: Sendable {
    /// What one catch-up read and did.
    public struct Report: Sendable, Equatable {
        public var environment: AppStoreEnvironment
        /// The window read: from (the checkpoint, less the overlap) to the catch-up's start.
        public var fromMs: Int64
        public var throughMs: Int64
        public var pages = 0
        /// Every notification Apple tried since this instant is in the store: the history has been
        /// read without a gap from here through ``throughMs`` (nil until the checkpoint moved, and
        /// when this reading found no record: nothing shows that Apple sends notifications at all).
        public var coveredFromMs: Int64?
        public var records = 0
        public var outcomes: [NotificationOutcome: Int] = [:]
        /// Records that failed verification (counted and logged, never applied).
        public var refused = 0
    }

    /// How far back Apple keeps the history: 180 days in production, 30 in the sandbox.
    public static func lookBack(_ environment: AppStoreEnvironment) -> Duration {
        .seconds((environment == .production ? 180 : 30) * 86_400)
    }

    /// Read again before the checkpoint: a record Apple lists a little after its signing date is
    /// not missed; reading it twice is a duplicate, which costs nothing.
    public static let overlap: Duration = .seconds(3600)
    /// Pages being written while the next is read: enough to keep Apple's rate when a page's
    /// writes take longer than the 20 ms between two requests.
    static let pagesWrittenAtOnce = 4

    let client: ServerAPIClient
    let receiver: NotificationReceiver
    let inbox: any NotificationInbox

    public init(client: ServerAPIClient, receiver: NotificationReceiver, inbox: any NotificationInbox) {
        self.client = client
        self.receiver = receiver
        self.inbox = inbox
    }

    /// Catches up `environment` at `nowMs`: from its checkpoint (first time: `since` back), never
    /// further back than Apple keeps. Throws when a page cannot be read or a record cannot be
    /// written (the checkpoint stays where it was).
    public func run(
        _ environment: AppStoreEnvironment, nowMs: Int64, since: Duration = .seconds(24 * 3600), onlyFailures: Bool = false, logger: Logger
    ) async throws -> Report {
        let checkpoint = try await inbox.historyCheckpoint(environment)
        // Never before what Apple keeps, and never after the clock (a checkpoint from a clock that
        // ran ahead must not make every later request invalid).
        let start = min(
            max(checkpoint.map { $0 - Self.overlap.milliseconds } ?? nowMs - since.milliseconds, nowMs - Self.lookBack(environment).milliseconds),
            nowMs - Self.overlap.milliseconds)
        var report = Report(environment: environment, fromMs: start, throughMs: nowMs)
        let request = NotificationHistoryRequest(startDate: start, endDate: nowMs, onlyFailures: onlyFailures)
        // Pages are asked for one after another at Apple's rate while the last few are written,
        // so the pace is the rate or the writes, whichever is slower, never their sum. Any
        // failure ends the reading before the checkpoint moves.
        try await withThrowingTaskGroup(of: Report.self) { group in
            var token: String?
            var writing = 0
            repeat {
                let page = try await client.notificationHistory(request, paginationToken: token, in: environment, logger: logger)
                report.pages += 1
                group.addTask { try await receive(page, environment: environment) }
                writing += 1
                if writing >= Self.pagesWrittenAtOnce, let written = try await group.next() {
                    report.add(written)
                    writing -= 1
                }
                token = page.hasMore ? page.paginationToken : nil
            } while token != nil
            for try await written in group { report.add(written) }
        }
        let coveredFrom = try await inbox.setHistoryCheckpoint(environment, readFromMs: start, throughMs: nowMs, nowMs: nowMs)
        // Only a reading with records proves that Apple sends this app's notifications somewhere:
        // an app with no notification URL reads empty pages forever, and its rows must still be
        // asked (a recovery from billing retry would otherwise never be heard).
        report.coveredFromMs = report.records > 0 ? coveredFrom : nil
        logger.info("caught up with Apple's notification history", metadata: [
            "environment": "\(environment.rawValue)", "pages": "\(report.pages)", "records": "\(report.records)",
            "applied": "\(report.outcomes[.applied, default: 0])", "duplicate": "\(report.outcomes[.duplicate, default: 0])",
        ])
        return report
    }

    /// A page's records, received together so that one commit of the receiver's queue takes them.
    private func receive(_ page: NotificationHistoryResponse, environment: AppStoreEnvironment) async throws -> Report {
        let replies = await withTaskGroup(of: NotificationReceiver.Reply.self) { group in
            for record in page.notificationHistory {
                group.addTask { await receiver.receive(Array(#"{"signedPayload":\#(JSONText.quoted(record.signedPayload))}"#.utf8), source: .history) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        var report = Report(environment: environment, fromMs: 0, throughMs: 0)
        for reply in replies {
            report.records += 1
            switch reply {
            case .accepted(let outcome, _, _): report.outcomes[outcome, default: 0] += 1
            case .refused: report.refused += 1
            case .unavailable(let reason): throw StoreError.unwritable(path: "the notification store", reason: reason)
            }
        }
        return report
    }
}

extension NotificationCatchUp.Report {
    /// Adds the records of a page written.
    mutating func add(_ page: Self) {
        records += page.records
        refused += page.refused
        outcomes.merge(page.outcomes, uniquingKeysWith: +)
    }
}
