import Foundation

/// What a run is.
public enum RunMode: String, Sendable, Codable {
    /// The nightly selection (cron).
    case nightly
    /// A backfill: chosen rows, ignoring the nightly windows, resumable.
    case backfill
}

/// How a run ended, in the run history.
public enum RunStatus: String, Sendable, Codable {
    case running
    case finished
    /// Stopped by SIGTERM/SIGINT; a backfill resumes from its checkpoint.
    case interrupted
    /// Stopped early: 21004, or the store unreadable.
    case aborted
}

/// The facts recorded when a run starts.
public struct RunStart: Sendable, Equatable {
    public var mode: RunMode
    /// The run's clock (`--now`), ms.
    public var nowMs: Int64
    /// The wall clock at the start, ms.
    public var startedAtMs: Int64
    public var host: String
    public var pid: Int32
    /// The settings, for the history (never the secret).
    public var options: [String: String]

    public init(mode: RunMode, nowMs: Int64, startedAtMs: Int64, host: String, pid: Int32, options: [String: String]) {
        self.mode = mode
        self.nowMs = nowMs
        self.startedAtMs = startedAtMs
        self.host = host
        self.pid = pid
        self.options = options
    }

    /// This process, now.
    public static func current(mode: RunMode, nowMs: Int64, options: [String: String]) -> RunStart {
        RunStart(
            mode: mode, nowMs: nowMs, startedAtMs: Int64(Date().timeIntervalSince1970 * 1000),
            host: ProcessInfo.processInfo.hostName, pid: ProcessInfo.processInfo.processIdentifier, options: options)
    }
}

/// One row of the run history, as `status-poller runs` shows it.
public struct RunRecord: Sendable, Equatable {
    public var id: Int64
    public var mode: RunMode
    public var status: RunStatus
    public var startedAtMs: Int64
    public var finishedAtMs: Int64?
    public var nowMs: Int64
    public var host: String
    public var pid: Int32
    public var options: [String: String]
    public var checkpointID: Int64
    public var targets: Int?
    public var selected: Int?
    public var verified: Int?
    public var updated: Int?
    public var unchanged: Int?
    public var failed: Int?
    public var retries: Int?
    public var exitCode: Int?
    /// The report as JSON, when the run finished.
    public var report: String?

    public init(
        id: Int64, mode: RunMode, status: RunStatus, startedAtMs: Int64, finishedAtMs: Int64?, nowMs: Int64, host: String, pid: Int32,
        options: [String: String], checkpointID: Int64, targets: Int?, selected: Int?, verified: Int?, updated: Int?, unchanged: Int?,
        failed: Int?, retries: Int?, exitCode: Int?, report: String?
    ) {
        self.id = id
        self.mode = mode
        self.status = status
        self.startedAtMs = startedAtMs
        self.finishedAtMs = finishedAtMs
        self.nowMs = nowMs
        self.host = host
        self.pid = pid
        self.options = options
        self.checkpointID = checkpointID
        self.targets = targets
        self.selected = selected
        self.verified = verified
        self.updated = updated
        self.unchanged = unchanged
        self.failed = failed
        self.retries = retries
        self.exitCode = exitCode
        self.report = report
    }
}

/// One change of a row's contract columns, from the audit trail.
public struct SubscriptionEvent: Sendable, Equatable {
    public var id: Int64
    public var subscriptionID: Int64
    public var userID: String
    public var runID: Int64?
    /// The run's clock when the change was written, ms.
    public var atMs: Int64
    /// A `SubscriptionTransition` name, or `conflict`.
    public var reason: String
    public var appleStatus: Int?
    public var entitlementBefore: String
    public var entitlementAfter: String
    public var old: SubscriptionState
    public var new: SubscriptionState

    public init(id: Int64, subscriptionID: Int64, userID: String, runID: Int64?, atMs: Int64, reason: String, appleStatus: Int?, entitlementBefore: String, entitlementAfter: String, old: SubscriptionState, new: SubscriptionState) {
        self.id = id
        self.subscriptionID = subscriptionID
        self.userID = userID
        self.runID = runID
        self.atMs = atMs
        self.reason = reason
        self.appleStatus = appleStatus
        self.entitlementBefore = entitlementBefore
        self.entitlementAfter = entitlementAfter
        self.old = old
        self.new = new
    }
}
