import EntitlementCore

extension StatusBackend {
    /// Apple's verifyReceipt endpoint.
    public static let verifyReceipt = StatusBackend(rawValue: "verifyReceipt")
}

extension UpstreamStatus {
    /// A verifyReceipt `status`, named with its backend.
    public static func verifyReceipt(_ status: VerifyReceiptStatus) -> UpstreamStatus {
        UpstreamStatus(backend: .verifyReceipt, code: status.rawValue)
    }
}

extension RunAbort {
    /// Apple answered 21004: every further request would fail the same way.
    public static let sharedSecretMismatch = RunAbort.credentialsRejected(
        backend: .verifyReceipt,
        detail: "Apple answered 21004: the shared secret does not match this app's. Check APPSTORE_SHARED_SECRET or --shared-secret-file (App Store Connect → the app → App-Specific Shared Secret). The run stopped before sending more requests.")
}
