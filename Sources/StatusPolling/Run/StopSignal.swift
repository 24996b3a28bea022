import Synchronization

/// Asks a run to stop: no new rows are started, requests in flight get a grace period, then are
/// abandoned; what is done is written. The executable requests it on SIGTERM and SIGINT.
public final class StopSignal: Sendable {
    private let state = Mutex<(requested: Bool, waiters: [AsyncStream<Void>.Continuation])>((false, []))

    public init() {}

    /// Whether a stop was requested.
    public var isRequested: Bool { state.withLock { $0.requested } }

    /// Requests the stop; safe to call from any thread, more than once.
    public func request() {
        let waiters = state.withLock { state -> [AsyncStream<Void>.Continuation] in
            state.requested = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.yield(); waiter.finish() }
    }

    /// Returns once a stop is requested, or when the calling task is cancelled.
    public func wait() async {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let already = state.withLock { state -> Bool in
            if !state.requested { state.waiters.append(continuation) }
            return state.requested
        }
        if already { return }
        for await _ in stream { return }
    }
}
