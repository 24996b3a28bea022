import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Get Notification History through the Server API client, against a real HTTP server on
/// loopback: pages follow `paginationToken` with the identical body, a 429 with Apple's
/// `Retry-After` is waited out and retried, and Apple's shape is decoded as sent.
@Suite struct NotificationHistoryClientTests {
    /// What the server saw: each request's query token and body.
    final class Seen: Sendable {
        let requests = Mutex<[(token: String?, body: String, authorized: Bool)]>([])
    }

    @Test func pagesFollowTheTokenWithTheIdenticalBodyAndA429IsWaitedOut() async throws {
        let answers = ServerAPIAnswers(pki: try TestPKI())
        let seen = Seen()
        let limited = Mutex(false)
        let router = Router()
        router.post("inApps/v1/notifications/history") { request, _ -> Response in
            var request = request
            let body = String(buffer: try await request.collectBody(upTo: 1 << 16))
            let token = request.uri.queryParameters.get("paginationToken")
            seen.requests.withLock { $0.append((token, body, request.headers[.authorization]?.hasPrefix("Bearer ") == true)) }
            func json(_ text: String, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
                var fields = headers
                fields[.contentType] = "application/json"
                return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: text)))
            }
            switch token {
            case nil:
                return json(#"{"notificationHistory":[{"signedPayload":"a.b.c","sendAttempts":[{"attemptDate":1790000000000,"sendAttemptResult":"SUCCESS"}]},{"signedPayload":"d.e.f","sendAttempts":[]}],"hasMore":true,"paginationToken":"tok+1/="}"#)
            case "tok+1/="?:
                if !limited.withLock({ let was = $0; $0 = true; return was }) {
                    let retryAt = Int64(Date().timeIntervalSince1970 * 1000) + 200
                    return json(#"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#, status: .tooManyRequests, headers: [HTTPField.Name("Retry-After")!: String(retryAt)])
                }
                return json(#"{"notificationHistory":[{"signedPayload":"g.h.i"}],"hasMore":false}"#)
            default:
                return json(#"{"errorCode":4000017,"errorMessage":"Invalid pagination token."}"#, status: .badRequest)
            }
        }
        try await withLoopbackServer(router) { port in
            let configuration = try answers.configuration(production: "http://127.0.0.1:\(port)", sandbox: "http://127.0.0.1:\(port)/sandbox")
            try await ServerAPIClient.withClient(configuration) { client in
                let request = NotificationHistoryRequest(startDate: 1_789_900_000_000, endDate: 1_790_000_000_000, onlyFailures: true)
                let logger = Logger(label: "history", factory: { _ in SwiftLogNoOpLogHandler() })
                let first = try await client.notificationHistory(request, paginationToken: nil, in: .production, logger: logger)
                #expect(first.notificationHistory.map(\.signedPayload) == ["a.b.c", "d.e.f"])
                #expect(first.notificationHistory[0].sendAttempts == [.init(attemptDate: 1_790_000_000_000, sendAttemptResult: "SUCCESS")])
                #expect(first.hasMore)
                #expect(first.paginationToken == "tok+1/=")
                let started = ContinuousClock.now
                let second = try await client.notificationHistory(request, paginationToken: first.paginationToken, in: .production, logger: logger)
                #expect(ContinuousClock.now - started >= .milliseconds(150))
                #expect(second.notificationHistory.map(\.signedPayload) == ["g.h.i"])
                #expect(second.hasMore == false)
                #expect(second.paginationToken == nil)
            }
        }
        let requests = seen.requests.withLock { $0 }
        #expect(requests.map { $0.token } == [nil, "tok+1/=", "tok+1/="])
        #expect(Set(requests.map { $0.body }) == [#"{"endDate":1790000000000,"onlyFailures":true,"startDate":1789900000000}"#])
        #expect(requests.allSatisfy { $0.authorized })
    }

    /// Every endpoint shares one retry policy with a row's lookup: 5000000 (Apple's general
    /// internal error) waits at least the long backoff (400 ms here) before the page is asked
    /// again, and an unknown 4xx code fails at once.
    @Test func theNotificationEndpointsRetryAsALookupDoes() async throws {
        let answers = ServerAPIAnswers(pki: try TestPKI())
        let asked = Mutex(0)
        let router = Router()
        router.post("inApps/v1/notifications/history") { _, _ -> Response in
            let n = asked.withLock { $0 += 1; return $0 }
            let (status, text): (HTTPResponse.Status, String) = switch n {
            case 1: (.internalServerError, #"{"errorCode":5000000,"errorMessage":"An unknown error occurred."}"#)
            case 2: (.ok, #"{"notificationHistory":[],"hasMore":false}"#)
            default: (.badRequest, #"{"errorCode":4000006,"errorMessage":"Invalid request revision."}"#)
            }
            return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        try await withLoopbackServer(router) { port in
            let configuration = try answers.configuration(production: "http://127.0.0.1:\(port)", sandbox: "http://127.0.0.1:\(port)/sandbox")
            try await ServerAPIClient.withClient(configuration) { client in
                let request = NotificationHistoryRequest(startDate: 1_789_900_000_000, endDate: 1_790_000_000_000, onlyFailures: false)
                let logger = Logger(label: "history", factory: { _ in SwiftLogNoOpLogHandler() })
                let started = ContinuousClock.now
                let page = try await client.notificationHistory(request, paginationToken: nil, in: .production, logger: logger)
                #expect(ContinuousClock.now - started >= .milliseconds(400))
                #expect(page.notificationHistory.isEmpty)
                #expect(asked.withLock { $0 } == 2)
                await #expect(throws: VerificationFailure(
                    .appleStatus, "Production notification history answered error 4000006", upstreamStatus: .serverAPI(4_000_006), httpStatus: 400)) {
                    try await client.notificationHistory(request, paginationToken: nil, in: .production, logger: logger)
                }
                #expect(asked.withLock { $0 } == 3)
            }
        }
    }
}
