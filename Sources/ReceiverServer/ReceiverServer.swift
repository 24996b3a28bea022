import EntitlementCore
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import StatusPolling
import Synchronization

/// The notification receiver over HTTP: Apple's POST at `/app-store/notifications` (V1 and V2 on
/// the same path), `GET /healthz`, `GET /metrics`; plain HTTP or TLS 1.2+. Run in a ServiceLifecycle
/// group: on SIGTERM it takes no new request and finishes those in flight, whose answers are only
/// sent after their commit, so nothing is half-written.
public enum ReceiverServer {
    /// Where and how to listen.
    public struct Settings: Sendable {
        public var host: String
        public var port: Int
        /// Bodies above this are refused with 413 (V1 receipts can exceed 100 KB).
        public var maxBodyBytes: Int
        /// TLS with this certificate chain and key; nil: plain HTTP (behind a TLS proxy).
        public var tls: TLSConfiguration?
        /// How often unmatched notifications are offered to rows enrolled since.
        public var adoptionInterval: Duration = .seconds(60)

        public static let defaultMaxBodyBytes = 2 * 1024 * 1024

        public init(host: String = "127.0.0.1", port: Int = 8080, maxBodyBytes: Int = defaultMaxBodyBytes, tls: TLSConfiguration? = nil) {
            self.host = host
            self.port = port
            self.maxBodyBytes = maxBodyBytes
            self.tls = tls
        }

        /// A server TLS configuration from PEM files, TLS 1.2 at least.
        public static func tls(certificateFile: String, keyFile: String) throws -> TLSConfiguration {
            // Both read now, so a bad file stops the start rather than the first handshake.
            let chain = try NIOSSLCertificate.fromPEMFile(certificateFile).map { NIOSSLCertificateSource.certificate($0) }
            let key = try NIOSSLPrivateKey(file: keyFile, format: .pem)
            var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
            configuration.minimumTLSVersion = .tlsv12
            return configuration
        }
    }

    /// The path Apple posts to; register `https://HOST/app-store/notifications` in App Store Connect.
    public static let notificationsPath = "app-store/notifications"

    /// Serves until SIGINT or SIGTERM; `onReady` gets the bound port. Throws
    /// ``ReceiverServerError/couldNotListen(host:port:reason:)`` when the address cannot be bound.
    /// `alongside`: more services of the same group (the event deliverer, when endpoints are configured).
    public static func runUntilSignalled(
        _ receiver: NotificationReceiver, metrics: ReceiverMetrics, settings: Settings, logger: Logger, alongside: [any Service] = [],
        onReady: @escaping @Sendable (Int) -> Void
    ) async throws {
        let (app, ports, listening) = try application(receiver, metrics: metrics, settings: settings, logger: logger)
        let adopter = WaitingNotificationAdopter(receiver: receiver, interval: settings.adoptionInterval, logger: logger)
        let services = ServiceGroup(
            configuration: .init(services: [app, adopter] + alongside, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        let bound = BoundFlag()
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    // Ends the port stream on every path, so a failed bind cannot leave the waiter below.
                    defer { listening.finish() }
                    try await services.run()
                }
                group.addTask {
                    for await port in ports {
                        bound.set()
                        onReady(port)
                    }
                }
                try await group.waitForAll()
            }
        } catch where !bound.isSet {
            throw ReceiverServerError.couldNotListen(host: settings.host, port: settings.port, reason: "\(error)")
        }
    }

    /// Serves on `settings` (port 0: any free one), runs `body` with the bound port, then shuts
    /// down gracefully on every path.
    public static func withRunning<T: Sendable>(
        _ receiver: NotificationReceiver, metrics: ReceiverMetrics, settings: Settings, logger: Logger, _ body: (Int) async throws -> T
    ) async throws -> T {
        let (app, ports, listening) = try application(receiver, metrics: metrics, settings: settings, logger: logger)
        let services = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { listening.finish() }
                try await services.run()
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else {
                await services.triggerGracefulShutdown()
                var reason = "the server stopped before listening"
                do { try await group.waitForAll() } catch { reason = "\(error)" }
                throw ReceiverServerError.couldNotListen(host: settings.host, port: settings.port, reason: reason)
            }
            do {
                let result = try await body(port)
                await services.triggerGracefulShutdown()
                try await group.waitForAll()
                return result
            } catch {
                await services.triggerGracefulShutdown()
                throw error
            }
        }
    }

    static func router(_ receiver: NotificationReceiver, metrics: ReceiverMetrics, maxBodyBytes: Int) -> Router<BasicRequestContext> {
        let router = Router()
        router.post(RouterPath(stringLiteral: notificationsPath)) { request, _ -> Response in
            let start = ContinuousClock.now
            let reply: NotificationReceiver.Reply
            if let length = request.headers[.contentLength].flatMap(Int.init), length > maxBodyBytes {
                reply = .refused(NotificationRefusal(.tooLarge, "a body of \(length) bytes, above --max-body-bytes \(maxBodyBytes)"))
            } else {
                do {
                    let body = try await request.body.collect(upTo: maxBodyBytes)
                    reply = await receiver.receive(Array(buffer: body))
                } catch is NIOTooManyBytesError {
                    reply = .refused(NotificationRefusal(.tooLarge, "a body above --max-body-bytes \(maxBodyBytes)"))
                }
            }
            metrics.record(reply, took: ContinuousClock.now - start)
            return response(reply)
        }
        router.get("healthz") { _, _ in "ok\n" }
        router.get("metrics") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"], body: .init(byteBuffer: ByteBuffer(string: metrics.text())))
        }
        return router
    }

    /// A small JSON answer: what the notification came to, or why it was refused. Never its body.
    static func response(_ reply: NotificationReceiver.Reply) -> Response {
        let text: String
        switch reply {
        case .accepted(let outcome, _, _): text = #"{"outcome":"\#(outcome.rawValue)"}"#
        case .refused(let refusal): text = #"{"refused":"\#(refusal.reason.rawValue)"}"#
        case .unavailable: text = #"{"unavailable":"the store could not take the write; send it again"}"#
        }
        return Response(
            status: .init(code: reply.httpStatus), headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: text + "\n")))
    }

    static func application(
        _ receiver: NotificationReceiver, metrics: ReceiverMetrics, settings: Settings, logger: Logger
    ) throws -> (some ApplicationProtocol, AsyncStream<Int>, AsyncStream<Int>.Continuation) {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let server: HTTPServerBuilder = try settings.tls.map { try .tls(.http1(), tlsConfiguration: $0) } ?? .http1()
        let app = Application(
            router: router(receiver, metrics: metrics, maxBodyBytes: settings.maxBodyBytes),
            server: server,
            configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: "status-poller"),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            },
            logger: logger)
        return (app, ports, continuation)
    }
}

/// Whether the server reported its port: after that, an error is the server's, not the bind's.
private final class BoundFlag: Sendable {
    private let flag = Mutex(false)
    func set() { flag.withLock { $0 = true } }
    var isSet: Bool { flag.withLock { $0 } }
}
