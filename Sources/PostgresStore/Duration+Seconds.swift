extension Duration {
    /// The duration in seconds, as PostgreSQL's `make_interval(secs => …)` takes it.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
