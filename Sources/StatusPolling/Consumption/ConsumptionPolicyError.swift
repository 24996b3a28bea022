/// A consumption policy in the config file that cannot be used, with what to write instead.
public struct ConsumptionPolicyError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}
