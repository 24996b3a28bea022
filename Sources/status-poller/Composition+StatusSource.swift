import AppStoreBackends
import EntitlementCore
import PollerCommandLine
import StatusPolling

/// The status source a run asks, and the workers that share the Server API's rate. The
/// notification commands (the catch-up before a run, `notifications catch-up`, `notifications
/// test`) make a `ServerAPIClient` of their own, at the notification endpoints' rate, to read
/// Apple's notification history, not a subscription's status.
extension Composition {
    /// The workers that share the Server API's rate: those of a PostgreSQL database (nil for
    /// SQLite, where one run at a time uses the whole rate).
    static func rateSharingWorkers(_ location: String, worker: Worker) throws -> (any RateSharingWorkers)? {
        guard isPostgres(location) else { return nil }
        return try postgres(location, worker: worker).rateSharingWorkers
    }

    /// What a job's status source is built from: the shared secret and the Server API's
    /// configuration, each nil when that backend is not in use.
    struct Backends {
        var secret: SharedSecret?
        var serverAPI: ServerAPIConfiguration?
        var choice: BackendChoice
    }

    /// Runs `body` with the chosen source on one HTTP client shared for the whole job (handed to
    /// `body` too, for the catch-up's client), whose connections are closed afterwards.
    static func withStatusSource<Result: Sendable>(
        _ appStore: AppStoreSettings, backends: Backends, _ body: (any SubscriptionStatusSource, KeepAliveHTTPClient) async throws -> Result
    ) async throws -> Result {
        try await KeepAliveHTTPClient.withClient(appStore.httpConfiguration) { http in
            let verifyReceipt = backends.secret.map { VerifyReceiptClient(configuration: appStore.clientConfiguration(secret: $0), http: http) }
            let serverAPI = backends.serverAPI.map { ServerAPIClient(configuration: $0, http: http) }
            switch backends.choice {
            case .verifyReceipt: return try await body(verifyReceipt!, http)
            case .serverAPI: return try await body(serverAPI!, http)
            case .auto: return try await body(AutoStatusSource(serverAPI: serverAPI, verifyReceipt: verifyReceipt), http)
            }
        }
    }
}
