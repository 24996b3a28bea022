/// The SQL of work shared by several workers (``SQLStore/sharedWorker``): the leases on rows and
/// the targets of a shared night or backfill.
public enum WorkSharingSQL {
    /// How many times a row of a night or a backfill is leased at most: enough for two workers
    /// to die holding it and a third to finish it; a row still not written is left to the next night.
    public static let maximumLeases = 3

    /// Releases the leases run `runID` still holds (rows it leased but did not start, after a
    /// stop), so other workers take them at once.
    public static func releaseLeases(of runID: Int64) -> SQLStatement {
        "UPDATE subscriptions SET lease_owner = NULL, lease_run = NULL, lease_expires_at = NULL WHERE lease_run = \(runID)"
    }
}
