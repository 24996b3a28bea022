import EntitlementCore
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// The App Store Server API client: the second ``SubscriptionStatusSource``. For one row it asks
/// Get All Subscription Statuses about the row's chain (production first, the sandbox on 4040010),
/// verifies every signed transaction and renewal info, and maps them into the same neutral
/// ``StatusAnswer`` verifyReceipt's answers become, so both backends decide through one rule.
///
/// A row enrolled with only a receipt has no `original_transaction_id` yet: its ids are read from
/// the receipt locally (``AppReceipt``), so this backend needs no shared secret. It never
/// returns a receipt, so `latest_receipt` stays as stored.
public final class ServerAPIClient: SubscriptionStatusSource {
    public let configuration: ServerAPIConfiguration
    let http: KeepAliveHTTPClient
    let endpoints: (production: HTTPEndpoint?, sandbox: HTTPEndpoint?)
    let bearer: BearerToken
    let verifier: SignedDataVerifier
    /// Production's budget, and the sandbox's tenth of it.
    let limiters: (production: RequestRateLimiter, sandbox: RequestRateLimiter)
    let jitter: @Sendable () -> Double

    public init(
        configuration: ServerAPIConfiguration, http: KeepAliveHTTPClient, now: @escaping @Sendable () -> Date = { Date() },
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.configuration = configuration
        self.http = http
        self.jitter = jitter
        endpoints = (HTTPEndpoint(configuration.productionURL), HTTPEndpoint(configuration.sandboxURL))
        bearer = BearerToken(configuration.credentials, now: now)
        verifier = SignedDataVerifier(trustedRoots: configuration.trustedRoots, bundleID: configuration.credentials.bundleID)
        limiters = (
            RequestRateLimiter(perSecond: configuration.ratePerSecond, shared: configuration.sharedRate),
            RequestRateLimiter(perSecond: max(1, configuration.ratePerSecond / 10), shared: configuration.sharedRate)
        )
    }

    /// Runs `body` with a client on an HTTP client of its own, shut down afterwards: for tests.
    public static func withClient<Result: Sendable>(
        _ configuration: ServerAPIConfiguration, http: KeepAliveHTTPClient.Configuration = .init(),
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        _ body: (ServerAPIClient) async throws -> Result
    ) async throws -> Result {
        try await KeepAliveHTTPClient.withClient(http) { http in
            try await body(ServerAPIClient(configuration: configuration, http: http, jitter: jitter))
        }
    }

    public func status(of row: SubscriptionRow, logger: Logger) async throws -> StatusLookup {
        var stats = StatusLookup.Stats()
        do {
            let ids = try Self.transactionIDs(of: row, bundleID: configuration.credentials.bundleID)
            let answer = try await statuses(ids: ids, startingIn: .startingPoint(for: row), stats: &stats, subscriptionID: row.id, logger: logger)
            return StatusLookup(result: .answered(answer), stats: stats)
        } catch let failure as VerificationFailure {
            logger.debug("verification failed", metadata: ["subscription.id": "\(row.id)", "reason": "\(failure.reason.rawValue)"])
            return StatusLookup(result: .failed(failure), stats: stats)
        } catch let abort as RunAbort {
            return StatusLookup(result: .credentialsRejected(abort), stats: stats)
        }
    }

    /// The ids to ask about: the row's chain, or for a new row the chains its receipt lists (a
    /// receipt of another app is refused here, without asking Apple).
    static func transactionIDs(of row: SubscriptionRow, bundleID: String) throws(VerificationFailure) -> [String] {
        if let owned = row.state.originalTransactionID { return [owned] }
        let receipt: AppReceipt
        do {
            receipt = try AppReceipt(base64: row.latestReceipt)
        } catch {
            throw VerificationFailure(
                .receiptUnreadable,
                "the stored receipt could not be read for its transaction ids (\(error)); have the app upload its app receipt, or enrol the row with verifyReceipt (--backend auto with a shared secret)")
        }
        if let other = receipt.bundleID, other != bundleID {
            throw VerificationFailure(.bundleMismatch, "receipt is for bundle \(other), expected \(bundleID)")
        }
        let ids = receipt.originalTransactionIDs
        guard !ids.isEmpty else { throw VerificationFailure(.noSubscriptionInReceipt, "the receipt lists no in-app purchase") }
        return ids
    }
}
