import Foundation

extension ProxyConfiguration {
    /// A proxy setting that cannot be used; the message names the variable and what to do, and
    /// shows the URL without its password.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        public var variable: String
        public var problem: String
        public var description: String { "\(variable): \(problem)" }
    }

    /// The variables read, lower case first as curl reads them: `https_proxy`, `HTTPS_PROXY`,
    /// `http_proxy`, `HTTP_PROXY`, `no_proxy`, `NO_PROXY`. An empty value counts as unset.
    /// Returns nil when no proxy is set (`NO_PROXY` alone changes nothing).
    public static func fromEnvironment(_ environment: [String: String]) throws -> ProxyConfiguration? {
        func value(_ name: String) -> (name: String, value: String)? {
            for variable in [name.lowercased(), name.uppercased()] {
                if let text = environment[variable]?.trimmingCharacters(in: .whitespaces), !text.isEmpty { return (variable, text) }
            }
            return nil
        }
        let https = try value("https_proxy").map { try proxy($0.value, variable: $0.name) }
        let http = try value("http_proxy").map { try proxy($0.value, variable: $0.name) }
        guard https != nil || http != nil else { return nil }
        var noProxy = NoProxyList()
        if let list = value("no_proxy") {
            do {
                noProxy = try NoProxyList(list.value)
            } catch {
                throw Invalid(variable: list.name, problem: "\(error); write it as a comma-separated list such as 'localhost,127.0.0.1,.internal.example.com'")
            }
        }
        return ProxyConfiguration(https: https, http: http, noProxy: noProxy)
    }

    /// Parses `http://[user:password@]host[:port][/]`; the scheme may be left out, as curl allows,
    /// and the port defaults to curl's 1080. The user and password are percent-decoded.
    static func proxy(_ text: String, variable: String) throws -> Proxy {
        let url = text.contains("://") ? text : "http://" + text
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            throw Invalid(variable: variable, problem: "'\(redacted(text))' is not a URL; write it as http://HOST:PORT (or http://USER:PASSWORD@HOST:PORT)")
        }
        guard scheme == "http" else {
            let why = scheme == "https"
                ? "a TLS connection to the proxy itself (https://) is not supported; write http://HOST:PORT — the tunnel to Apple is TLS end to end all the same"
                : "the \(scheme):// scheme is not supported; only an HTTP proxy (http://HOST:PORT) that accepts CONNECT"
            throw Invalid(variable: variable, problem: why)
        }
        guard let host = components.host, !host.isEmpty else {
            throw Invalid(variable: variable, problem: "'\(redacted(text))' names no host; write it as http://HOST:PORT")
        }
        guard components.percentEncodedPath.isEmpty || components.percentEncodedPath == "/", components.query == nil, components.fragment == nil else {
            throw Invalid(variable: variable, problem: "'\(redacted(text))' has a path or query; a proxy is http://HOST:PORT only")
        }
        let port = components.port ?? 1080
        guard (1...65_535).contains(port) else { throw Invalid(variable: variable, problem: "port \(port) is not between 1 and 65535") }
        let user = components.percentEncodedUser.map { $0.removingPercentEncoding ?? $0 }
        let password = components.percentEncodedPassword.map { $0.removingPercentEncoding ?? $0 }
        return Proxy(host: NoProxyList.bare(host), port: port, user: user, password: password)
    }

    /// The text with anything between `://` (or the start) and the last `@` shown as `***`.
    static func redacted(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        let start = text.range(of: "://").map(\.upperBound) ?? text.startIndex
        guard start <= at else { return text }
        return String(text[..<start]) + "***" + String(text[at...])
    }
}
