/// Which of Apple's APIs the demo's nights ask, as `run --backend` names them.
public enum DemoBackend: String, Sendable, CaseIterable {
    case verifyReceipt = "verify-receipt"
    case serverAPI = "server-api"
    /// The Server API, with verifyReceipt for receipts it cannot read.
    case auto
}
