import Foundation
import Logging

extension ServerAPIClient {
    /// GETs `path` from `environment` with the retries: Apple's retryable codes, 429 (which also
    /// halves the rate) and transport failures with backoff, 5000000 with a longer one. Returns nil
    /// for 4040010 (not in this environment). Throws ``VerificationFailure`` when the row fails,
    /// ``RunAbort`` when the run must stop, and `CancellationError`.
    func fetch<Answer: Decodable>(
        _ type: Answer.Type, path: String, from environment: AppStoreEnvironment, stats: inout StatusLookup.Stats,
        subscriptionID: Int64, logger: Logger
    ) async throws -> Answer? {
        var attempt = 1
        while true {
            try Task.checkCancellation()
            stats.requests += 1
            var failure: VerificationFailure
            var wait: Duration?
            var floor: Duration = .zero
            let exchange = try await RequestGate.send {
                let exchange = try await send(path: path, to: environment)
                return (exchange, exchange.signal)
            }
            switch exchange {
            case .ok(let body, let httpStatus):
                do {
                    return try JSONDecoder().decode(Answer.self, from: Data(body.readableBytesView))
                } catch {
                    throw VerificationFailure(.unexpectedResponse, "the \(environment.rawValue) Server API answer is not Apple's shape", upstreamStatus: .serverAPI(httpStatus), httpStatus: httpStatus)
                }
            case .unauthorized:
                throw RunAbort.serverAPIUnauthorized(environment)
            case .apple(let code, let httpStatus, let retryAfter):
                failure = VerificationFailure(.appleStatus, "\(environment.rawValue) Server API answered error \(code)", upstreamStatus: .serverAPI(code), httpStatus: httpStatus)
                switch ServerAPIErrorCode(rawValue: code)?.handling {
                case .otherEnvironment?: return nil
                case .refusesApp?: throw RunAbort.serverAPIRefusesApp(code, configuration.credentials.bundleID)
                case .retryLater?: failure.isTransient = true; floor = configuration.longBackoff
                case .retry?: failure.isTransient = true
                case nil: failure.isTransient = httpStatus == 429 || httpStatus >= 500
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
            logger.debug("retrying", metadata: ["subscription.id": "\(subscriptionID)", "reason": "\(failure.reason.rawValue)", "attempt": "\(attempt)", "delay_ms": "\(delay.milliseconds)"])
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
