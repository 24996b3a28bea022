import StatusPolling

/// What the demo needs of a database besides the job's seam: whether it may replace it (it does
/// not exist, or holds only the demo's simulated subscribers, so a typo in `--database` cannot
/// empty a real one), and a fresh, migrated copy. The stores implement both; whoever picks the
/// store (the executable, a test) hands them over here, so the job's seam carries nothing of the demo.
public struct DemoDatabase: Sendable {
    public var database: any PollingDatabase
    public var isReplaceable: @Sendable () async -> Bool
    public var recreate: @Sendable () async throws -> any PollingStore

    public init(
        _ database: any PollingDatabase, isReplaceable: @escaping @Sendable () async -> Bool,
        recreate: @escaping @Sendable () async throws -> any PollingStore
    ) {
        self.database = database
        self.isReplaceable = isReplaceable
        self.recreate = recreate
    }
}
