import EntitlementCore

extension StatusBackend {
    /// Apple's App Store Server API.
    public static let serverAPI = StatusBackend(rawValue: "serverAPI")
}

extension RunAbort {
    /// The App Store Server API answered 401: the token was refused.
    static func serverAPIUnauthorized(_ environment: AppStoreEnvironment) -> RunAbort {
        .credentialsRejected(
            backend: .serverAPI,
            detail: "the App Store Server API (\(environment.rawValue)) answered 401: it refused the token. Check --issuer-id, --key-id, the In-App Purchase key (APPSTORE_PRIVATE_KEY or --private-key-file; App Store Connect → Users and Access → Integrations → In-App Purchase), the bundle id, and this machine's clock. The run stopped before sending more requests.")
    }

    /// Apple does not know the app the token names.
    static func serverAPIRefusesApp(_ code: Int, _ bundleID: String) -> RunAbort {
        .credentialsRejected(
            backend: .serverAPI,
            detail: "the App Store Server API answered \(code): it does not know the app \(bundleID). Check --bundle-id against App Store Connect. The run stopped before sending more requests.")
    }
}
