/// How long the poller keeps its own history (`audit_keep_days`, `notifications_keep_days`,
/// `runs_keep_days`): nil keeps everything, as before retention existed. What is still pending —
/// a refund request not answered, an extension Apple has not finished — is kept whatever its age.
public struct RetentionPolicy: Sendable, Equatable {
    /// The shortest any history may be kept: Apple retries a notification for up to 3 days, and
    /// a week of trail is what a support question needs.
    public static let minimumDays = 7

    public enum Setting: String, Sendable, CaseIterable {
        case audit = "audit_keep_days"
        case notifications = "notifications_keep_days"
        case runs = "runs_keep_days"
    }

    /// Days each kind of history is kept; a setting left out keeps it all.
    public var keepDays: [Setting: Int]
    /// Where the rows go before they are deleted, as gzip-compressed JSON lines; nil deletes them.
    public var archiveDirectory: String?
    /// Rows deleted per transaction: a prune never holds the write lock long.
    public var batchSize: Int

    public init(keepDays: [Setting: Int] = [:], archiveDirectory: String? = nil, batchSize: Int = 5_000) {
        self.keepDays = keepDays
        self.archiveDirectory = archiveDirectory
        self.batchSize = batchSize
    }

    /// Nothing is pruned.
    public var keepsEverything: Bool { keepDays.isEmpty }

    /// Rows of `table` older than this (ms since 1970) go, at `nowMs`; nil when its history is kept.
    func cutoff(_ table: RetainedTable, nowMs: Int64) -> Int64? {
        keepDays[table.setting].map { nowMs - Int64($0) * 86_400_000 }
    }
}
