import AppStoreSimulator
import Foundation
import GRDB
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// `run` as cron starts it on a host that reaches the App Store only through an HTTP proxy: the
/// real binary, the built-in simulator on loopback, and a real CONNECT proxy between them
/// (`ConnectProxy`). The simulator is plain http, so these tunnels carry plain HTTP; TLS through
/// a tunnel is `ProxyTunnelTLSTests`.
@Suite struct EgressProxyTests {
    static let start: Int64 = 1_780_000_000_000
    static let clock = start + 3 * 3_600_000
    static let population: Population = {
        var configuration = PopulationConfiguration(subscribers: 12, seed: 26, startMs: start, sandboxShare: 0)
        configuration.bundleID = AppleJSON.bundleID
        return Population(configuration)
    }()

    /// A run of the binary against `endpoints` with `environment` on top of the secret. Its request
    /// timeout never fires (the default 10 s did, on a busy CI machine): a retry after a timeout
    /// opens another tunnel and asks again, and these tests count both.
    static func run(
        _ db: TemporaryDatabase, _ endpoints: SimulatorServer.Endpoints, environment: [String: String], options: [String] = []
    ) async throws -> StatusPollerProcess.Outcome {
        let now = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(clock) / 1000))
        return try await StatusPollerProcess.launch(
            ["run", "--database", db.path, "--bundle-id", AppleJSON.bundleID, "--now", now, "--concurrency", "1",
             "--production-url", endpoints.productionURL, "--sandbox-url", endpoints.sandboxURL, "--report", "json", "--log-level", "info"]
                + VerifyReceiptTesting.requestTimeoutOption + options,
            environment: ["APPSTORE_SHARED_SECRET": population.configuration.sharedSecret].merging(environment) { $1 }
        ).outcome()
    }

    /// A fresh database with the population enrolled, the simulator running at the run's clock.
    static func withEnrolled<T: Sendable>(_ body: (TemporaryDatabase, AppStoreSimulator, SimulatorServer.Endpoints) async throws -> T) async throws -> T {
        try await withTemporaryDatabase { db in
            let simulator = AppStoreSimulator(population: population, clockMs: clock)
            for (user, receipt) in simulator.enrolment(at: clock) { try db.insert(userID: user, receipt: receipt) }
            return try await SimulatorServer.withRunning(simulator) { endpoints in try await body(db, simulator, endpoints) }
        }
    }

    static func report(_ outcome: StatusPollerProcess.Outcome) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any], "\(outcome.stderr)")
    }

    /// Every request goes through one kept-alive tunnel (concurrency 1), with the credentials of
    /// the proxy URL sent as `Proxy-Authorization` and never printed.
    @Test func aRunGoesThroughTheProxyWithItsCredentials() async throws {
        try await Self.withEnrolled { db, simulator, endpoints in
            let proxy = ConnectProxy(user: "poller", password: "p@ss w0rd:x")
            try await proxy.withRunning { port in
                let outcome = try await Self.run(db, endpoints, environment: ["HTTP_PROXY": "http://poller:p%40ss%20w0rd%3Ax@127.0.0.1:\(port)"])
                #expect(outcome.status == 0, "\(outcome.stderr)")
                let report = try Self.report(outcome)
                #expect(report["selected"] as? Int == 12)
                #expect(report["verified"] as? Int == 12)
                #expect(simulator.statistics.requests == report["requests"] as? Int)
                let simulatorOrigin = "127.0.0.1:\(endpoints.port)"
                #expect(proxy.recorded.tunnels == [simulatorOrigin])
                #expect(proxy.recorded.refused == 0)
                #expect(proxy.recorded.authorizations == ["Basic " + Data("poller:p@ss w0rd:x".utf8).base64EncodedString()])
                // The proxy is named by host and port; its password is nowhere in the output.
                #expect(outcome.stderr.contains("127.0.0.1:\(port)"), "\(outcome.stderr)")
                for secret in ["p@ss", "p%40ss", "w0rd", "cG9sbGVy"] {
                    #expect(!outcome.stderr.contains(secret) && !outcome.stdout.contains(secret), "\(secret)")
                }
                let options = try await db.webService.read { d in try String.fetchOne(d, sql: "SELECT options FROM poll_runs ORDER BY id DESC LIMIT 1") } ?? ""
                #expect(options.contains(#""proxy":"http via 127.0.0.1:\#(port)""#), "\(options)")
                #expect(!options.contains("w0rd"))
            }
        }
    }

    /// A host in NO_PROXY is reached directly: the proxy opens no tunnel, and the run verifies every row.
    @Test(arguments: ["127.0.0.1", "127.0.0.1:PORT", "localhost,127.0.0.1", "*"]) func aNoProxyHostBypassesTheProxy(noProxy: String) async throws {
        try await Self.withEnrolled { db, simulator, endpoints in
            let proxy = ConnectProxy()
            try await proxy.withRunning { port in
                let outcome = try await Self.run(db, endpoints, environment: [
                    "HTTP_PROXY": "http://127.0.0.1:\(port)", "no_proxy": noProxy.replacingOccurrences(of: "PORT", with: "\(endpoints.port)"),
                ])
                #expect(outcome.status == 0, "\(outcome.stderr)")
                #expect(try Self.report(outcome)["verified"] as? Int == 12)
                #expect(simulator.statistics.requests == 12)
                #expect(proxy.recorded == ConnectProxy.Record())
            }
        }
    }

    /// NO_PROXY for another port of the same host does not exempt this one.
    @Test func aNoProxyEntryForAnotherPortDoesNotBypass() async throws {
        try await Self.withEnrolled { db, _, endpoints in
            let proxy = ConnectProxy()
            try await proxy.withRunning { port in
                let outcome = try await Self.run(db, endpoints, environment: ["http_proxy": "http://127.0.0.1:\(port)", "NO_PROXY": "127.0.0.1:\(endpoints.port + 1)"])
                #expect(outcome.status == 0, "\(outcome.stderr)")
                #expect(proxy.recorded.tunnels == ["127.0.0.1:\(endpoints.port)"])
            }
        }
    }

    /// Wrong credentials: the proxy answers 407, every row fails as a transport failure naming the
    /// proxy and what to check, and no row changes; Apple (the simulator) is never reached.
    @Test func wrongProxyCredentialsFailEveryRowAndChangeNothing() async throws {
        try await Self.withEnrolled { db, simulator, endpoints in
            let before = try (1...12).map { try db.contractColumns(Int64($0)) }
            let proxy = ConnectProxy(user: "poller", password: "right")
            try await proxy.withRunning { port in
                let outcome = try await Self.run(
                    db, endpoints, environment: ["HTTP_PROXY": "http://poller:wrong-secret@127.0.0.1:\(port)"],
                    options: ["--max-attempts", "1", "--circuit-breaker", "off"])
                #expect(outcome.status == 1, "\(outcome.stderr)")
                let report = try Self.report(outcome)
                #expect(report["selected"] as? Int == 12)
                #expect(report["verified"] as? Int == 0)
                #expect(report["failed_by_reason"] as? [String: Int] == ["transport": 12])
                #expect(outcome.stderr.contains(
                    "the proxy 127.0.0.1:\(port) refused the credentials in its URL (407 Proxy Authentication Required); check the user and password in HTTPS_PROXY / HTTP_PROXY"),
                    "\(outcome.stderr)")
                #expect(!outcome.stderr.contains("wrong-secret") && !outcome.stdout.contains("wrong-secret"))
                #expect(proxy.recorded.tunnels.isEmpty)
                #expect(proxy.recorded.refused == 12)
                #expect(simulator.statistics.requests == 0)
            }
            #expect(try (1...12).map { try db.contractColumns(Int64($0)) } == before)
            #expect(before.count == 12 && before.allSatisfy { $0["original_transaction_id"]?.isNull == true })
        }
    }

    /// A proxy URL that cannot be used stops the command at once with exit 2, saying which
    /// variable and what to write, and never echoing a password.
    @Test(arguments: [
        ("HTTPS_PROXY", "socks5://127.0.0.1:1080", "HTTPS_PROXY: the socks5:// scheme is not supported; only an HTTP proxy (http://HOST:PORT) that accepts CONNECT."),
        ("https_proxy", "https://u:hunter2@proxy.example:3128", "https_proxy: a TLS connection to the proxy itself (https://) is not supported"),
        ("HTTP_PROXY", "http://u:hunter2@proxy.example:3128/path", "HTTP_PROXY: 'http://***@proxy.example:3128/path' has a path or query; a proxy is http://HOST:PORT only."),
        ("HTTPS_PROXY", "http://proxy.example:99999", "HTTPS_PROXY: "),
    ])
    func aMalformedProxyExitsTwo(variable: String, value: String, message: String) async throws {
        try await withTemporaryDatabase { db in
            let outcome = try await StatusPollerProcess.launch(
                ["run", "--database", db.path, "--bundle-id", AppleJSON.bundleID], environment: ["APPSTORE_SHARED_SECRET": "s", variable: value]
            ).outcome()
            #expect(outcome.status == 2)
            #expect(outcome.stderr.contains(message), "\(outcome.stderr)")
            #expect(!outcome.stderr.contains("hunter2"))
            #expect(try await db.webService.read { d in try Int.fetchOne(d, sql: "SELECT count(*) FROM poll_runs") } == 0)
        }
    }

    @Test func aMalformedNoProxyExitsTwo() async throws {
        try await withTemporaryDatabase { db in
            let outcome = try await StatusPollerProcess.launch(
                ["run", "--database", db.path, "--bundle-id", AppleJSON.bundleID],
                environment: ["APPSTORE_SHARED_SECRET": "s", "HTTPS_PROXY": "http://proxy.example:3128", "NO_PROXY": "localhost,host:port"]
            ).outcome()
            #expect(outcome.status == 2)
            #expect(outcome.stderr.contains(
                "NO_PROXY: 'host:port' is not a host, domain or IP address with an optional :port; write it as a comma-separated list such as 'localhost,127.0.0.1,.internal.example.com'."),
                "\(outcome.stderr)")
        }
    }
}
