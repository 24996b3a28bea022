import SQLiteStore
import StatusPolling

/// The one place that names the concrete store and status source. Everything else in the
/// executable, and all of the library, sees only `PollingDatabase` and `SubscriptionStatusSource`.
enum Composition {
    /// The database `--database` names: a SQLite file path.
    static func database(_ location: String) -> any PollingDatabase {
        SQLiteDatabase(path: location)
    }

    /// Runs `body` with the verifyReceipt source on one HTTP client shared for the whole job,
    /// whose connections are closed afterwards.
    static func withStatusSource<Result: Sendable>(
        _ appStore: AppStoreSettings, secret: SharedSecret, _ body: (any SubscriptionStatusSource) async throws -> Result
    ) async throws -> Result {
        try await KeepAliveHTTPClient.withClient(appStore.httpConfiguration) { http in
            try await body(VerifyReceiptClient(configuration: appStore.clientConfiguration(secret: secret), http: http))
        }
    }
}
