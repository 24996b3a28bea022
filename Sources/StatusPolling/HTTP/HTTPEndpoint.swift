import Foundation

/// A URL parsed once, when the client is configured, into what a connection and a request head
/// need: the scheme decides TLS, `hostHeader` is sent as `Host`.
public struct HTTPEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var useTLS: Bool
    public var host: String
    public var port: Int
    /// Path and query, as sent in the request line.
    public var target: String

    /// Parses an `http` or `https` URL; nil for anything else.
    public init?(_ url: String) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else { return nil }
        useTLS = scheme == "https"
        self.host = host
        port = components.port ?? (useTLS ? 443 : 80)
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        target = components.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
    }

    /// `Host`: the port only when it is not the scheme's default; IPv6 literals in brackets.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (useTLS ? 443 : 80) ? name : "\(name):\(port)"
    }

    public var description: String { "\(useTLS ? "https" : "http")://\(hostHeader)\(target)" }
}
