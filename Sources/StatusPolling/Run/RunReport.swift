import EntitlementCore
import Foundation

/// What a run did, for `--report text|json` and the exit code.
public struct RunReport: Sendable, Equatable, Encodable {
    /// The run's clock, ms since 1970.
    public var nowMs: Int64
    public var dryRun: Bool
    /// Rows taken from the selection.
    public var selected = 0
    /// Of those, rows selected only because it was their turn in the lapsed sweep.
    public var selectedLapsed = 0
    /// Rows in a window not asked about because their Apple data is fresh (a notification, or a
    /// run, recorded it within `--fresh-within`, and nothing Apple schedules has passed since).
    public var skippedFresh = 0
    /// Rows Apple answered for and whose answer was accepted (written, or would be in a dry run).
    public var verified = 0
    /// Verified rows whose contract columns changed.
    public var updated = 0
    /// Verified rows whose contract columns were already right.
    public var unchanged = 0
    /// Other subscriptions found in new rows' receipts, enrolled as rows of the same user.
    public var discovered = 0
    /// Rows whose receipt the web service replaced (or that were deleted) during the run.
    public var superseded = 0
    /// Rows that failed, by reason. Their entitlement columns were not touched.
    public var failedByReason: [VerificationFailure.Reason: Int] = [:]
    /// Final statuses of failed rows, by backend and code (e.g. verifyReceipt 21003).
    public var failedByUpstreamStatus: [UpstreamStatus: Int] = [:]
    /// What the updates were, in lifecycle terms.
    public var transitions: [SubscriptionTransition: Int] = [:]
    /// HTTP requests sent, environment switches and retries included.
    public var requests = 0
    /// Attempts beyond the first, over all rows.
    public var retries = 0
    /// Answers that asked the run to slow down (HTTP 429, a 5xx, a retryable status).
    public var throttled = 0
    /// The lowest concurrency the run backed off to (the configured one when it never had to).
    public var lowestConcurrency = 0
    public var durationSeconds = 0.0
    /// Why the run stopped early, when it did.
    public var aborted: String?
    /// Stopped by SIGTERM/SIGINT, or at the deadline, before the end of the selection.
    public var interrupted = false
    /// Stopped because the run's `--deadline` passed.
    public var deadlineReached = false
    /// Requests in flight abandoned when the stop's grace period ran out.
    public var abandoned = 0
    /// Every selected row with an id up to this one is done (a backfill resumes after it).
    public var checkpoint: Int64 = 0
    /// The build that ran it (`status-poller --version` in one line), given by the executable;
    /// nil where the host process names none (the demo's in-process nights).
    public var version: String?
    /// What the nightly run read from Apple before it polled (nil: no catch-up ran).
    public var catchUp: CatchUpSummary?
    /// Rows of the poller's own history the run deleted after it polled, per table (nil: no
    /// retention setting, or the prune did not run).
    public var pruned: [String: Int]?

    enum CodingKeys: String, CodingKey {
        case nowMs = "now_ms", dryRun = "dry_run", selected, selectedLapsed = "selected_lapsed", skippedFresh = "skipped_fresh", verified, updated, unchanged, superseded, discovered
        case failedByReason = "failed_by_reason", failedByAppleStatus = "failed_by_apple_status", failedByUpstreamStatus = "failed_by_upstream_status"
        case transitions, requests, retries, throttled, lowestConcurrency = "lowest_concurrency", durationSeconds = "duration_seconds", aborted
        case failed, exitCode = "exit_code", interrupted, deadlineReached = "deadline_reached", abandoned, checkpoint, version
        case catchUp = "catch_up", pruned
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(nowMs, forKey: .nowMs)
        try c.encode(dryRun, forKey: .dryRun)
        try c.encode(selected, forKey: .selected)
        try c.encode(selectedLapsed, forKey: .selectedLapsed)
        try c.encode(skippedFresh, forKey: .skippedFresh)
        try c.encode(verified, forKey: .verified)
        try c.encode(updated, forKey: .updated)
        try c.encode(unchanged, forKey: .unchanged)
        try c.encode(superseded, forKey: .superseded)
        try c.encode(discovered, forKey: .discovered)
        try c.encode(failed, forKey: .failed)
        try c.encode(failedByReason, forKey: .failedByReason)
        try c.encode(failedByAppleStatus, forKey: .failedByAppleStatus)
        try c.encode(Dictionary(uniqueKeysWithValues: failedByUpstreamStatus.map { ($0.key.description, $0.value) }), forKey: .failedByUpstreamStatus)
        try c.encode(transitions, forKey: .transitions)
        try c.encode(requests, forKey: .requests)
        try c.encode(retries, forKey: .retries)
        try c.encode(throttled, forKey: .throttled)
        try c.encode(lowestConcurrency, forKey: .lowestConcurrency)
        try c.encode(durationSeconds, forKey: .durationSeconds)
        try c.encode(aborted, forKey: .aborted)
        try c.encode(interrupted, forKey: .interrupted)
        try c.encode(deadlineReached, forKey: .deadlineReached)
        try c.encode(abandoned, forKey: .abandoned)
        try c.encode(checkpoint, forKey: .checkpoint)
        try c.encode(exitCode.rawValue, forKey: .exitCode)
        try c.encode(version, forKey: .version)
        try c.encodeIfPresent(catchUp, forKey: .catchUp)
        try c.encodeIfPresent(pruned, forKey: .pruned)
    }

    public init(nowMs: Int64, dryRun: Bool) {
        self.nowMs = nowMs
        self.dryRun = dryRun
    }

    /// Final Apple status codes of failed rows, whatever the backend (the report's JSON has kept
    /// this key since the first release; `failed_by_upstream_status` names the backend).
    public var failedByAppleStatus: [Int: Int] {
        failedByUpstreamStatus.reduce(into: [:]) { codes, entry in codes[entry.key.code, default: 0] += entry.value }
    }

    /// Rows that failed, whatever the reason.
    public var failed: Int { failedByReason.values.reduce(0, +) }

    mutating func countFailure(_ failure: VerificationFailure) {
        failedByReason[failure.reason, default: 0] += 1
        if let status = failure.upstreamStatus, failure.reason == .appleStatus { failedByUpstreamStatus[status, default: 0] += 1 }
    }

    /// The process exit code this report maps to (documented in the README and `--help`).
    public var exitCode: RunExitCode {
        if aborted != nil { return .aborted }
        if interrupted { return .interrupted }
        return failed == 0 ? .success : .someFailed
    }
}
