import Foundation
import Logging

extension ServerAPIClient {
    /// Reads one page of Get Notification History (`POST /inApps/v1/notifications/history`) from
    /// `environment`: the first without `paginationToken`, each later one with the previous page's
    /// token and the identical body, as Apple requires. In the rate limit; 429 (lowering the rate
    /// and waiting for `Retry-After`), Apple's retryable codes and transport failures are retried
    /// with the policy's backoff. Throws ``VerificationFailure`` when the page cannot be had,
    /// ``RunAbort`` when the credentials are refused, and `CancellationError`.
    public func notificationHistory(
        _ request: NotificationHistoryRequest, paginationToken: String?, in environment: AppStoreEnvironment, logger: Logger
    ) async throws -> NotificationHistoryResponse {
        // Sorted keys: every page of a reading sends byte for byte the same body.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let body = Array(try encoder.encode(request))
        let path = "/inApps/v1/notifications/history" + (paginationToken.map { "?paginationToken=\(Self.queryValue($0))" } ?? "")
        var attempt = 1
        while true {
            try Task.checkCancellation()
            var failure: VerificationFailure
            var wait: Duration?
            switch try await send(path: path, to: environment, json: body) {
            case .ok(let answer, let httpStatus):
                do {
                    return try JSONDecoder().decode(NotificationHistoryResponse.self, from: Data(answer.readableBytesView))
                } catch {
                    throw VerificationFailure(.unexpectedResponse, "the \(environment.rawValue) notification history is not Apple's shape", upstreamStatus: .serverAPI(httpStatus), httpStatus: httpStatus)
                }
            case .unauthorized:
                throw RunAbort.serverAPIUnauthorized(environment)
            case .apple(let code, let httpStatus, let retryAfter):
                failure = VerificationFailure(.appleStatus, "\(environment.rawValue) notification history answered error \(code)", upstreamStatus: .serverAPI(code), httpStatus: httpStatus)
                switch ServerAPIErrorCode(rawValue: code)?.handling {
                case .refusesApp?: throw RunAbort.serverAPIRefusesApp(code, configuration.credentials.bundleID)
                case .retry?, .retryLater?: failure.isTransient = true
                case .otherEnvironment?, nil: failure.isTransient = httpStatus == 429 || httpStatus >= 500
                }
                if httpStatus == 429 || code == ServerAPIErrorCode.rateLimitExceeded.rawValue {
                    rateLimited(in: environment, retryAfter: retryAfter, logger: logger)
                }
                wait = retryAfter
            case .transient(let transient, let retryAfter):
                failure = transient
                failure.isTransient = true
                wait = retryAfter
                if transient.httpStatus == 429 { rateLimited(in: environment, retryAfter: retryAfter, logger: logger) }
            case .permanent(let permanent):
                throw permanent
            }
            guard failure.isTransient, attempt < configuration.retry.maxAttempts else { throw failure }
            let delay = configuration.retry.backoff(afterAttempt: attempt, jitter: jitter(), retryAfter: wait)
            logger.debug("retrying the notification history", metadata: ["reason": "\(failure.reason.rawValue)", "attempt": "\(attempt)", "delay_ms": "\(delay.milliseconds)"])
            try await Task.sleep(for: delay)
            attempt += 1
        }
    }

    /// A query parameter's value, percent-encoded (a token may hold `+`, `/` or `=`).
    static func queryValue(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_.~"))) ?? ""
    }
}
