import AppStoreSimulator
import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import SwiftASN1
import Testing
import X509

/// The client side of the simulator's App Store Server API, written in the tests from the
/// standards rather than from the simulator's code: bearer tokens signed with the exported PEM,
/// GETs over loopback, and JWS verification against the exported root with swift-certificates
/// (chain, Apple's marker OIDs) and swift-crypto (the r‖s signature).
enum ServerAPITestKit {
    struct Reply {
        var status: Int
        var headers: [String: String]
        var body: String
        var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any]) ?? [:] }
    }

    struct VerificationFailure: Error, CustomStringConvertible {
        var description: String
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func fromBase64URL(_ text: some StringProtocol) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }

    /// A bearer token as Apple's libraries make one; every part can be spoiled for the 401 tests.
    static func token(
        _ simulator: AppStoreSimulator, header: [String: Any]? = nil, claims overrides: [String: Any?] = [:],
        lifetime: TimeInterval = 300, signingKeyPEM: String? = nil
    ) throws -> String {
        let key = simulator.serverAPIKey
        let now = Date().timeIntervalSince1970
        var claims: [String: Any] = [
            "iss": key.issuerID, "aud": "appstoreconnect-v1", "bid": simulator.population.configuration.bundleID,
            "iat": Int(now), "exp": Int(now + lifetime),
        ]
        for (name, value) in overrides { claims[name] = value }
        let head = header ?? ["alg": "ES256", "kid": key.keyID, "typ": "JWT"]
        let input = base64URL(try JSONSerialization.data(withJSONObject: head, options: .sortedKeys)) + "."
            + base64URL(try JSONSerialization.data(withJSONObject: claims, options: .sortedKeys))
        let privateKey = try P256.Signing.PrivateKey(pemRepresentation: signingKeyPEM ?? key.privateKeyPEM)
        return input + "." + base64URL(try privateKey.signature(for: Data(input.utf8)).rawRepresentation)
    }

    static func get(_ client: HTTPClient, _ url: String, token: String?) async throws -> Reply {
        var request = HTTPClientRequest(url: url)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        let response = try await client.execute(request, timeout: .seconds(VerifyReceiptTesting.patientTimeout.components.seconds))
        let body = String(buffer: try await response.body.collect(upTo: 8 << 20))
        var headers: [String: String] = [:]
        for header in response.headers { headers[header.name.lowercased()] = header.value }
        return Reply(status: Int(response.status.code), headers: headers, body: body)
    }

    /// GET `{base}/inApps/…/{id}` with a fresh valid token.
    static func get(_ client: HTTPClient, _ simulator: AppStoreSimulator, _ base: String, _ path: String) async throws -> Reply {
        try await get(client, base + "/inApps/" + path, token: token(simulator))
    }

    /// Starts `simulator` on loopback with one HTTP client, and stops both on every path.
    static func withServer<T: Sendable>(_ simulator: AppStoreSimulator, _ body: (SimulatorServer.Endpoints, HTTPClient) async throws -> T) async throws -> T {
        try await SimulatorServer.withRunning(simulator) { endpoints in
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            do {
                let result = try await body(endpoints, client)
                try await client.shutdown()
                return result
            } catch {
                try? await client.shutdown()
                throw error
            }
        }
    }

    /// The payload of a compact JWS, without verifying it.
    static func payload(_ jws: String) throws -> [String: Any] {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let data = fromBase64URL(parts[1]), let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw VerificationFailure(description: "not a compact JWS")
        }
        return object
    }

    /// Verifies `jws` as Apple's libraries do — ES256, an x5c chain of three that ends at
    /// `rootDER` and carries Apple's marker OIDs, the leaf's signature — and returns its payload.
    static func verified(_ jws: String, trusting rootDER: [UInt8]) async throws -> [String: Any] {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = fromBase64URL(parts[0]),
            let header = try JSONSerialization.jsonObject(with: headerData) as? [String: Any]
        else { throw VerificationFailure(description: "not a compact JWS") }
        guard header["alg"] as? String == "ES256", let x5c = header["x5c"] as? [String], x5c.count == 3 else {
            throw VerificationFailure(description: "header \(header)")
        }
        let certificates = try x5c.map { text -> Certificate in
            guard let der = Data(base64Encoded: text) else { throw VerificationFailure(description: "x5c is not standard base64") }
            return try Certificate(derEncoded: Array(der))
        }
        var verifier = Verifier(rootCertificates: CertificateStore([try Certificate(derEncoded: rootDER)])) { RFC5280Policy() }
        guard case .validCertificate(let chain) = await verifier.validate(leaf: certificates[0], intermediates: CertificateStore([certificates[1]])) else {
            throw VerificationFailure(description: "the chain does not end at the trusted root")
        }
        guard Array(chain).count == 3 else { throw VerificationFailure(description: "chain of \(Array(chain).count)") }
        guard certificates[0].extensions[oid: [1, 2, 840, 113_635, 100, 6, 11, 1]] != nil,
            certificates[1].extensions[oid: [1, 2, 840, 113_635, 100, 6, 2, 1]] != nil
        else { throw VerificationFailure(description: "Apple's marker OIDs are missing") }
        guard let key = P256.Signing.PublicKey(certificates[0].publicKey), let raw = fromBase64URL(parts[2]), raw.count == 64,
            key.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: raw), for: Data("\(parts[0]).\(parts[1])".utf8))
        else { throw VerificationFailure(description: "bad signature") }
        return try payload(jws)
    }

    /// A JSON number as Int64, whichever type JSONSerialization chose for it on this platform.
    static func int64(_ value: Any?) -> Int64? {
        if let value = value as? Int { return Int64(value) }
        if let value = value as? Int64 { return value }
        return (value as? NSNumber)?.int64Value
    }

    /// `object` as canonical JSON text (sorted keys), to compare two payloads exactly.
    static func canonical(_ object: [String: Any]) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data(), as: UTF8.self)
    }
}
