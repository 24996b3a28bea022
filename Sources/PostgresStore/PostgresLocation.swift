import Foundation
import NIOSSL
import PostgresNIO

/// Where a PostgreSQL database is and how to log in: parsed from `--database postgres://…` (or
/// `postgresql://…`), with libpq's conventions so an operator's URL means what `psql` makes of it.
///
/// The password comes from the URL, else `PGPASSWORD`, else a `.pgpass`-style file (`PGPASSFILE`,
/// default `~/.pgpass`). It is never part of ``name``, which every message uses.
public struct PostgresLocation: Sendable, Equatable {
    /// libpq's `sslmode`: `disable`, `allow` and `prefer` (the default) use TLS when the server offers
    /// it without checking its certificate; `require` insists on TLS; `verify-ca` also checks the
    /// chain; `verify-full` also checks the host name.
    public enum SSLMode: String, Sendable, CaseIterable {
        case disable, allow, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    public var user: String
    public var password: String?
    /// A host name or address; nil with ``socketDirectory``.
    public var host: String?
    /// The directory of a unix socket (`?host=/run/postgresql`, libpq's spelling).
    public var socketDirectory: String?
    public var port: Int
    public var database: String
    public var sslMode: SSLMode
    /// `sslrootcert`: the CA certificates `verify-ca` and `verify-full` trust (default: the system's).
    public var sslRootCertificate: String?
    /// Where the password came from, for the messages: "the URL", "PGPASSWORD", a file's path.
    public var passwordSource: String?
    /// How the server lists the connections (`application_name`, default status-poller).
    public var applicationName: String
    /// How long a connection may take to open (`connect_timeout`, seconds, default 10).
    public var connectTimeout: Int

    /// Whether `--database` names PostgreSQL rather than a SQLite path.
    public static func isPostgresURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// A bad URL, or a file of credentials that cannot be used; says what to write instead.
    public struct Invalid: Error, CustomStringConvertible, Equatable {
        public var description: String
    }

