/// This process's part in work that several workers share (PostgreSQL's runs): its name, written
/// on the runs it starts and the rows it leases, and how long a lease lasts.
public struct WorkShare: Sendable, Equatable {
    public var worker: String
    /// A row is handed to the pipeline only while at least half of its lease is left.
    public var leaseDuration: Duration

    public init(worker: String, leaseDuration: Duration) {
        self.worker = worker
        self.leaseDuration = leaseDuration
    }
}
