import Logging

/// One status-polling run: read the due rows page by page, verify up to `concurrency` receipts at
/// once, decide, and write each result in its own transaction.
///
/// The stages are bounded — one page of rows read ahead, `concurrency` requests in flight, one
/// writer — so memory stays flat however many rows are due, and a crash loses at most the answers
/// in flight.
public struct PollRun: Sendable {
    /// The settings of one run.
    public struct Configuration: Sendable {
        /// `receipt.bundle_id` every answer must carry.
        public var bundleID: String
        /// The run's clock, ms since 1970: selection windows and bookkeeping use it.
        public var nowMs: Int64
        public var selection: SelectionWindows
        /// Receipts verified at once.
        public var concurrency: Int
        /// Rows read per page of the selection.
        public var pageSize: Int
        /// Ask Apple and report, but write nothing.
        public var dryRun: Bool

        public init(bundleID: String, nowMs: Int64, selection: SelectionWindows = .init(), concurrency: Int = 8, pageSize: Int = 500, dryRun: Bool = false) {
            self.bundleID = bundleID
            self.nowMs = nowMs
            self.selection = selection
            self.concurrency = concurrency
            self.pageSize = pageSize
            self.dryRun = dryRun
        }
    }

    public var configuration: Configuration
    public var store: any SubscriptionStore
    public var client: VerifyReceiptClient
    public var logger: Logger
    /// Reads the wall clock for the report's duration; injectable for tests.
    public var elapsed: @Sendable () -> ContinuousClock.Instant

    public init(configuration: Configuration, store: any SubscriptionStore, client: VerifyReceiptClient, logger: Logger, elapsed: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.configuration = configuration
        self.store = store
        self.client = client
        self.logger = logger
        self.elapsed = elapsed
    }

    /// Runs to the end of the selection. Never throws: an abort (21004, the store unreadable) is in
    /// the report, with the counts of what was done before it.
    public func run() async -> RunReport {
        let started = elapsed()
        var report = RunReport(nowMs: configuration.nowMs, dryRun: configuration.dryRun)
        var deprecationLogged = false
        do {
            var rows = SelectionCursor(store: store, configuration: configuration)
            try await withThrowingTaskGroup(of: RowResult.self) { group in
                var inFlight = 0
                while inFlight < configuration.concurrency, let row = try await rows.next() {
                    group.addTask { try await verify(row) }
                    inFlight += 1
                }
                while let result = try await group.next() {
                    inFlight -= 1
                    if !deprecationLogged, let notice = result.stats.deprecation {
                        logger.warning("verifyReceipt is deprecated by Apple", metadata: ["headers": "\(notice)"])
                        deprecationLogged = true
                    }
                    await record(result, into: &report)
                    if let row = try await rows.next() {
                        group.addTask { try await verify(row) }
                        inFlight += 1
                    }
                }
            }
        } catch let abort as RunAbort {
            report.aborted = abort.description
            logger.error("run aborted", metadata: ["reason": "\(abort)"])
        } catch is CancellationError {
            report.aborted = "the run was cancelled"
        } catch {
            report.aborted = "the store could not be read: \(error)"
            logger.error("run aborted: store unreadable", metadata: ["error": "\(error)"])
        }
        report.durationSeconds = Double((elapsed() - started).milliseconds) / 1000
        return report
    }

    /// What one row came to before anything is written.
    struct RowResult: Sendable {
        enum Decision: Sendable {
            case adopt(SubscriptionState, latestReceipt: String?, status: VerifyReceiptStatus)
            case fail(VerificationFailure)
        }
        var row: SubscriptionRow
        var decision: Decision
        var stats: Verification.Stats
    }

    /// Verifies and decides one row; no writes here, so many can run at once.
    func verify(_ row: SubscriptionRow) async throws -> RowResult {
        var rowLogger = logger
        rowLogger[metadataKey: "subscription.id"] = "\(row.id)"
        let start: AppStoreEnvironment = row.state.environment == AppStoreEnvironment.sandbox.rawValue ? .sandbox : .production
        let verification = try await client.verify(receipt: row.latestReceipt, startingIn: start, logger: rowLogger)
        switch verification.result {
        case .failed(let failure):
            return RowResult(row: row, decision: .fail(failure), stats: verification.stats)
        case .answered(let response):
            switch EntitlementDecision.decide(response: response, row: row, bundleID: configuration.bundleID) {
            case .adopt(let state, let receipt):
                return RowResult(row: row, decision: .adopt(state, latestReceipt: receipt, status: response.status), stats: verification.stats)
            case .reject(var failure):
                failure.appleStatus = response.status
                return RowResult(row: row, decision: .fail(failure), stats: verification.stats)
            }
        }
    }
}
