import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The simulator over HTTP on loopback: `POST /verifyReceipt` (production) and
/// `POST /sandbox/verifyReceipt`; the App Store Server API under `/inApps/…` and
/// `/sandbox/inApps/…`; plus a few `/simulator/…` routes to move the clock and read the truth by
/// hand.
public enum SimulatorServer {
    /// Where a running simulator listens.
    public struct Endpoints: Sendable {
        public var port: Int
        public var productionURL: String
        public var sandboxURL: String
        public var baseURL: String
        /// The App Store Server API's production base URL (`…/inApps/v1/…` follows it).
        public var serverAPIURL: String
        /// The App Store Server API's sandbox base URL.
        public var serverAPISandboxURL: String
    }

    /// Starts a server on `host`:`port` (0: any free port), runs `body`, and stops the server on
    /// every path.
    public static func withRunning<T: Sendable>(
        _ simulator: AppStoreSimulator, host: String = "127.0.0.1", port: Int = 0, logger: Logger? = nil,
        _ body: (Endpoints) async throws -> T
    ) async throws -> T {
        let (app, ports) = application(simulator, host: host, port: port, logger: logger)
        let services = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: app.logger))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await services.run() }
            var iterator = ports.makeAsyncIterator()
            guard let bound = await iterator.next(), bound > 0 else {
                await services.triggerGracefulShutdown()
                throw SimulatorError.couldNotBind(host: host, port: port)
            }
            let endpoints = Self.endpoints(host: host, port: bound)
            do {
                let result = try await body(endpoints)
                await services.triggerGracefulShutdown()
                try await group.waitForAll()
                return result
            } catch {
                await services.triggerGracefulShutdown()
                throw error
            }
        }
    }

    /// Runs until SIGINT or SIGTERM (the `simulate` command). `onReady` gets the endpoints once
    /// bound; `requestLog`, when given, gets a line per verifyReceipt request.
    public static func runUntilSignalled(
        _ simulator: AppStoreSimulator, host: String, port: Int, logger: Logger, requestLog: RequestLog? = nil, alongside: [any Service] = [],
        onReady: @escaping @Sendable (Endpoints) -> Void
    ) async throws {
        try await runUntilSignalled(
            router: router(simulator, requestLog: requestLog), host: host, port: port, logger: logger, alongside: alongside, onReady: onReady)
    }

    /// Serves `router` (and runs `alongside`, e.g. the notification pusher) until SIGINT or
    /// SIGTERM; shared by the simulator and the lean stand-in.
    static func runUntilSignalled(
        router: Router<BasicRequestContext>, host: String, port: Int, logger: Logger, alongside: [any Service] = [],
        onReady: @escaping @Sendable (Endpoints) -> Void
    ) async throws {
        let (app, ports) = application(router: router, host: host, port: port, logger: logger)
        let services = ServiceGroup(configuration: .init(services: [app] + alongside, gracefulShutdownSignals: [.sigint, .sigterm], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await services.run() }
            group.addTask {
                for await bound in ports { onReady(endpoints(host: host, port: bound)) }
            }
            try await group.waitForAll()
        }
    }

    static func endpoints(host: String, port: Int) -> Endpoints {
        let base = "http://\(host.contains(":") ? "[\(host)]" : host):\(port)"
        return Endpoints(
            port: port, productionURL: "\(base)/verifyReceipt", sandboxURL: "\(base)/sandbox/verifyReceipt", baseURL: base,
            serverAPIURL: base, serverAPISandboxURL: "\(base)/sandbox")
    }

    static func application(_ simulator: AppStoreSimulator, host: String, port: Int, logger: Logger?) -> (some ApplicationProtocol, AsyncStream<Int>) {
        application(router: router(simulator), host: host, port: port, logger: logger)
    }

    /// The simulator's routes: both verifyReceipt endpoints, the Server API and the admin routes.
    static func router(_ simulator: AppStoreSimulator, requestLog: RequestLog? = nil) -> Router<BasicRequestContext> {
        let router = Router()
        router.post("verifyReceipt") { request, _ in
            try await respond(simulator, .production, request, log: requestLog)
        }
        router.post("sandbox/verifyReceipt") { request, _ in
            try await respond(simulator, .sandbox, request, log: requestLog)
        }
        addServerAPIRoutes(router, simulator)
        addNotificationHistoryRoutes(router, simulator)
        addExtensionRoutes(router, simulator)
        addConsumptionRoutes(router, simulator)
        addAdminRoutes(router, simulator)
        return router
    }

    /// `router` on `host`:`port`, and a stream that yields the bound port once listening. Quiet
    /// unless a logger is given.
    static func application(router: Router<BasicRequestContext>, host: String, port: Int, logger: Logger?) -> (some ApplicationProtocol, AsyncStream<Int>) {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        var quiet = logger ?? Logger(label: "app-store-simulator")
        if logger == nil { quiet.logLevel = .critical }
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "AppStoreSimulator"),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            },
            logger: quiet)
        return (app, ports)
    }

    struct DroppedConnection: Error {}

    static func respond(_ simulator: AppStoreSimulator, _ environment: SimulatedEnvironment, _ request: Request, log: RequestLog? = nil) async throws -> Response {
        let started = RequestLog.now()
        let body = Data(try await request.body.collect(upTo: 4 << 20).readableBytesView)
        let answer = simulator.answer(environment: environment, body: body)
        let response = try await render(answer)
        log?.record(startMicros: started, client: request.uri.queryParameters.get("client"), environment: environment, body: body, answer: answer, simulator: simulator)
        return response
    }

    /// `answer` as an HTTP response, after its delay.
    static func render(_ answer: SimulatedAnswer) async throws -> Response {
        if answer.delay > .zero { try await Task.sleep(for: answer.delay) }
        var headers = HTTPFields()
        switch answer.reply {
        case .json(let data):
            headers[.contentType] = "application/json"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
        case .http(let code, let text, let extra):
            headers[.contentType] = "text/plain"
            for (name, value) in extra { if let field = HTTPField.Name(name) { headers[field] = value } }
            return Response(status: .init(code: code), headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
        case .html:
            headers[.contentType] = "text/html; charset=utf-8"
            let page = "<!DOCTYPE html><html><head><title>Apple - Support</title></head><body><h1>We're sorry.</h1><p>The App Store is temporarily unavailable.</p></body></html>"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: page)))
        case .drop:
            // Promise a body, send a part of it, then fail: the server closes the connection.
            headers[.contentType] = "application/json"
            return Response(status: .ok, headers: headers, body: ResponseBody(contentLength: 512) { writer in
                try await writer.write(ByteBuffer(string: #"{"status": 0, "environment": "Produc"#))
                throw DroppedConnection()
            })
        }
    }
}
