import SQLiteStore
import StatusPolling

/// The one place that names the concrete store and status sources. Everything else in the
/// executable, and all of the library, sees only `PollingDatabase` and `SubscriptionStatusSource`.
enum Composition {
    /// The database `--database` names: a SQLite file path.
    static func database(_ location: String) -> any PollingDatabase {
        SQLiteDatabase(path: location)
    }

    /// What a job's status source is built from: the shared secret and the Server API's
    /// configuration, each nil when that backend is not in use.
    struct Backends {
        var secret: SharedSecret?
        var serverAPI: ServerAPIConfiguration?
        var choice: BackendChoice
    }

    /// Runs `body` with the chosen source on one HTTP client shared for the whole job, whose
    /// connections are closed afterwards.
    static func withStatusSource<Result: Sendable>(
        _ appStore: AppStoreSettings, backends: Backends, _ body: (any SubscriptionStatusSource) async throws -> Result
    ) async throws -> Result {
        try await KeepAliveHTTPClient.withClient(appStore.httpConfiguration) { http in
            let verifyReceipt = backends.secret.map { VerifyReceiptClient(configuration: appStore.clientConfiguration(secret: $0), http: http) }
            let serverAPI = backends.serverAPI.map { ServerAPIClient(configuration: $0, http: http) }
            switch backends.choice {
            case .verifyReceipt: return try await body(verifyReceipt!)
            case .serverAPI: return try await body(serverAPI!)
            case .auto: return try await body(AutoStatusSource(serverAPI: serverAPI, verifyReceipt: verifyReceipt))
            }
        }
    }
}
