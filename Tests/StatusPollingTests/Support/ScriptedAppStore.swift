import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// A stand-in for Apple's verifyReceipt on 127.0.0.1: each receipt has a script of replies, played
/// in order (the last one repeats), and every request is recorded. Real HTTP, real sockets.
actor ScriptedAppStore {
    /// One scripted reply.
    indirect enum Reply: Sendable {
        /// HTTP 200 with this JSON body.
        case json(String)
        /// Any HTTP status with a body and headers.
        case http(Int, body: String = "", headers: [String: String] = [:])
        /// HTTP 200 with an HTML page, as during Apple's 2020 outage.
        case html
        /// The connection is closed without a complete answer.
        case drop
        /// Waits, then replies.
        case delayed(Duration, Reply)
        /// HTTP 200 whose body comes one byte per interval and never ends.
        case trickle(Duration)
        /// No answer at all until the test ends: a timeout test that no machine speed can pass.
        case never
        /// Waits until the server has received this many requests in all, then replies: a round of
        /// requests all in flight at once, whatever the machine's speed. First in a reply only.
        case afterRequests(Int, Reply)
    }

    /// A request as the server saw it. The server decodes it with JSONSerialization, independently
    /// of the client's Codable types.
    struct Received: Sendable, Equatable {
        var environment: String
        var receipt: String?
        var password: String?
        var excludeOldTransactions: Bool?
    }

    private var scripts: [String: [Reply]] = [:]
    private(set) var received: [Received] = []
    /// Requests being answered right now, and the most seen at once.
    private(set) var inFlight = 0
    private(set) var maxInFlight = 0
    /// Requests held by `.never`, released when the server stops.
    private var hanging: [CheckedContinuation<Void, Never>] = []
    /// Requests held by `.afterRequests` until `received` has that many, or the server stops.
    private var waiting: [(count: Int, request: CheckedContinuation<Void, Never>)] = []
    private var stopped = false
    /// Headers added to every reply (e.g. `Deprecation`).
    var extraHeaders: [String: String] = [:]

    /// Scripts the replies for `receipt`; `environment` "production", "sandbox" or nil for both.
    func script(_ receipt: String, environment: String? = nil, _ replies: [Reply]) {
        scripts[key(receipt, environment)] = replies
    }

    func setExtraHeaders(_ headers: [String: String]) { extraHeaders = headers }

    func requests(for receipt: String) -> [Received] { received.filter { $0.receipt == receipt } }

    private func key(_ receipt: String, _ environment: String?) -> String { "\(environment ?? "*")|\(receipt)" }

    fileprivate func finished() { inFlight -= 1 }

    /// Holds a `.never` request until the server stops.
    fileprivate func hang() async {
        guard !stopped else { return }
        await withCheckedContinuation { hanging.append($0) }
    }

    /// Holds an `.afterRequests` request until `count` requests have arrived.
    fileprivate func awaitRequests(_ count: Int) async {
        guard !stopped, received.count < count else { return }
        await withCheckedContinuation { waiting.append((count, $0)) }
    }

    fileprivate func stop() {
        stopped = true
        for request in hanging + waiting.map(\.request) { request.resume() }
        hanging.removeAll()
        waiting.removeAll()
    }

    fileprivate func nextReply(environment: String, body: ByteBuffer) -> (Reply, [String: String]) {
        inFlight += 1
        maxInFlight = max(maxInFlight, inFlight)
        let object = (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any]
        let receipt = object?["receipt-data"] as? String
        received.append(Received(
            environment: environment, receipt: receipt, password: object?["password"] as? String,
            excludeOldTransactions: object?["exclude-old-transactions"] as? Bool))
        for waiter in waiting where waiter.count <= received.count { waiter.request.resume() }
        waiting.removeAll { $0.count <= received.count }
        guard let receipt else { return (.json(#"{"status": 21000}"#), extraHeaders) }
        for candidate in [key(receipt, environment), key(receipt, nil)] {
            guard var replies = scripts[candidate], !replies.isEmpty else { continue }
            let reply = replies.count > 1 ? replies.removeFirst() : replies[0]
            scripts[candidate] = replies
            return (reply, extraHeaders)
        }
        return (.json(#"{"status": 21003}"#), extraHeaders)
    }

    /// Starts a server, runs `body` with it and its two URLs, and stops the server on every path.
    static func withServer<T: Sendable>(_ body: (ScriptedAppStore, _ production: String, _ sandbox: String) async throws -> T) async throws -> T {
        let store = ScriptedAppStore()
        let router = Router()
        for environment in ["production", "sandbox"] {
            router.post("\(environment)/verifyReceipt") { request, _ -> Response in
                let body = try await request.body.collect(upTo: 1 << 20)
                var (reply, headers) = await store.nextReply(environment: environment, body: body)
                if case .afterRequests(let count, let then) = reply {
                    await store.awaitRequests(count)
                    reply = then
                }
                if case .never = reply {
                    await store.hang()
                    await store.finished()
                    return Response(status: .serviceUnavailable)
                }
                do {
                    let response = try await Self.response(for: reply, extraHeaders: headers)
                    await store.finished()
                    return response
                } catch {
                    await store.finished()
                    throw error
                }
            }
        }
        return try await withLoopbackServer(router) { port in
            let base = "http://127.0.0.1:\(port)"
            do {
                let result = try await body(store, "\(base)/production/verifyReceipt", "\(base)/sandbox/verifyReceipt")
                await store.stop()
                return result
            } catch {
                await store.stop()
                throw error
            }
        }
    }

    struct DroppedConnection: Error {}
    /// `.afterRequests` inside another reply: only the request handler can wait for requests.
    struct MisplacedWait: Error {}

    static func response(for reply: Reply, extraHeaders: [String: String]) async throws -> Response {
        var fields = HTTPFields()
        for (name, value) in extraHeaders { fields[HTTPField.Name(name)!] = value }
        switch reply {
        case .json(let text):
            fields[.contentType] = "application/json"
            return Response(status: .ok, headers: fields, body: .init(byteBuffer: ByteBuffer(string: text)))
        case .http(let code, let text, let headers):
            for (name, value) in headers { fields[HTTPField.Name(name)!] = value }
            return Response(status: .init(code: code), headers: fields, body: .init(byteBuffer: ByteBuffer(string: text)))
        case .html:
            fields[.contentType] = "text/html"
            let page = "<html><head><title>Apple</title></head><body>We are temporarily unable to process your request.</body></html>"
            return Response(status: .ok, headers: fields, body: .init(byteBuffer: ByteBuffer(string: page)))
        case .drop:
            // Promise a body, then fail while writing it: the server closes the connection mid-answer.
            fields[.contentType] = "application/json"
            return Response(status: .ok, headers: fields, body: ResponseBody(contentLength: 400) { writer in
                try await writer.write(ByteBuffer(string: #"{"status": 0, "latest_rec"#))
                throw DroppedConnection()
            })
        case .trickle(let interval):
            fields[.contentType] = "application/json"
            return Response(status: .ok, headers: fields, body: ResponseBody(contentLength: 1 << 20) { writer in
                while true {
                    try await writer.write(ByteBuffer(string: " "))
                    try await Task.sleep(for: interval)
                }
            })
        case .never:
            return Response(status: .serviceUnavailable)
        case .afterRequests:
            throw MisplacedWait()
        case .delayed(let delay, let then):
            try await Task.sleep(for: delay)
            return try await response(for: then, extraHeaders: extraHeaders)
        }
    }
}
