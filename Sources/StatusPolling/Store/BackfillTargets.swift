/// Which rows a backfill covers; it ignores the nightly windows.
public enum BackfillTargets: Sendable, Equatable {
    case all
    case userIDs([String])
    /// Rows whose `expires_at` is at or after this instant (ms), and rows never verified.
    case expiredSince(Int64)
}
