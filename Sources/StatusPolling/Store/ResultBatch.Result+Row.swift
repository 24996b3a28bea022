extension ResultBatch.Result {
    /// The row the result is for.
    public var subscriptionID: Int64 {
        switch self {
        case .verified(let update): return update.subscriptionID
        case .failed(let failed): return failed.subscriptionID
        }
    }

    /// The run that produced it (nil: not recorded).
    public var runID: Int64? {
        switch self {
        case .verified(let update): return update.runID
        case .failed(let failed): return failed.runID
        }
    }
}
