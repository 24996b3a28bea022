/// How a recorded run of a store takes its rows: the store hands it out, so the run needs no
/// knowledge of which store it has.
public enum RowSharing: Sendable {
    /// One run at a time: the run lists the due ids once and reads the rows in pages.
    case listed
    /// Several workers share the work: the run joins it and leases rows a page at a time.
    case leased(any LeasingStore)
}
