/// When sporadic failures stop being noise: the share of transient failures among the last
/// `window` answers above which the run halves its concurrency. Below it, a 5xx or a retryable
/// status is only retried; Apple answers a few of them on ordinary nights.
public struct OverloadThreshold: Sendable, Equatable {
    /// Answers looked back over, unless configured (`--overload-window`).
    public static let defaultWindow = 200
    /// The windows a run accepts (answers).
    public static let allowedWindow = 1...10_000
    /// The share of transient failures among them that cuts the concurrency, unless configured
    /// (`--overload-threshold`, in percent).
    public static let defaultShare = 0.2

    /// Answers looked back over; the share is not judged before this many have come back.
    public var window: Int
    /// The share (0 < share ≤ 1) above which the store counts as overloaded.
    public var share: Double

    public init(window: Int = Self.defaultWindow, share: Double = Self.defaultShare) {
        self.window = max(window, 1)
        self.share = share
    }
}
