import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The proxy variables and NO_PROXY, read as curl reads them.
@Suite struct ProxyConfigurationTests {
    static let apple = HTTPEndpoint("https://api.storekit.apple.com/inApps/v1/subscriptions/1")!
    static let buy = HTTPEndpoint("https://buy.itunes.apple.com/verifyReceipt")!
    static let simulator = HTTPEndpoint("http://127.0.0.1:8787/verifyReceipt")!

    @Test func httpsAndHTTPEndpointsUseTheirOwnVariable() throws {
        let proxy = try #require(try ProxyConfiguration.fromEnvironment([
            "HTTPS_PROXY": "http://user:pa%3Ass@proxy.corp:3128", "http_proxy": "plain.corp", "HTTP_PROXY": "ignored.corp:1",
        ]))
        #expect(proxy.proxy(for: Self.apple) == ProxyConfiguration.Proxy(host: "proxy.corp", port: 3128, user: "user", password: "pa:ss"))
        #expect(proxy.proxy(for: Self.apple)?.authorization == "Basic dXNlcjpwYTpzcw==")
        #expect(proxy.proxy(for: Self.apple)?.description == "proxy.corp:3128")
        // No scheme and no port: http and curl's 1080; the lower-case variable wins.
        #expect(proxy.proxy(for: Self.simulator) == ProxyConfiguration.Proxy(host: "plain.corp", port: 1080))
    }

    @Test func noProxyVariableAloneOrEmptyValuesMeanDirect() throws {
        #expect(try ProxyConfiguration.fromEnvironment([:]) == nil)
        #expect(try ProxyConfiguration.fromEnvironment(["NO_PROXY": "*", "HTTPS_PROXY": ""]) == nil)
        let httpsOnly = try #require(try ProxyConfiguration.fromEnvironment(["https_proxy": "http://[::1]:3128"]))
        #expect(httpsOnly.proxy(for: Self.simulator) == nil)
        #expect(httpsOnly.proxy(for: Self.apple)?.description == "[::1]:3128")
    }

    @Test(arguments: [
        // (NO_PROXY, host, port, bypasses)
        ("apple.com", "api.storekit.apple.com", 443, true),
        (".apple.com", "api.storekit.apple.com", 443, true),
        (".apple.com", "apple.com", 443, true),
        ("APPLE.com.", "Buy.iTunes.Apple.com", 443, true),
        ("apple.com", "notapple.com", 443, false),
        ("storekit.apple.com", "api.storekit-sandbox.apple.com", 443, false),
        ("*", "anything.example", 80, true),
        ("a.example, b.example ,", "x.b.example", 443, true),
        ("apple.com:443", "api.storekit.apple.com", 443, true),
        ("apple.com:8443", "api.storekit.apple.com", 443, false),
        ("127.0.0.1", "127.0.0.1", 8787, true),
        ("127.0.0.1", "127.0.0.2", 8787, false),
        ("127.0.0.1:8787", "127.0.0.1", 8787, true),
        ("127.0.0.1:8788", "127.0.0.1", 8787, false),
        ("localhost", "127.0.0.1", 8787, false),
        ("::1", "[::1]", 8787, true),
        ("[0:0:0:0:0:0:0:1]:8787", "::1", 8787, true),
        ("[::1]:1", "::1", 8787, false),
        ("", "api.storekit.apple.com", 443, false),
    ])
    func noProxyMatchesAsCurlDoes(list: String, host: String, port: Int, bypasses: Bool) throws {
        #expect(try NoProxyList(list).matches(host: host, port: port) == bypasses)
    }

    @Test(arguments: ["host:port", "[::1", "[::1]x", "exa mple.com", "a.example:0", "1.2.3.4:70000"])
    func aMalformedNoProxyEntryIsRefused(entry: String) {
        #expect(throws: NoProxyList.Invalid(entry: entry)) { try NoProxyList("localhost, \(entry)") }
    }

    @Test func messagesNeverShowThePassword() {
        #expect(ProxyConfiguration.redacted("http://u:hunter2@proxy:3128/x") == "http://***@proxy:3128/x")
        #expect(ProxyConfiguration.redacted("u:hunter2@proxy:3128/x") == "***@proxy:3128/x")
        #expect(ProxyConfiguration.redacted("http://proxy:3128") == "http://proxy:3128")
        #expect(throws: ProxyConfiguration.Invalid(variable: "HTTPS_PROXY", problem: "'http://***@proxy:3128/x' has a path or query; a proxy is http://HOST:PORT only")) {
            try ProxyConfiguration.fromEnvironment(["HTTPS_PROXY": "http://u:hunter2@proxy:3128/x"])
        }
    }
}
