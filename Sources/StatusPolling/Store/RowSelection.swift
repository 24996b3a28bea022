/// Which rows a run reads.
public enum RowSelection: Sendable, Equatable {
    /// The nightly selection: rows whose access may be changing.
    case nightly(SelectionWindows)
    /// The targets fixed when the backfill with this run id started.
    case backfill(runID: Int64)
}
