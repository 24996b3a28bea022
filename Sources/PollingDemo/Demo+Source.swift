import AppStoreBackends
import AppStoreSimulator
import EntitlementCore
import StatusPolling

extension Demo {
    /// Runs `body` with a maker of the status source the configuration names, built against the
    /// running simulator as `run` builds it against Apple: verifyReceipt with the shared secret, the
    /// Server API with the simulator's In-App Purchase key and, as the one extra trusted root, its
    /// test root. Each night makes its own source, as each cron run does (a 429 lowers the Server
    /// API's rate for the rest of one run, not for every night after it); they share one HTTP client.
    /// `makeServerAPI` is nil for verifyReceipt alone (the notification catch-up needs the Server API).
    static func withSource<T: Sendable>(
        _ configuration: DemoConfiguration, simulator: AppStoreSimulator, endpoints: SimulatorServer.Endpoints,
        _ body: (_ makeSource: () throws -> any SubscriptionStatusSource, _ makeServerAPI: (() -> ServerAPIClient)?) async throws -> T
    ) async throws -> T {
        let population = simulator.population.configuration
        let http = KeepAliveHTTPClient.Configuration(maxIdleConnectionsPerEndpoint: configuration.concurrency)
        return try await KeepAliveHTTPClient.withClient(http) { http in
            let jitter = seededJitter(configuration.seed)
            let verifyReceipt = VerifyReceiptClient(
                configuration: VerifyReceiptConfiguration(
                    productionURL: endpoints.productionURL, sandboxURL: endpoints.sandboxURL, sharedSecret: SharedSecret(population.sharedSecret),
                    requestTimeout: configuration.requestTimeout, retry: configuration.retry),
                http: http, jitter: jitter)
            guard configuration.backend != .verifyReceipt else { return try await body({ verifyReceipt }, nil) }
            let key = simulator.serverAPIKey
            let credentials = ServerAPICredentials(
                issuerID: key.issuerID, keyID: key.keyID, key: try AppStoreBackends.InAppPurchaseKey(pem: key.privateKeyPEM), bundleID: population.bundleID)
            let serverAPI = { ServerAPIClient(
                configuration: ServerAPIConfiguration(
                    productionURL: endpoints.serverAPIURL, sandboxURL: endpoints.serverAPISandboxURL, credentials: credentials,
                    appAppleID: population.appAppleID, trustedRoots: AppleRootCertificate.defaultRoots + [simulator.pki.root],
                    ratePerSecond: configuration.serverAPIRate, requestTimeout: configuration.requestTimeout, retry: configuration.retry,
                    longBackoff: configuration.retry.maxBackoff),
                http: http, jitter: jitter) }
            switch configuration.backend {
            case .serverAPI: return try await body({ serverAPI() }, serverAPI)
            case .auto, .verifyReceipt: return try await body({ AutoStatusSource(serverAPI: serverAPI(), verifyReceipt: verifyReceipt) }, serverAPI)
            }
        }
    }
}
