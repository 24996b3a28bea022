import Foundation
import Logging
import NIOSSL
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// https through a CONNECT tunnel: the client asks the proxy for `localhost:PORT`, then does TLS
/// with the real server through it — SNI and the certificate check are for `localhost`, not the
/// proxy — against a real TLS server on loopback (the localhost test certificate).
@Suite struct ProxyTunnelTLSTests {
    /// One attempt, with a timeout that never fires: an exchange through the tunnel (CONNECT, the
    /// handshake, every byte through the proxy) took over 30 s on a CI machine busy with the suite
    /// and two builds, and must end in its answer or its failure, never in a timeout.
    static func configuration(port: Int) -> VerifyReceiptConfiguration {
        let url = "https://localhost:\(port)/verifyReceipt"
        return VerifyReceiptConfiguration(
            productionURL: url, sandboxURL: url, sharedSecret: SharedSecret("s"), requestTimeout: VerifyReceiptTesting.patientTimeout,
            retry: RetryPolicy(maxAttempts: 1))
    }

    static func http(proxyPort: Int, trusting: Bool) throws -> KeepAliveHTTPClient.Configuration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if trusting { tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(try Fixture.data("localhost-cert.pem")), format: .pem)]) }
        return KeepAliveHTTPClient.Configuration(
            connectTimeout: .seconds(30), tls: tls, proxy: ProxyConfiguration(https: .init(host: "127.0.0.1", port: proxyPort)))
    }

    @Test func httpsGoesThroughOneTunnelWithTLSToTheRealHost() async throws {
        try await KeepAliveTLSTests().withTLSServer { port in
            let proxy = ConnectProxy()
            try await proxy.withRunning { proxyPort in
                try await VerifyReceiptClient.withClient(Self.configuration(port: port), http: try Self.http(proxyPort: proxyPort, trusting: true)) { client in
                    for receipt in ["R1", "R2", "R3"] {
                        let verification = try await client.verify(receipt: receipt, logger: Logger(label: "test"))
                        guard case .answered(let response) = verification.result else {
                            Issue.record("no answer through the tunnel: \(verification.result)")
                            return
                        }
                        #expect(response.status == .valid)
                    }
                }
                #expect(proxy.recorded.tunnels == ["localhost:\(port)"])
            }
        }
    }

    /// A proxy that will not open the tunnel fails the row as a transport failure that says what
    /// to check, naming the proxy by host and port only.
    @Test(arguments: [
        ("407 Proxy Authentication Required", true, "the proxy 127.0.0.1:{port} refused the credentials in its URL (407 Proxy Authentication Required); check the user and password in HTTPS_PROXY / HTTP_PROXY"),
        ("407 Proxy Authentication Required", false, "the proxy 127.0.0.1:{port} requires credentials (407 Proxy Authentication Required); put them in its URL: http://USER:PASSWORD@HOST:PORT"),
        ("401 Unauthorized", true, "the proxy 127.0.0.1:{port} refused the credentials in its URL (401 Unauthorized); check the user and password in HTTPS_PROXY / HTTP_PROXY"),
        ("403 Forbidden", false, "the proxy 127.0.0.1:{port} refused CONNECT localhost:443: 403 Forbidden; is the host allowed through it (or should NO_PROXY list it)?"),
    ])
    func aRefusedTunnelSaysWhatToCheck(status: String, withCredentials: Bool, message: String) async throws {
        let proxy = ConnectProxy(refusing: status)
        try await proxy.withRunning { proxyPort in
            let configuration = KeepAliveHTTPClient.Configuration(
                connectTimeout: .seconds(30),
                proxy: ProxyConfiguration(https: .init(host: "127.0.0.1", port: proxyPort, user: withCredentials ? "u" : nil, password: withCredentials ? "hunter2" : nil)))
            try await VerifyReceiptClient.withClient(Self.configuration(port: 443), http: configuration) { client in
                let verification = try await client.verify(receipt: "R1", logger: Logger(label: "test"))
                guard case .failed(let failure) = verification.result else {
                    Issue.record("a refused tunnel must fail the row")
                    return
                }
                #expect(failure.reason == .transport)
                #expect(failure.detail == "Production connection failed: could not connect: " + message.replacingOccurrences(of: "{port}", with: "\(proxyPort)"))
                #expect(!failure.detail.contains("hunter2"))
            }
            #expect(proxy.recorded.refused == 1)
        }
    }

    /// The proxy cannot stand in for the server: a certificate the client does not trust fails
    /// the handshake through the tunnel, as it would directly.
    @Test func anUntrustedCertificateThroughTheTunnelIsATLSFailure() async throws {
        try await KeepAliveTLSTests().withTLSServer { port in
            let proxy = ConnectProxy()
            try await proxy.withRunning { proxyPort in
                try await VerifyReceiptClient.withClient(Self.configuration(port: port), http: try Self.http(proxyPort: proxyPort, trusting: false)) { client in
                    let verification = try await client.verify(receipt: "R1", logger: Logger(label: "test"))
                    guard case .failed(let failure) = verification.result else {
                        Issue.record("an untrusted certificate must fail through the tunnel too")
                        return
                    }
                    #expect(failure.reason == .transport)
                    #expect(failure.detail.contains("TLS"), "\(failure.detail)")
                }
                #expect(proxy.recorded.tunnels == ["localhost:\(port)"])
            }
        }
    }
}
