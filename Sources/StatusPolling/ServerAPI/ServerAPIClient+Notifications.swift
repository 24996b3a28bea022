import Foundation
import Logging
import NIOCore

extension ServerAPIClient {
    /// Reads one page of Get Notification History (`POST /inApps/v1/notifications/history`) from
    /// `environment`: the first without `paginationToken`, each later one with the previous page's
    /// token and the identical body, as Apple requires. Throws ``VerificationFailure`` when the page
    /// cannot be had, ``RunAbort`` when the credentials are refused, and `CancellationError`.
    public func notificationHistory(
        _ request: NotificationHistoryRequest, paginationToken: String?, in environment: AppStoreEnvironment, logger: Logger
    ) async throws -> NotificationHistoryResponse {
        // Sorted keys: every page of a reading sends byte for byte the same body.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let body = Array(try encoder.encode(request))
        let path = "/inApps/v1/notifications/history" + (paginationToken.map { "?paginationToken=\(Self.queryValue($0))" } ?? "")
        let answer = try await exchange(path: path, in: environment, json: body, what: "notification history", logger: logger)
        return try decode(NotificationHistoryResponse.self, answer!, environment: environment, what: "notification history")
    }

    /// Request a Test Notification (`POST /inApps/v1/notifications/test`): Apple sends a `TEST`
    /// notification to the environment's URL; returns the token to ask how it went.
    public func requestTestNotification(in environment: AppStoreEnvironment, logger: Logger) async throws -> String {
        let answer = try await exchange(path: "/inApps/v1/notifications/test", in: environment, json: [], what: "test notification request", logger: logger)
        return try decode(TestNotificationToken.self, answer!, environment: environment, what: "test notification request").testNotificationToken
    }

    /// Get Test Notification Status (`GET /inApps/v1/notifications/test/{token}`): Apple's attempts
    /// to deliver it, or nil while Apple has none to report yet (404 4040008).
    public func testNotificationStatus(_ token: String, in environment: AppStoreEnvironment, logger: Logger) async throws -> NotificationHistoryResponse.Record? {
        let path = "/inApps/v1/notifications/test/\(Self.pathComponent(token))"
        guard let answer = try await exchange(path: path, in: environment, json: nil, what: "test notification status", notFoundCode: 4_040_008, logger: logger) else {
            return nil
        }
        return try decode(NotificationHistoryResponse.Record.self, answer, environment: environment, what: "test notification status")
    }

    /// One request with the retries the notification and support endpoints share: in the rate
    /// limit; 429 (lowering the rate and waiting for `Retry-After`), Apple's retryable codes and
    /// transport failures retried with the policy's backoff. Returns the body of a success, or nil
    /// when Apple answered `notFoundCode`; any other code of Apple's is thrown as a
    /// ``VerificationFailure`` whose `upstreamStatus` holds it.
    func exchange(
        path: String, in environment: AppStoreEnvironment, json: [UInt8]?, put: Bool = false, what: String, notFoundCode: Int? = nil, logger: Logger
    ) async throws -> ByteBuffer? {
        var attempt = 1
        while true {
            try Task.checkCancellation()
            var failure: VerificationFailure
            var wait: Duration?
            switch try await send(path: path, to: environment, json: json, put: put) {
            case .ok(let answer, _):
                return answer
            case .unauthorized:
                throw RunAbort.serverAPIUnauthorized(environment)
            case .apple(let code, let httpStatus, let retryAfter):
                if code == notFoundCode { return nil }
                failure = VerificationFailure(.appleStatus, "\(environment.rawValue) \(what) answered error \(code)", upstreamStatus: .serverAPI(code), httpStatus: httpStatus)
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
            logger.debug("retrying the \(what)", metadata: ["reason": "\(failure.reason.rawValue)", "attempt": "\(attempt)", "delay_ms": "\(delay.milliseconds)"])
            try await Task.sleep(for: delay)
            attempt += 1
        }
    }

    func decode<Answer: Decodable>(_ type: Answer.Type, _ body: ByteBuffer, environment: AppStoreEnvironment, what: String) throws -> Answer {
        do {
            return try JSONDecoder().decode(Answer.self, from: Data(body.readableBytesView))
        } catch {
            throw VerificationFailure(.unexpectedResponse, "the \(environment.rawValue) \(what) is not Apple's shape", upstreamStatus: .serverAPI(200), httpStatus: 200)
        }
    }

    /// A query parameter's value, percent-encoded (a token may hold `+`, `/` or `=`).
    static func queryValue(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_.~"))) ?? ""
    }
}
