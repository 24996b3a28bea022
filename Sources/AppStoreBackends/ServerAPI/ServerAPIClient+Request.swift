import EntitlementCore
import Foundation
import Logging
import NIOCore

extension ServerAPIClient {
    /// GETs `path` from `environment` and decodes Apple's answer, with the retries every endpoint
    /// shares (``request(path:in:json:put:what:notFoundCode:stats:subscriptionID:logger:)``).
    /// Returns nil for 4040010 (not in this environment).
    func fetch<Answer: Decodable>(
        _ type: Answer.Type, path: String, from environment: AppStoreEnvironment, stats: inout StatusLookup.Stats,
        subscriptionID: Int64, logger: Logger
    ) async throws -> Answer? {
        guard let body = try await request(
            path: path, in: environment, what: "Server API", notFoundCode: ServerAPIErrorCode.transactionIdNotFound.rawValue, stats: &stats,
            subscriptionID: subscriptionID, logger: logger)
        else { return nil }
        return try decode(type, body, environment: environment, what: "Server API answer")
    }

    /// One request with the one retry policy of every Server API endpoint (a row's status and
    /// history, the notification history, refund requests, extensions, lookups): in the rate limit
    /// and the run's ``RequestGate`` when there is one; Apple's retryable codes, 429 (which also
    /// halves the rate and waits for `Retry-After`) and transport failures retried with the
    /// policy's backoff, 5000000 with at least `longBackoff`. Returns the body of a success, or nil
    /// when Apple answered `notFoundCode`. Throws ``VerificationFailure`` (any other code of
    /// Apple's in its `upstreamStatus`), ``RunAbort`` when the credentials or the app are refused,
    /// and `CancellationError`.
    func request(
        path: String, in environment: AppStoreEnvironment, json: [UInt8]? = nil, put: Bool = false, what: String, notFoundCode: Int?,
        stats: inout StatusLookup.Stats, subscriptionID: Int64? = nil, logger: Logger
    ) async throws -> ByteBuffer? {
        var attempt = 1
        while true {
            try Task.checkCancellation()
            stats.requests += 1
            var failure: VerificationFailure
            var wait: Duration?
            var floor: Duration = .zero
            let exchange = try await RequestGate.send {
                let exchange = try await send(path: path, to: environment, json: json, put: put)
                return (exchange, exchange.signal)
            }
            switch exchange {
            case .ok(let body, _):
                return body
            case .unauthorized:
                throw RunAbort.serverAPIUnauthorized(environment)
            case .apple(let code, let httpStatus, let retryAfter):
                if code == notFoundCode { return nil }
                failure = VerificationFailure(.appleStatus, "\(environment.rawValue) \(what) answered error \(code)", upstreamStatus: .serverAPI(code), httpStatus: httpStatus)
                switch ServerAPIErrorCode(rawValue: code)?.handling {
                case .refusesApp?: throw RunAbort.serverAPIRefusesApp(code, configuration.credentials.bundleID)
                case .retryLater?: failure.isTransient = true; floor = configuration.longBackoff
                case .retry?: failure.isTransient = true
                case .otherEnvironment?, nil: failure.isTransient = httpStatus == 429 || httpStatus >= 500
                }
                if httpStatus == 429 || code == ServerAPIErrorCode.rateLimitExceeded.rawValue {
                    rateLimited(in: environment, retryAfter: retryAfter, logger: logger)
                }
                if failure.isTransient { stats.throttled += 1 }
                wait = retryAfter
            case .transient(let transient, let retryAfter):
                failure = transient
                failure.isTransient = true
                wait = retryAfter
                if let code = transient.httpStatus, code == 429 || code >= 500 { stats.throttled += 1 }
                // A 429 whose body is not Apple's JSON (a front end's page) still lowers the rate.
                if transient.httpStatus == 429 { rateLimited(in: environment, retryAfter: retryAfter, logger: logger) }
            case .permanent(let permanent):
                throw permanent
            }
            guard failure.isTransient, attempt < configuration.retry.maxAttempts else { throw failure }
            let delay = max(floor, configuration.retry.backoff(afterAttempt: attempt, jitter: jitter(), retryAfter: wait))
            logger.debug("retrying", metadata: [
                "what": "\(what)", "subscription.id": "\(subscriptionID.map(String.init) ?? "-")", "reason": "\(failure.reason.rawValue)",
                "attempt": "\(attempt)", "delay_ms": "\(delay.milliseconds)",
            ])
            try await RequestGate.backOff(for: delay)
            attempt += 1
            stats.retries += 1
        }
    }
}

extension ServerAPIClient {
    /// Apple said to slow down: the environment's rate halves and everyone waits for `Retry-After`.
    func rateLimited(in environment: AppStoreEnvironment, retryAfter: Duration?, logger: Logger) {
        let rate = (environment == .production ? limiters.production : limiters.sandbox).throttled(retryAfter: retryAfter)
        logger.warning("rate limited: lowering the request rate", metadata: ["environment": "\(environment.rawValue)", "requests_per_second": "\(rate)"])
    }
}

extension UpstreamStatus {
    /// An App Store Server API answer: Apple's `errorCode`, or the HTTP status of a success.
    public static func serverAPI(_ code: Int) -> UpstreamStatus {
        UpstreamStatus(backend: .serverAPI, code: code)
    }
}
