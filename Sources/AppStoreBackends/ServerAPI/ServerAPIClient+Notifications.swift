import EntitlementCore
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

    /// One request outside a row's lookup (the notification, refund-request and support endpoints),
    /// with the retry policy every endpoint shares (``request(path:in:json:put:what:notFoundCode:stats:subscriptionID:logger:)``).
    func exchange(
        path: String, in environment: AppStoreEnvironment, json: [UInt8]?, put: Bool = false, what: String, notFoundCode: Int? = nil, logger: Logger
    ) async throws -> ByteBuffer? {
        var stats = StatusLookup.Stats()
        return try await request(path: path, in: environment, json: json, put: put, what: what, notFoundCode: notFoundCode, stats: &stats, logger: logger)
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
