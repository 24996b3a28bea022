import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A small HTTP CONNECT proxy on 127.0.0.1 for the egress tests, as a company's squid would be:
/// it accepts `CONNECT host:port`, optionally requires Basic credentials (407 otherwise), then
/// splices bytes both ways. It counts the tunnels it opened and the requests it refused.
final class ConnectProxy: Sendable {
    struct Record: Sendable, Equatable {
        /// Tunnels opened (200), by target `host:port`.
        var tunnels: [String] = []
        /// Every target a `CONNECT` asked for, opened or not.
        var requested: [String] = []
        /// CONNECTs answered 407.
        var refused = 0
        /// Every `Proxy-Authorization` header received, as sent.
        var authorizations: [String] = []
    }

    /// The `Proxy-Authorization` value the proxy requires, or nil for none.
    let required: String?
    /// A status line to refuse every CONNECT with (`403 Forbidden`, tinyproxy's `401 Unauthorized`), or nil.
    let refusal: String?
    private let record = Mutex(Record())

    init(user: String? = nil, password: String? = nil, refusing refusal: String? = nil) {
        required = user.map { "Basic " + Data("\($0):\(password ?? "")".utf8).base64EncodedString() }
        self.refusal = refusal
    }

    var recorded: Record { record.withLock { $0 } }

    /// Runs the proxy on a free loopback port for the length of `body`, which gets the port.
    func withRunning<T: Sendable>(_ body: (Int) async throws -> T) async throws -> T {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
            }
        let port = server.channel.localAddress?.port ?? 0
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await server.executeThenClose { inbound in
                    try await withThrowingDiscardingTaskGroup { connections in
                        for try await client in inbound { connections.addTask { await self.serve(client) } }
                    }
                }
            }
            defer { group.cancelAll() }
            do {
                let result = try await body(port)
                try? await server.channel.close()
                return result
            } catch {
                try? await server.channel.close()
                throw error
            }
        }
    }

    /// One client connection: the CONNECT head, then a tunnel until either side closes.
    private func serve(_ client: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async {
        try? await client.executeThenClose { inbound, outbound in
            var iterator = inbound.makeAsyncIterator()
            var received = ByteBuffer()
            var headEnd: Int?
            while headEnd == nil {
                guard var part = try await iterator.next() else { return }
                received.writeBuffer(&part)
                headEnd = Self.endOfHead(received)
            }
            let head = String(decoding: received.readableBytesView.prefix(headEnd!), as: UTF8.self)
            received.moveReaderIndex(forwardBy: headEnd!)
            let lines = head.components(separatedBy: "\r\n")
            let request = lines[0].split(separator: " ")
            let authorization = lines.dropFirst().first { $0.lowercased().hasPrefix("proxy-authorization:") }
                .map { String($0.dropFirst("proxy-authorization:".count)).trimmingCharacters(in: .whitespaces) }
            if let authorization { record.withLock { $0.authorizations.append(authorization) } }
            guard request.count == 3, request[0] == "CONNECT", let (host, port) = Self.target(String(request[1])) else {
                try await outbound.write(ByteBuffer(string: "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
                return
            }
            record.withLock { $0.requested.append(String(request[1])) }
            if let refusal {
                record.withLock { $0.refused += 1 }
                try await outbound.write(ByteBuffer(string: "HTTP/1.1 \(refusal)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
                return
            }
            if let required, authorization != required {
                record.withLock { $0.refused += 1 }
                try await outbound.write(ByteBuffer(string: "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"egress\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
                return
            }
            // NIO's default connect timeout is 10 s; a loopback connect on a busy machine must not fail the tunnel.
            let upstream = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.seconds(Int64(Patience.boundSeconds)))
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
                }
            record.withLock { $0.tunnels.append(String(request[1])) }
            try await outbound.write(ByteBuffer(string: "HTTP/1.1 200 Connection established\r\n\r\n"))
            try await upstream.executeThenClose { upstreamIn, upstreamOut in
                if received.readableBytes > 0 { try await upstreamOut.write(received) }
                try await withThrowingTaskGroup(of: Void.self) { splice in
                    splice.addTask {
                        for try await part in upstreamIn { try await outbound.write(part) }
                        client.channel.close(promise: nil)
                    }
                    while let part = try await iterator.next() { try await upstreamOut.write(part) }
                    upstream.channel.close(promise: nil)
                    try await splice.waitForAll()
                }
            }
        }
    }

    /// Where the head ends (after its blank line), if it has arrived.
    static func endOfHead(_ buffer: ByteBuffer) -> Int? {
        let bytes = Array(buffer.readableBytesView)
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index..<index + 4].elementsEqual([13, 10, 13, 10]) { return index + 4 }
        return nil
    }

    /// `host:port` or `[v6]:port`.
    static func target(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host, port)
    }
}
