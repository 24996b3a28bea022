extension ResultBatch.Result {
    /// The row the result is for.
    public var subscriptionID: Int64 {
        switch self {
        case .verified(let update): return update.subscriptionID
        case .failed(let failed): return failed.subscriptionID
        }
    }

    /// Who brought it.
    public var provenance: Provenance {
        switch self {
        case .verified(let update): return update.provenance
        case .failed(let failed): return failed.provenance
        }
    }

    /// The run that produced it (nil: not recorded).
    public var runID: Int64? { provenance.runID }
}
