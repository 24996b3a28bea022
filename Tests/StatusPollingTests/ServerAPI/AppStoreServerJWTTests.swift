import Crypto
import Foundation
import PollingDemo
import Testing
@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The bearer token: header, claims, lifetime, reuse, and a signature that a verifier nobody
/// here wrote (openssl) accepts.
@Suite struct AppStoreServerJWTTests {
    static let pem = P256.Signing.PrivateKey().pemRepresentation
    static let credentials = try! ServerAPICredentials(
        issuerID: "57246542-96fe-1a63-e053-0824d011072a", keyID: "ABCDEFGHIJ", key: InAppPurchaseKey(pem: pem), bundleID: "com.example.premium")

    static func parts(_ token: String) throws -> (header: [String: Any], claims: [String: Any], signature: Data, input: String) {
        let pieces = token.split(separator: ".").map(String.init)
        try #require(pieces.count == 3)
        let headerData = try #require(Base64URL.decode(pieces[0]))
        let claimsData = try #require(Base64URL.decode(pieces[1]))
        let header = try #require(try JSONSerialization.jsonObject(with: headerData) as? [String: Any])
        let claims = try #require(try JSONSerialization.jsonObject(with: claimsData) as? [String: Any])
        return (header, claims, try #require(Base64URL.decode(pieces[2])), pieces[0] + "." + pieces[1])
    }

    @Test func headerAndClaimsAreApples() throws {
        let token = try AppStoreServerJWT.make(Self.credentials, issuedAt: Date(timeIntervalSince1970: 1_790_000_000.7), lifetime: .seconds(1800))
        let (header, claims, signature, _) = try Self.parts(token)
        #expect(header.count == 3)
        #expect(header["alg"] as? String == "ES256")
        #expect(header["kid"] as? String == "ABCDEFGHIJ")
        #expect(header["typ"] as? String == "JWT")
        #expect(claims.count == 5)
        #expect(claims["iss"] as? String == "57246542-96fe-1a63-e053-0824d011072a")
        #expect(claims["iat"] as? Int == 1_790_000_000)
        #expect(claims["exp"] as? Int == 1_790_001_800)
        #expect(claims["aud"] as? String == "appstoreconnect-v1")
        #expect(claims["bid"] as? String == "com.example.premium")
        #expect(signature.count == 64)
    }

    @Test func lifetimeIsCutToAnHour() throws {
        let token = try AppStoreServerJWT.make(Self.credentials, issuedAt: Date(timeIntervalSince1970: 1_790_000_000), lifetime: .seconds(7200))
        let claims = try Self.parts(token).claims
        #expect(claims["exp"] as? Int == 1_790_003_600)
    }

    /// The raw r‖s signature, turned into DER, verifies with openssl against the public key.
    @Test func opensslVerifiesTheSignature() async throws {
        let token = try AppStoreServerJWT.make(Self.credentials, issuedAt: Date(), lifetime: .seconds(600))
        let (_, _, raw, input) = try Self.parts(token)
        let der = try P256.Signing.ECDSASignature(rawRepresentation: raw).derRepresentation
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("jwt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("public.pem")
        try Self.credentials.key.publicKeyPEM.write(to: key, atomically: true, encoding: .utf8)
        try der.write(to: directory.appendingPathComponent("signature.der"))
        try Data(input.utf8).write(to: directory.appendingPathComponent("input"))
        #expect(try await Self.openssl(directory, "input") == "Verified OK")
        // A changed claim no longer verifies: the check can fail.
        try Data((input + "x").utf8).write(to: directory.appendingPathComponent("changed"))
        #expect(try await Self.openssl(directory, "changed") == "Verification failure")
    }

    static func openssl(_ directory: URL, _ input: String) async throws -> String {
        let arguments = ["openssl", "dgst", "-sha256", "-verify", "public.pem", "-signature", "signature.der", input]
        let (_, output) = try await ChildProcess.run("/usr/bin/env", arguments, in: directory, environment: ProcessInfo.processInfo.environment)
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func aTokenIsReusedUntilShortlyBeforeItExpires() throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_790_000_000))
        let bearer = BearerToken(Self.credentials, lifetime: .seconds(1800), renewalMargin: .seconds(300), now: { clock.now })
        let first = try bearer.token()
        clock.advance(1499)
        #expect(try bearer.token() == first)
        clock.advance(1)  // 300 s left: renewed
        let second = try bearer.token()
        #expect(second != first)
        #expect(try Self.parts(second).claims["iat"] as? Int == 1_790_001_500)
        #expect(try bearer.authorization() == "Bearer " + second)
    }

    @Test func theKeyIsReadAndNeverPrinted() throws {
        let key = try InAppPurchaseKey(pem: Self.pem)
        #expect("\(key)" == "<redacted>")
        #expect(String(reflecting: key) == "<redacted>")
        #expect(throws: InAppPurchaseKeyError.notPEM) { try InAppPurchaseKey(pem: "MIGTAgEAMBMGByqGSM49") }
        let p384 = P384.Signing.PrivateKey().pemRepresentation
        #expect(throws: InAppPurchaseKeyError.notP256) { try InAppPurchaseKey(pem: p384) }
    }
}

/// A clock the test moves.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date
    init(_ start: Date) { current = start }
    var now: Date { lock.withLock { current } }
    func advance(_ seconds: TimeInterval) { lock.withLock { current = current.addingTimeInterval(seconds) } }
}
