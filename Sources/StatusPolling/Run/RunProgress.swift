/// Progress of a run, for a terminal line or a periodic log line.
public struct RunProgress: Sendable {
    public var done: Int
    /// Rows in the selection when the run started.
    public var total: Int
    public var failed: Int
    public var elapsed: Duration

    /// Rows per second so far.
    public var rate: Double {
        let seconds = Double(elapsed.milliseconds) / 1000
        return seconds > 0 ? Double(done) / seconds : 0
    }

    /// Seconds left at the current rate, when it can be told.
    public var secondsLeft: Double? {
        rate > 0 && total >= done ? Double(total - done) / rate : nil
    }
}
