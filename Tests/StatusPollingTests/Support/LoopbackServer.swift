import Hummingbird
import HummingbirdCore
import Logging
import ServiceLifecycle

/// Serves `router` on 127.0.0.1 at a free port, runs `body` with the port, and stops the server on
/// every path. Plain HTTP/1.1 by default; `server` can wrap it in TLS.
func withLoopbackServer<T: Sendable>(
    _ router: Router<BasicRequestContext>, server: HTTPServerBuilder = .http1(), _ body: (Int) async throws -> T
) async throws -> T {
    let (ports, continuation) = AsyncStream<Int>.makeStream()
    var quiet = Logger(label: "loopback-server")
    quiet.logLevel = .critical
    let app = Application(
        router: router,
        server: server,
        configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            continuation.yield(channel.localAddress?.port ?? 0)
            continuation.finish()
        },
        logger: quiet)
    let services = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: quiet))
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await services.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else { throw CancellationError() }
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
