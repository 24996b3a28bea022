import Foundation
import Hummingbird
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// https through the lean client, against a real TLS server on loopback: Apple's endpoints are
/// https, so the handshake, SNI and certificate verification must work, and an untrusted
/// certificate must fail. The certificate is a self-signed test fixture for localhost only.
@Suite struct KeepAliveTLSTests {
    static let valid = AppleJSON.valid(transactions: [AppleJSON.Transaction()], renewals: [AppleJSON.Renewal()])

    /// A TLS server answering every POST with a valid verifyReceipt answer; `body` gets its port.
    func withTLSServer<T: Sendable>(_ body: (Int) async throws -> T) async throws -> T {
        let certificate = try NIOSSLCertificate(bytes: Array(try Fixture.data("localhost-cert.pem")), format: .pem)
        let key = try NIOSSLPrivateKey(bytes: Array(try Fixture.data("localhost-key.pem")), format: .pem)
        let router = Router()
        router.post("verifyReceipt") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: Self.valid)))
        }
        let tls = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
        return try await withLoopbackServer(router, server: try .tls(.http1(), tlsConfiguration: tls), body)
    }

    /// One attempt, with a timeout that never fires: a handshake on a busy machine must end in its
    /// answer or its TLS failure, never in a timeout.
    func configuration(port: Int) -> VerifyReceiptConfiguration {
        let url = "https://localhost:\(port)/verifyReceipt"
        return VerifyReceiptConfiguration(
            productionURL: url, sandboxURL: url, sharedSecret: SharedSecret("s"), requestTimeout: VerifyReceiptTesting.patientTimeout,
            retry: RetryPolicy(maxAttempts: 1))
    }

    @Test func httpsWithATrustedCertificateAnswers() async throws {
        try await withTLSServer { port in
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(try Fixture.data("localhost-cert.pem")), format: .pem)])
            try await VerifyReceiptClient.withClient(configuration(port: port), http: .init(connectTimeout: VerifyReceiptTesting.http.connectTimeout, tls: tls)) { client in
                for receipt in ["R1", "R2", "R3"] {
                    let verification = try await client.verify(receipt: receipt, logger: Logger(label: "test"))
                    guard case .answered(let response) = verification.result else {
                        Issue.record("no answer over https: \(verification.result)")
                        return
                    }
                    #expect(response.status == .valid)
                    #expect(response.receipt?.bundleID == AppleJSON.bundleID)
                }
            }
        }
    }

    @Test func anUntrustedCertificateIsATransportFailure() async throws {
        try await withTLSServer { port in
            try await VerifyReceiptClient.withClient(configuration(port: port), http: .init(connectTimeout: VerifyReceiptTesting.http.connectTimeout, tls: .makeClientConfiguration())) { client in
                let verification = try await client.verify(receipt: "R1", logger: Logger(label: "test"))
                guard case .failed(let failure) = verification.result else {
                    Issue.record("a self-signed certificate must not be trusted by default")
                    return
                }
                #expect(failure.reason == .transport)
                #expect(failure.detail.contains("TLS"), "\(failure.detail)")
                #expect(verification.stats.requests == 1)
            }
        }
    }
}
