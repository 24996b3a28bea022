import AppStoreSimulator

/// What the workers of one demo night need: its clock, the demo's settings and the running
/// simulator (its URLs, and its Server API key and test root).
public struct NightRequest: Sendable {
    /// 1-based; the last night is the fault-free one.
    public var number: Int
    /// The night's clock (ms), the workers' `--now`.
    public var clockMs: Int64
    public var configuration: DemoConfiguration
    public var endpoints: SimulatorServer.Endpoints
    public var simulator: AppStoreSimulator
}
