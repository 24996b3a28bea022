import StatusPolling

extension ResultBatch.Result {
    /// The row the result is for.
    var subscriptionID: Int64 {
        switch self {
        case .verified(let update): return update.subscriptionID
        case .failed(let failed): return failed.subscriptionID
        }
    }

    /// The run that produced it (nil: not recorded).
    var runID: Int64? {
        switch self {
        case .verified(let update): return update.runID
        case .failed(let failed): return failed.runID
        }
    }

    var isVerified: Bool {
        if case .verified = self { return true }
        return false
    }
}
