import Foundation

/// Where events go: a name (the key of its deliveries, `event_deliveries.endpoint`), an HTTPS URL
/// (plain HTTP only to loopback, for a local consumer or a test) and its signing secret.
public struct WebhookEndpoint: Sendable {
    public var name: String
    public var url: URL
    public var secret: WebhookSecret

    /// Checks the name and the URL; the error says what to change.
    public init(name: String, url text: String, secret: WebhookSecret) throws {
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw WebhookEndpointError("endpoint name '\(name)' must be letters, digits, - or _")
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            throw WebhookEndpointError("endpoint \(name): '\(text)' is not an http(s) URL")
        }
        guard scheme == "https" || (scheme == "http" && Self.isLoopback(host)) else {
            throw WebhookEndpointError("endpoint \(name): events go over HTTPS only (plain http only to 127.0.0.1, ::1 or localhost)")
        }
        guard url.user == nil, url.password == nil else {
            throw WebhookEndpointError("endpoint \(name): the URL must not carry credentials; the signature authenticates each event")
        }
        self.name = name
        self.url = url
        self.secret = secret
    }

    static func isLoopback(_ host: String) -> Bool {
        let host = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        return host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}

/// Why an endpoint was refused.
public struct WebhookEndpointError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
