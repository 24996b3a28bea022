import AppStoreBackends
import EntitlementCore
import Foundation
import Logging
import PollerCommandLine
import StatusPolling

/// What every support command (`lookup`, `refunds`, `extend`) works with: the database, a Server
/// API client kept to Apple's limit for the endpoint and, on PostgreSQL, to its share of
/// `--server-api-rate` beside the running workers, and a quiet logger (ids only, never a signed body).
struct SupportSession {
    var desk: SupportDesk
    /// The open database, for what the desk does not cover (the consumption answers).
    var store: any PollingStore
    var client: ServerAPIClient
    var logger: Logger
    var bundleID: String

    /// Opens everything, runs `body`, closes everything. Apple's refusal of the credentials or an
    /// answer that cannot be had or verified ends the command with exit 3 and what to do.
    static func run<T: Sendable>(
        store storeOptions: StoreOptions, appStore appStoreOptions: AppStoreOptions, serverAPI serverAPIOptions: ServerAPIOptions,
        endpointRate: Int, purpose: String, _ body: (SupportSession) async throws -> T
    ) async throws -> T {
        let settings = try await storeOptions.settings()
        let appStore = try appStoreOptions.resolve(settings)
        let resolved = try serverAPIOptions.resolve(settings, allowInsecureHTTP: appStore.allowInsecureHTTP)
        var configuration = try resolved.notificationsConfiguration(appStore: appStore, purpose: purpose)
        configuration.ratePerSecond = min(resolved.rate, endpointRate)
        let logger = LogSetup.make(level: .warning)
        let sharing = try Composition.rateSharingWorkers(try storeOptions.databasePath(settings), worker: .host)
        if sharing != nil { configuration.sharedRate = SharedRate() }
        return try await storeOptions.withStore(settings) { store, _ in
            try await KeepAliveHTTPClient.withClient(appStore.httpConfiguration) { http in
                let session = SupportSession(
                    desk: SupportDesk(store: store, bundleID: appStore.bundleID), store: store, client: ServerAPIClient(configuration: configuration, http: http),
                    logger: logger, bundleID: appStore.bundleID)
                let result: Result<T, any Error>
                if let sharing, let shared = configuration.sharedRate {
                    result = await shared.sharing(sharing, rate: configuration.ratePerSecond, logger: logger) { await capture { try await body(session) } }
                } else {
                    result = await capture { try await body(session) }
                }
                do {
                    return try result.get()
                } catch let failure as VerificationFailure {
                    throw exitError(.aborted, "Apple's answer could not be had or trusted: \(failure.detail). Nothing was changed; try again, or check the key and --bundle-id.")
                } catch let abort as RunAbort {
                    throw exitError(.aborted, "\(abort)")
                } catch let error as StoreError {
                    throw exitError(error.exitCode, "\(error)")
                }
            }
        }
    }

    private static func capture<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }
}
