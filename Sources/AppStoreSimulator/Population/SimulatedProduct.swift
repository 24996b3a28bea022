/// The simulated app's products: two subscription groups, monthly and yearly plans, a higher tier
/// to upgrade to. Levels follow App Store Connect: a lower number is a higher level of service.
public struct SimulatedProduct: Sendable, Hashable {
    public var id: String
    public var groupID: String
    public var durationMs: Int64
    public var level: Int
}
