import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// A stand-in for the App Store Server API on 127.0.0.1: each (environment, id) has a script of
/// replies played in order (the last repeats); everything else answers 4040010. Every request is
/// recorded with its path, its bearer token and when it arrived. Real HTTP, real sockets.
actor ScriptedServerAPI {
    struct Received: Sendable {
        var environment: String
        var path: String
        var query: String
        var authorization: String?
        var at: ContinuousClock.Instant
        /// The wall clock when it arrived, for waits Apple gives as an instant (`Retry-After`).
        var arrived: Date
    }

    private var scripts: [String: [ScriptedAppStore.Reply]] = [:]
    private(set) var received: [Received] = []

    /// Scripts the replies for `id` in "production" or "sandbox".
    func script(_ id: String, environment: String = "production", _ replies: [ScriptedAppStore.Reply]) {
        scripts["\(environment)|\(id)"] = replies
    }

    fileprivate func nextReply(environment: String, id: String, request: Request) -> ScriptedAppStore.Reply {
        received.append(Received(
            environment: environment, path: request.uri.path, query: request.uri.query ?? "",
            authorization: request.headers[.authorization], at: .now, arrived: Date()))
        let key = "\(environment)|\(id)"
        guard var replies = scripts[key], !replies.isEmpty else {
            return .http(404, body: #"{"errorCode":4040010,"errorMessage":"Transaction id not found."}"#)
        }
        let reply = replies.count > 1 ? replies.removeFirst() : replies[0]
        scripts[key] = replies
        return reply
    }

    /// Starts the server; `body` gets the production and sandbox base URLs.
    static func withServer<T: Sendable>(_ body: (ScriptedServerAPI, _ production: String, _ sandbox: String) async throws -> T) async throws -> T {
        let store = ScriptedServerAPI()
        let router = Router()
        for environment in ["production", "sandbox"] {
            for route in ["inApps/v1/subscriptions/:id", "inApps/v2/history/:id"] {
                router.get("\(environment)/\(route)") { request, context -> Response in
                    let id = context.parameters.get("id") ?? ""
                    let reply = await store.nextReply(environment: environment, id: id, request: request)
                    return try await ScriptedAppStore.response(for: reply, extraHeaders: [:])
                }
            }
        }
        return try await withLoopbackServer(router) { port in
            try await body(store, "http://127.0.0.1:\(port)/production", "http://127.0.0.1:\(port)/sandbox")
        }
    }
}
