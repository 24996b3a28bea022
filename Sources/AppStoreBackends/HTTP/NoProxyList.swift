import Foundation

/// `NO_PROXY`, read as curl reads it: a comma-separated list of host names, domains and IP
/// addresses reached without the proxy.
///
/// - `*` alone: every host.
/// - `example.com` or `.example.com`: that host and every host under it (`api.example.com`),
///   compared without case; a trailing dot is ignored.
/// - `10.1.2.3`, `::1`, `[::1]`: that address exactly, as the endpoint's URL writes it (no CIDR
///   ranges, and no name resolution: `localhost` does not match `127.0.0.1`).
/// - `host:port`, `[::1]:8080`: only connections to that port.
///
/// Loopback is not exempt unless listed, as in curl: a simulator on `127.0.0.1` goes through the
/// proxy unless `NO_PROXY` names it.
public struct NoProxyList: Sendable, Equatable {
    enum Pattern: Sendable, Equatable {
        case everything
        case domain(String, port: Int?)
        case address([UInt8], port: Int?)
    }

    /// Why an entry cannot be read; the caller names the variable.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        public var entry: String
        public var description: String { "'\(entry)' is not a host, domain or IP address with an optional :port" }
    }

    private(set) var patterns: [Pattern]

    public init() { patterns = [] }

    /// How many entries the list has.
    public var count: Int { patterns.count }

    /// Parses the list; empty entries and surrounding spaces are ignored.
    public init(_ text: String) throws(Invalid) {
        patterns = []
        for raw in text.split(separator: ",") {
            let entry = raw.trimmingCharacters(in: .whitespaces)
            if entry.isEmpty { continue }
            patterns.append(try Self.pattern(entry))
        }
    }

    /// Whether a connection to `host` (as the URL writes it, brackets or not) and `port` bypasses the proxy.
    public func matches(host: String, port: Int) -> Bool {
        let name = Self.bare(host).lowercased()
        let address = Self.address(name)
        return patterns.contains { pattern in
            switch pattern {
            case .everything:
                return true
            case .domain(let domain, let only):
                guard only.map({ $0 == port }) ?? true, address == nil else { return false }
                let trimmed = name.hasSuffix(".") ? String(name.dropLast()) : name
                return trimmed == domain || trimmed.hasSuffix("." + domain)
            case .address(let bytes, let only):
                return (only.map { $0 == port } ?? true) && address == bytes
            }
        }
    }

    static func pattern(_ entry: String) throws(Invalid) -> Pattern {
        if entry == "*" { return .everything }
        var host = entry
        var port: Int?
        if entry.hasPrefix("[") {
            guard let close = entry.firstIndex(of: "]") else { throw Invalid(entry: entry) }
            host = String(entry[entry.index(after: entry.startIndex)..<close])
            let rest = entry[entry.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let number = Int(rest.dropFirst()), (1...65_535).contains(number) else { throw Invalid(entry: entry) }
                port = number
            }
            guard let bytes = address(host) else { throw Invalid(entry: entry) }
            return .address(bytes, port: port)
        }
        if entry.filter({ $0 == ":" }).count > 1 {
            guard let bytes = address(entry) else { throw Invalid(entry: entry) }
            return .address(bytes, port: nil)
        }
        if let colon = entry.firstIndex(of: ":") {
            guard let number = Int(entry[entry.index(after: colon)...]), (1...65_535).contains(number) else { throw Invalid(entry: entry) }
            host = String(entry[..<colon])
            port = number
        }
        if let bytes = address(host) { return .address(bytes, port: port) }
        var domain = host.lowercased()
        while domain.hasPrefix(".") { domain.removeFirst() }
        if domain.hasSuffix(".") { domain.removeLast() }
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._"))
        guard !domain.isEmpty, domain.unicodeScalars.allSatisfy({ allowed.contains($0) }) else { throw Invalid(entry: entry) }
        return .domain(domain, port: port)
    }

    /// The host without IPv6 brackets.
    static func bare(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    /// The bytes of an IPv4 or IPv6 literal, so `::1` and `0:0:0:0:0:0:0:1` are one address; nil for a name.
    static func address(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}
