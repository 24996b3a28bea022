import EntitlementCore
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// The verifyReceipt client: one receipt in, Apple's answer (or a classified failure) out, with
/// the production → sandbox dance and the retries inside.
///
/// The first ``SubscriptionStatusSource``: ``status(of:logger:)`` replays the row's receipt and
/// maps Apple's answer into neutral terms. The HTTP client is injected, so every source of a
/// process shares one pool of kept-alive connections; whoever created it shuts it down.
public final class VerifyReceiptClient: SubscriptionStatusSource {
    public let configuration: VerifyReceiptConfiguration
    let http: KeepAliveHTTPClient
    /// Both endpoints, parsed once; nil when a URL is not http(s) (the CLI rejects that earlier).
    let endpoints: (production: HTTPEndpoint?, sandbox: HTTPEndpoint?)
    /// A uniform draw in [0, 1) for the backoff jitter; injectable so tests are deterministic.
    let jitter: @Sendable () -> Double

    public init(
        configuration: VerifyReceiptConfiguration, http: KeepAliveHTTPClient,
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.configuration = configuration
        self.http = http
        self.jitter = jitter
        endpoints = (HTTPEndpoint(configuration.productionURL), HTTPEndpoint(configuration.sandboxURL))
    }

    /// Runs `body` with a client on an HTTP client of its own, shut down afterwards whether `body`
    /// returns or throws: for tests and one-off uses. A job shares one HTTP client instead.
    public static func withClient<Result: Sendable>(
        _ configuration: VerifyReceiptConfiguration,
        http: KeepAliveHTTPClient.Configuration = .init(),
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        _ body: (VerifyReceiptClient) async throws -> Result
    ) async throws -> Result {
        try await KeepAliveHTTPClient.withClient(http) { http in
            try await body(VerifyReceiptClient(configuration: configuration, http: http, jitter: jitter))
        }
    }

    /// Replays the row's receipt, starting in the environment its last answer came from, and maps
    /// the answer for the entitlement decision.
    public func status(of row: SubscriptionRow, logger: Logger) async throws -> StatusLookup {
        let verification: Verification
        do {
            verification = try await verify(
                receipt: row.latestReceipt, startingIn: .startingPoint(for: row), subscriptionID: row.id, logger: logger)
        } catch let abort as RunAbort {
            var stats = StatusLookup.Stats()
            stats.requests = 1
            return StatusLookup(result: .credentialsRejected(abort), stats: stats)
        }
        switch verification.result {
        case .answered(let response) where response.isForTransactionReceipt:
            let failure = VerificationFailure(
                .legacyReceipt,
                "Apple answered for an iOS 6-style transaction receipt (receipt.bid, latest_expired_receipt_info), not an app receipt; "
                    + "have the app upload its app receipt (the file at Bundle.main.appStoreReceiptURL), then this row is verified the next night",
                upstreamStatus: .verifyReceipt(response.status))
            return StatusLookup(result: .failed(failure), stats: verification.stats)
        case .answered(let response):
            var answer = response.statusAnswer
            // Apple's copy of the receipt sent, the usual answer, shares the row's storage: the
            // answers waiting for the writer held 4 MB of copies at c = 256 (heaptrack).
            if answer.latestReceipt == row.latestReceipt { answer.latestReceipt = row.latestReceipt }
            return StatusLookup(result: .answered(answer), stats: verification.stats)
        case .failed(let failure): return StatusLookup(result: .failed(failure), stats: verification.stats)
        }
    }

    /// Verifies one receipt, starting with `environment` (production unless the row is known to be
    /// a sandbox subscription). Throws ``RunAbort`` for 21004 and `CancellationError` when the run
    /// is stopping; every other problem is returned as a failure. `subscriptionID` only names the
    /// row in debug logs.
    public func verify(
        receipt: String, startingIn environment: AppStoreEnvironment = .production, subscriptionID: Int64? = nil, logger: Logger
    ) async throws -> Verification {
        var environment = environment
        var stats = StatusLookup.Stats()
        var environmentSwitches = 0
        var attempt = 1
        var retriedMalformed = false
        while true {
            try Task.checkCancellation()
            stats.requests += 1
            let exchange = try await RequestGate.send {
                let exchange = try await send(receipt: receipt, to: environment, logger: logger)
                return (exchange, exchange.signal)
            }
            if stats.deprecation == nil { stats.deprecation = exchange.deprecation.map { DeprecationNotice(backend: .verifyReceipt, headers: $0) } }
            var failure: VerificationFailure
            var retryAfter: Duration? = nil
            var retryable: Bool
            switch exchange.outcome {
            case .answer(let response):
                let status = response.status
                if status.carriesReceipt { return Verification(result: .answered(response), stats: stats) }
                if status == .sharedSecretMismatch { throw RunAbort.sharedSecretMismatch }
                // 21007/21008 name the other environment; following them is not a retry. Two switches
                // at most, so two endpoints that blame each other cannot loop.
                if status == .sandboxReceiptInProduction || status == .productionReceiptInSandbox, environmentSwitches < 2 {
                    environmentSwitches += 1
                    environment = status == .sandboxReceiptInProduction ? .sandbox : .production
                    continue
                }
                failure = VerificationFailure(.appleStatus, "Apple answered status \(status)", upstreamStatus: .verifyReceipt(status))
                switch status.retryDecision(isRetryable: response.isRetryable) {
                case .retry: retryable = true; stats.throttled += 1
                case .retryOnce: retryable = !retriedMalformed; retriedMalformed = true
                case .fail: retryable = false
                }
                failure.isTransient = retryable
            case .transient(let transient, let after):
                failure = transient
                failure.isTransient = true
                retryAfter = after
                retryable = true
                if let code = transient.httpStatus, code == 429 || code >= 500 { stats.throttled += 1 }
            case .permanent(let permanent):
                failure = permanent
                retryable = false
            }
            guard retryable, attempt < configuration.retry.maxAttempts else {
                logger.debug("verification failed", metadata: ["subscription.id": "\(subscriptionID ?? 0)", "reason": "\(failure.reason.rawValue)", "attempts": "\(attempt)"])
                return Verification(result: .failed(failure), stats: stats)
            }
            let delay = configuration.retry.backoff(afterAttempt: attempt, jitter: jitter(), retryAfter: retryAfter)
            logger.debug("retrying", metadata: ["subscription.id": "\(subscriptionID ?? 0)", "reason": "\(failure.reason.rawValue)", "attempt": "\(attempt)", "delay_ms": "\(delay.milliseconds)"])
            try await RequestGate.backOff(for: delay)
            attempt += 1
            stats.retries += 1
        }
    }
}

