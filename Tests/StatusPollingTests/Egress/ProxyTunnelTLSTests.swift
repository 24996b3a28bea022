import Foundation
import Logging
import NIOSSL
import Testing

@testable import StatusPolling

/// https through a CONNECT tunnel: the client asks the proxy for `localhost:PORT`, then does TLS
/// with the real server through it — SNI and the certificate check are for `localhost`, not the
/// proxy — against a real TLS server on loopback (the localhost test certificate).
@Suite struct ProxyTunnelTLSTests {
    static func configuration(port: Int) -> VerifyReceiptConfiguration {
        let url = "https://localhost:\(port)/verifyReceipt"
        return VerifyReceiptConfiguration(
            productionURL: url, sandboxURL: url, sharedSecret: SharedSecret("s"), requestTimeout: .seconds(30), retry: RetryPolicy(maxAttempts: 1))
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
