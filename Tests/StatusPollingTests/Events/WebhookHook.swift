import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// A consumer's endpoint on loopback, as the web service would run it: checks every delivery's
/// Standard Webhooks signature at the deliverers' clock, answers as scripted, and keeps what it
/// accepted, in order.
final class WebhookHook: Sendable {
    struct Received: Sendable, Equatable {
        var id: String
        var userID: String
        var body: String
    }

    let secret: WebhookSecret
    let secretText: String
    let clock: Mutex<Int64>
    /// Every request: its id and whether its signature held.
    let requests = Mutex<[(id: String, signed: Bool)]>([])
    /// The deliveries answered 2xx, in the order they arrived.
    let accepted = Mutex<[Received]>([])
    /// Requests still to fail, per user, before that user's requests succeed.
    let failuresAhead = Mutex<[String: Int]>([:])
    /// The status of every request while set (a 5xx: the endpoint is down).
    let status = Mutex<Int?>(nil)
    /// One element per accepted delivery, for a test that waits for them.
    let arrivals: AsyncStream<Void>
    private let arrived: AsyncStream<Void>.Continuation
    /// Requests to the redirect's target (never followed: none must come).
    let redirectTargetHits = Mutex(0)

    init(clockMs: Int64) throws {
        secretText = WebhookSecret.generate()
        secret = try WebhookSecret(secretText)
        clock = Mutex(clockMs)
        (arrivals, arrived) = AsyncStream<Void>.makeStream()
    }

    /// Returns once `count` deliveries were accepted in all; fails after ``Patience/bound`` (a hang detector).
    func waitForAccepted(_ count: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                guard self.accepted.withLock({ $0.count }) < count else { return }
                for await _ in self.arrivals where self.accepted.withLock({ $0.count }) >= count { return }
            }
            group.addTask {
                try await Task.sleep(for: Patience.bound)
                throw CancellationError()
            }
            try await group.next()
            group.cancelAll()
        }
    }

    var now: @Sendable () -> Int64 { { self.clock.withLock { $0 } } }

    func advance(by ms: Int64) { clock.withLock { $0 += ms } }

    var router: Router<BasicRequestContext> {
        let router = Router()
        router.post("hook") { request, _ -> Response in
            var request = request
            let body = String(buffer: try await request.collectBody(upTo: 1 << 20))
            let id = request.headers[HTTPField.Name("webhook-id")!] ?? ""
            let signed = WebhookSignature.verify(
                id: id, timestamp: request.headers[HTTPField.Name("webhook-timestamp")!] ?? "", body: body,
                header: request.headers[HTTPField.Name("webhook-signature")!] ?? "", secret: self.secret, nowSeconds: self.now() / 1000)
            self.requests.withLock { $0.append((id, signed)) }
            guard signed else { return Response(status: .unauthorized) }
            let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
            let user = (object?["data"] as? [String: Any])?["user_id"] as? String ?? ""
            if let status = self.status.withLock({ $0 }) { return Response(status: .init(code: status)) }
            let fail = self.failuresAhead.withLock { ahead -> Bool in
                guard let n = ahead[user], n > 0 else { return false }
                ahead[user] = n - 1
                return true
            }
            if fail { return Response(status: .internalServerError) }
            self.accepted.withLock { $0.append(Received(id: id, userID: user, body: body)) }
            self.arrived.yield()
            return Response(status: .noContent)
        }
        router.post("moved") { _, _ -> Response in
            Response(status: .temporaryRedirect, headers: [.location: "/elsewhere"])
        }
        router.post("elsewhere") { _, _ -> Response in
            self.redirectTargetHits.withLock { $0 += 1 }
            return Response(status: .ok)
        }
        return router
    }
}
