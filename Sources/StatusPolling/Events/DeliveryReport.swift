/// What one pass of the deliverer did, summed over its endpoints.
public struct DeliveryReport: Sendable, Equatable {
    /// Deliveries added for events written since the last pass.
    public var added = 0
    public var delivered = 0
    /// Attempts that failed and were scheduled again.
    public var retried = 0
    /// Deliveries given up past the maximum age.
    public var dead = 0

    public init(added: Int = 0, delivered: Int = 0, retried: Int = 0, dead: Int = 0) {
        self.added = added
        self.delivered = delivered
        self.retried = retried
        self.dead = dead
    }

    static func + (a: Self, b: Self) -> Self {
        Self(added: a.added + b.added, delivered: a.delivered + b.delivered, retried: a.retried + b.retried, dead: a.dead + b.dead)
    }
}
