import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import StatusPolling
import Synchronization

/// The web service's endpoint in `demo --events`, on loopback: checks every delivery's Standard
/// Webhooks signature at the demo's clock, fails a seeded 5 % of them with a 500 and all of them
/// while it is down, and keeps each accepted event's first arrival.
final class EventSink: Sendable {
    struct Arrival: Sendable {
        var eventID: String
        var userID: String
        /// The demo's clock at the arrival, ms.
        var atMs: Int64
    }

    struct State {
        var clockMs: Int64 = 0
        var down = false
        var random: SplitMix64
        var requests = 0
        var refused = 0
        var badSignatures = 0
        var arrivals: [Arrival] = []
        var duplicates = 0
        var seen: Set<String> = []
    }

    let secret: WebhookSecret
    let state: Mutex<State>
    let failureRate: Double

    init(seed: UInt64, failureRate: Double = 0.05) throws {
        secret = try WebhookSecret(WebhookSecret.generate())
        state = Mutex(State(random: SplitMix64(seed: seed)))
        self.failureRate = failureRate
    }

    var now: @Sendable () -> Int64 { { self.state.withLock { $0.clockMs } } }

    /// Serves on a free loopback port while `body` runs.
    func withRunning<T: Sendable>(logger: Logger, _ body: (Int) async throws -> T) async throws -> T {
        let router = Router()
        router.post("events") { request, _ -> Response in
            var request = request
            let body = String(buffer: try await request.collectBody(upTo: 1 << 20))
            return Response(status: .init(code: self.receive(request.headers, body)))
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        var quiet = logger
        quiet.logLevel = .critical
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            }, logger: quiet)
        let services = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: quiet))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await services.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else { throw CancellationError() }
            defer { group.cancelAll() }
            do {
                let result = try await body(port)
                await services.triggerGracefulShutdown()
                return result
            } catch {
                await services.triggerGracefulShutdown()
                throw error
            }
        }
    }

    /// The status of one delivery.
    private func receive(_ headers: HTTPFields, _ body: String) -> Int {
        let id = headers[HTTPField.Name("webhook-id")!] ?? ""
        return state.withLock { s in
            s.requests += 1
            guard WebhookSignature.verify(
                id: id, timestamp: headers[HTTPField.Name("webhook-timestamp")!] ?? "", body: body,
                header: headers[HTTPField.Name("webhook-signature")!] ?? "", secret: secret, nowSeconds: s.clockMs / 1000)
            else {
                s.badSignatures += 1
                return 401
            }
            let unit = Double(s.random.next() >> 11) / Double(1 << 53)
            if s.down || unit < failureRate {
                s.refused += 1
                return s.down ? 503 : 500
            }
            guard s.seen.insert(id).inserted else {
                s.duplicates += 1
                return 204
            }
            let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
            let user = (object?["data"] as? [String: Any])?["user_id"] as? String ?? ""
            s.arrivals.append(Arrival(eventID: id, userID: user, atMs: s.clockMs))
            return 204
        }
    }
}