    /// Parses `text`, reading a missing user and password from the environment and the password file.
    public init(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard Self.isPostgresURL(text), let components = URLComponents(string: text) else {
            throw Invalid(description: "'\(Self.redacted(text))' is not a PostgreSQL URL: write postgres://USER@HOST:PORT/DATABASE (the password from PGPASSWORD or ~/.pgpass).")
        }
        let query = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        let known: Set = ["sslmode", "sslrootcert", "host", "port", "user", "dbname", "application_name", "connect_timeout"]
        if let unknown = query.keys.filter({ !known.contains($0) }).sorted().first {
            throw Invalid(description: "unknown parameter '\(unknown)' in the PostgreSQL URL \(Self.redacted(text)); status-poller reads \(known.sorted().joined(separator: ", ")).")
        }
        let urlHost = components.percentEncodedHost.flatMap { $0.removingPercentEncoding }.flatMap { $0.isEmpty ? nil : $0 }
        let hostParameter = query["host"] ?? urlHost ?? environment["PGHOST"]
        if let hostParameter, hostParameter.hasPrefix("/") {
            socketDirectory = hostParameter
            host = nil
        } else {
            host = (hostParameter?.isEmpty == false ? hostParameter : nil) ?? "localhost"
            socketDirectory = nil
        }
        if let portText = query["port"] ?? components.port.map(String.init) ?? environment["PGPORT"] {
            guard let port = Int(portText), (1...65535).contains(port) else {
                throw Invalid(description: "the port '\(portText)' in the PostgreSQL URL \(Self.redacted(text)) is not a port number.")
            }
            self.port = port
        } else {
            port = 5432
        }
        user = query["user"] ?? components.user?.removingPercentEncoding ?? environment["PGUSER"] ?? ProcessInfo.processInfo.userName
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = query["dbname"] ?? (path.isEmpty ? nil : path.removingPercentEncoding) ?? environment["PGDATABASE"] ?? user
        let mode = query["sslmode"] ?? environment["PGSSLMODE"] ?? SSLMode.prefer.rawValue
        guard let sslMode = SSLMode(rawValue: mode) else {
            throw Invalid(description: "sslmode '\(mode)' is not one of \(SSLMode.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        self.sslMode = sslMode
        sslRootCertificate = query["sslrootcert"] ?? environment["PGSSLROOTCERT"]
        applicationName = query["application_name"] ?? environment["PGAPPNAME"] ?? "status-poller"
        let timeout = query["connect_timeout"] ?? environment["PGCONNECT_TIMEOUT"] ?? "10"
        guard let seconds = Int(timeout), seconds > 0 else {
            throw Invalid(description: "connect_timeout '\(timeout)' is not a whole number of seconds.")
        }
        connectTimeout = seconds
        if let password = components.password?.removingPercentEncoding {
            self.password = password
            passwordSource = "the URL"
        } else if let password = environment["PGPASSWORD"] {
            self.password = password
            passwordSource = "PGPASSWORD"
        } else {
            let file = environment["PGPASSFILE"] ?? (environment["HOME"].map { $0 + "/.pgpass" })
            if let file, let found = try Self.passwordFromFile(file, host: host ?? "localhost", port: port, database: database, user: user) {
                password = found
                passwordSource = file
            }
        }
    }

    /// How messages and logs name the database: the URL without its password.
    public var name: String {
        var components = URLComponents()
        components.scheme = "postgres"
        components.user = user
        if let host { components.host = host.contains(":") ? "[\(host)]" : host }
        components.port = port
        components.path = "/" + database
        var items: [URLQueryItem] = []
        if let socketDirectory { items.append(URLQueryItem(name: "host", value: socketDirectory)) }
        if sslMode != .prefer { items.append(URLQueryItem(name: "sslmode", value: sslMode.rawValue)) }
        if !items.isEmpty { components.queryItems = items }
        return components.string ?? "postgres://\(user)@\(host ?? "localhost"):\(port)/\(database)"
    }

    /// `text` with any password in it replaced, for messages about a URL that did not parse.
    public static func redacted(_ text: String) -> String {
        guard let schemeEnd = text.range(of: "://"), let at = text[schemeEnd.upperBound...].lastIndex(of: "@") else { return text }
        let credentials = text[schemeEnd.upperBound..<at]
        guard let colon = credentials.firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + ":<redacted>" + String(text[at...])
    }

    /// The first line of a `.pgpass` file (`host:port:database:user:password`, `*` matches any,
    /// `\:` and `\\` escaped) that matches. A file others may read is refused, as libpq does.
    static func passwordFromFile(_ path: String, host: String, port: Int, database: String, user: String) throws -> String? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
        if let mode = attributes[.posixPermissions] as? Int, mode & 0o077 != 0 {
            throw Invalid(description: "the password file \(path) can be read by others (mode \(String(mode, radix: 8))); run `chmod 600 \(path)`.")
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            let fields = Self.pgpassFields(String(line))
            guard fields.count == 5 else { continue }
            let wanted = [host, String(port), database, user]
            if zip(fields.prefix(4), wanted).allSatisfy({ $0 == "*" || $0 == $1 }) { return fields[4] }
        }
        return nil
    }

    private static func pgpassFields(_ line: String) -> [String] {
        var fields: [String] = [""]
        var escaped = false
        for character in line {
            if escaped {
                fields[fields.count - 1].append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == ":", fields.count < 5 {
                fields.append("")
            } else {
                fields[fields.count - 1].append(character)
            }
        }
        return fields
    }

    /// PostgresNIO's client configuration for this location.
    func clientConfiguration() throws -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if let socketDirectory {
            configuration = .init(unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)", username: user, password: password, database: database)
        } else {
            configuration = .init(host: host ?? "localhost", port: port, username: user, password: password, database: database, tls: try tls())
        }
        configuration.options.additionalStartupParameters = [("application_name", applicationName)]
        configuration.options.connectTimeout = .seconds(Int64(connectTimeout))
        return configuration
    }

    /// PostgresNIO's configuration of a single connection (the worker lock's), named `applicationName`.
    func connectionConfiguration(applicationName: String) throws -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        if let socketDirectory {
            configuration = .init(unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)", username: user, password: password, database: database)
        } else {
            let tls: PostgresConnection.Configuration.TLS
            switch try self.tlsChoice() {
            case .disable: tls = .disable
            case .require(let configuration): tls = .require(try NIOSSLContext(configuration: configuration))
            case .prefer(let configuration): tls = .prefer(try NIOSSLContext(configuration: configuration))
            }
            configuration = .init(host: host ?? "localhost", port: port, username: user, password: password, database: database, tls: tls)
        }
        configuration.options.additionalStartupParameters = [("application_name", String(applicationName.prefix(63)))]
        configuration.options.connectTimeout = .seconds(Int64(connectTimeout))
        return configuration
    }

    /// The TLS that `sslMode` asks for, for the pool.
    func tls() throws -> PostgresClient.Configuration.TLS {
        switch try tlsChoice() {
        case .disable: return .disable
        case .prefer(let configuration): return .prefer(configuration)
        case .require(let configuration): return .require(configuration)
        }
    }

    private enum TLSChoice {
        case disable
        case prefer(TLSConfiguration)
        case require(TLSConfiguration)
    }

    private func tlsChoice() throws -> TLSChoice {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch sslMode {
        case .disable:
            return .disable
        case .allow, .prefer, .require:
            configuration.certificateVerification = .none
            return sslMode == .require ? .require(configuration) : .prefer(configuration)
        case .verifyCA, .verifyFull:
            configuration.certificateVerification = sslMode == .verifyFull ? .fullVerification : .noHostnameVerification
            if let sslRootCertificate {
                guard FileManager.default.isReadableFile(atPath: sslRootCertificate) else {
                    throw Invalid(description: "sslrootcert \(sslRootCertificate) cannot be read; name the CA certificate (PEM) that signed the server's certificate.")
                }
                configuration.trustRoots = .file(sslRootCertificate)
            }
            return .require(configuration)
        }
    }
}
