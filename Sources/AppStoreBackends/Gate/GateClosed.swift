/// Thrown to a request the run's ``RequestGate`` no longer lets out: the circuit breaker tripped.
/// The row it belonged to ends unfinished and keeps its columns, as a row not reached.
public struct GateClosed: Error, Equatable {
    /// The breaker's message.
    public var reason: String
}
