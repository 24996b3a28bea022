/// What a run is.
public enum RunMode: String, Sendable, Codable {
    /// The nightly selection (cron).
    case nightly
    /// A backfill: chosen rows, ignoring the nightly windows, resumable.
    case backfill
}
