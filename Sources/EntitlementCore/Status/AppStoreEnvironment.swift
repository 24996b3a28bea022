/// Which of Apple's two environments a subscription lives in; every backend has both.
public enum AppStoreEnvironment: String, Sendable {
    case production = "Production"
    case sandbox = "Sandbox"

    /// Where to ask first about `row`: the sandbox when its last answer came from there.
    public static func startingPoint(for row: SubscriptionRow) -> Self {
        row.state.environment == Self.sandbox.rawValue ? .sandbox : .production
    }
}
