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
        // The host as the URL spells it (a Unicode name arrives IDNA-encoded): `host` would decode
        // it through ICU's IDNA, 1 MB of resident memory for a name DNS needs in ASCII anyway.
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let encoded = components.encodedHost, !encoded.isEmpty
        else { return nil }
        useTLS = scheme == "https"
        host = encoded.hasPrefix("[") && encoded.hasSuffix("]") ? String(encoded.dropFirst().dropLast()) : encoded
        port = components.port ?? (useTLS ? 443 : 80)
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        target = components.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
    }

    /// The same server with path `path` under this endpoint's own (a base URL's path is kept:
    /// `http://127.0.0.1:8787/sandbox` + `/inApps/v1/…`).
    public func appending(path: String) -> HTTPEndpoint {
        var endpoint = self
        let base = target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
        endpoint.target = (base.hasSuffix("/") ? String(base.dropLast()) : base) + path
        return endpoint
    }

    /// Scheme, host and port only: the key of the connection pool.
    var origin: HTTPEndpoint {
        var endpoint = self
        endpoint.target = "/"
        return endpoint
    }

    /// `Host`: the port only when it is not the scheme's default; IPv6 literals in brackets.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (useTLS ? 443 : 80) ? name : "\(name):\(port)"
    }

    public var description: String { "\(useTLS ? "https" : "http")://\(hostHeader)\(target)" }
}
