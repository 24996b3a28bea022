extension Duration {
    /// Whole milliseconds, for logs and timeouts.
    package var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}

extension Duration {
    /// Seconds as a `Double`, for settings shown in hours or seconds.
    public var totalSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
