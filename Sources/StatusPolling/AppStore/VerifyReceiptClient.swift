import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// The verifyReceipt client: one receipt in, Apple's answer (or a classified failure) out, with
/// the production → sandbox dance and the retries inside.
///
/// One instance per process: it owns the HTTP client and its kept-alive connections. Use
/// ``withClient(_:jitter:_:)`` so the connections are closed on every path.
public final class VerifyReceiptClient: Sendable {
    public let configuration: VerifyReceiptConfiguration
    let http: KeepAliveHTTPClient
    /// Both endpoints, parsed once; nil when a URL is not http(s) (the CLI rejects that earlier).
    let endpoints: (production: HTTPEndpoint?, sandbox: HTTPEndpoint?)
    /// A uniform draw in [0, 1) for the backoff jitter; injectable so tests are deterministic.
    let jitter: @Sendable () -> Double

    public init(configuration: VerifyReceiptConfiguration, jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.configuration = configuration
        self.jitter = jitter
        endpoints = (HTTPEndpoint(configuration.productionURL), HTTPEndpoint(configuration.sandboxURL))
        http = KeepAliveHTTPClient(configuration: .init(
            connectTimeout: configuration.connectTimeout,
            maxIdleConnectionsPerEndpoint: configuration.maxConnectionsPerHost,
            maxResponseBytes: configuration.maxResponseBytes,
            tls: configuration.tls))
    }

    /// Runs `body` with a client and closes its connections afterwards, whether `body` returns or throws.
    public static func withClient<Result: Sendable>(
        _ configuration: VerifyReceiptConfiguration,
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        _ body: (VerifyReceiptClient) async throws -> Result
    ) async throws -> Result {
        let client = VerifyReceiptClient(configuration: configuration, jitter: jitter)
        let result: Result
        do {
            result = try await body(client)
        } catch {
            await client.http.shutdown()
            throw error
        }
        await client.http.shutdown()
        return result
    }

    /// Verifies one receipt, starting with `environment` (production unless the row is known to be
    /// a sandbox subscription). Throws ``RunAbort`` for 21004 and `CancellationError` when the run
    /// is stopping; every other problem is returned as a failure. `subscriptionID` only names the
    /// row in debug logs.
    public func verify(
        receipt: String, startingIn environment: AppStoreEnvironment = .production, subscriptionID: Int64? = nil, logger: Logger
    ) async throws -> Verification {
        var environment = environment
        var stats = Verification.Stats()
        var environmentSwitches = 0
        var attempt = 1
        var retriedMalformed = false
        while true {
            try Task.checkCancellation()
            stats.requests += 1
            let exchange = try await send(receipt: receipt, to: environment, logger: logger)
            if stats.deprecation == nil { stats.deprecation = exchange.deprecation }
            let failure: VerificationFailure
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
                failure = VerificationFailure(.appleStatus, "Apple answered status \(status)", appleStatus: status)
                switch status.retryDecision(isRetryable: response.isRetryable) {
                case .retry: retryable = true; stats.throttled += 1
                case .retryOnce: retryable = !retriedMalformed; retriedMalformed = true
                case .fail: retryable = false
                }
            case .transient(let transient, let after):
                failure = transient
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
            try await Task.sleep(for: delay)
            attempt += 1
            stats.retries += 1
        }
    }
}

/// Which of Apple's two verifyReceipt endpoints.
public enum AppStoreEnvironment: String, Sendable {
    case production = "Production"
    case sandbox = "Sandbox"
}

/// Errors that stop the whole run rather than one receipt.
public enum RunAbort: Error, Sendable, Equatable, CustomStringConvertible {
    /// Apple answered 21004: every further request would fail the same way.
    case sharedSecretMismatch

    public var description: String {
        switch self {
        case .sharedSecretMismatch:
            return "Apple answered 21004: the shared secret does not match this app's. Check APPSTORE_SHARED_SECRET or --shared-secret-file (App Store Connect → the app → App-Specific Shared Secret). The run stopped before sending more requests."
        }
    }
}

/// The result of verifying one receipt, with what it cost.
public struct Verification: Sendable {
    public enum Result: Sendable {
        /// Apple answered with a receipt to decide on (status 0 or 21006).
        case answered(VerifyReceiptResponse)
        /// No usable answer; the row keeps its entitlement.
        case failed(VerificationFailure)
    }

    /// Requests and retries spent on one receipt, and any deprecation notice Apple sent.
    public struct Stats: Sendable, Equatable {
        public var requests = 0
        public var retries = 0
        /// Answers that asked to slow down: HTTP 429, a 5xx, or a status Apple says to retry.
        public var throttled = 0
        /// The `Deprecation` / `Sunset` headers, when Apple sent them.
        public var deprecation: String?
        public init() {}
    }

    public var result: Result
    public var stats: Stats
}

extension Duration {
    /// Whole milliseconds, for logs and timeouts.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
