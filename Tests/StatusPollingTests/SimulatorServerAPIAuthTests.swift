import AppStoreSimulator
import AsyncHTTPClient
import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

/// The Server API's bearer tokens (every wrong part is a 401 with an empty body; `iat` is
/// optional) and the key material a client gets in process: the .p8 PEM, the root certificate.
@Suite struct SimulatorServerAPIAuthTests {
    static let start: Int64 = 1_790_000_000_000
    static let population = Population(PopulationConfiguration(subscribers: 50, seed: 3, startMs: start))
    let simulator = AppStoreSimulator(population: Self.population, clockMs: Self.start)
    typealias Kit = ServerAPITestKit

    var someID: String { Self.population.subscribers.first { $0.environment == "Production" }!.chains[0].originalTransactionID }

    enum Spoiled: String, CaseIterable {
        case missing, notBearer, garbage, otherKey, wrongKeyID, wrongIssuer, wrongAudience, wrongBundle, expired
        case tooLong, noAlgorithm, hmacAlgorithm, noType, noExpiry, truncatedSignature
    }

    func authorization(_ spoiled: Spoiled) throws -> String? {
        let key = simulator.serverAPIKey
        let good = ["alg": "ES256", "kid": key.keyID, "typ": "JWT"]
        switch spoiled {
        case .missing: return nil
        case .notBearer: return "Basic " + (try Kit.token(simulator))
        case .garbage: return "Bearer not.a.token"
        case .otherKey: return "Bearer " + (try Kit.token(simulator, signingKeyPEM: P256.Signing.PrivateKey().pemRepresentation))
        case .wrongKeyID: return "Bearer " + (try Kit.token(simulator, header: ["alg": "ES256", "kid": "OTHERKEY01", "typ": "JWT"]))
        case .wrongIssuer: return "Bearer " + (try Kit.token(simulator, claims: ["iss": UUID().uuidString.lowercased()]))
        case .wrongAudience: return "Bearer " + (try Kit.token(simulator, claims: ["aud": "appstoreconnect-v2"]))
        case .wrongBundle: return "Bearer " + (try Kit.token(simulator, claims: ["bid": "com.example.other"]))
        case .expired: return "Bearer " + (try Kit.token(simulator, claims: ["iat": Int(Date().timeIntervalSince1970) - 7200], lifetime: -3600))
        case .tooLong: return "Bearer " + (try Kit.token(simulator, lifetime: 3700))
        case .noAlgorithm: return "Bearer " + (try Kit.token(simulator, header: ["kid": key.keyID, "typ": "JWT"]))
        case .hmacAlgorithm: return "Bearer " + (try Kit.token(simulator, header: ["alg": "HS256", "kid": key.keyID, "typ": "JWT"]))
        case .noType: return "Bearer " + (try Kit.token(simulator, header: ["alg": good["alg"]!, "kid": key.keyID]))
        case .noExpiry: return "Bearer " + (try Kit.token(simulator, claims: ["exp": nil]))
        case .truncatedSignature: return "Bearer " + String(try Kit.token(simulator).dropLast(4))
        }
    }

    @Test func everySpoiledTokenIsRefusedWithAnEmpty401() async throws {
        try await Kit.withServer(simulator) { endpoints, client in
            for spoiled in Spoiled.allCases {
                for path in ["/inApps/v1/subscriptions/", "/inApps/v2/history/"] {
                    var request = HTTPClientRequest(url: endpoints.serverAPIURL + path + someID)
                    if let value = try authorization(spoiled) { request.headers.add(name: "Authorization", value: value) }
                    let response = try await client.execute(request, timeout: .seconds(VerifyReceiptTesting.patientTimeout.components.seconds))
                    let body = try await response.body.collect(upTo: 1 << 16)
                    #expect(response.status.code == 401, "\(spoiled)")
                    #expect(body.readableBytes == 0, "\(spoiled)")
                }
            }
            #expect(simulator.statistics.outcomes["server_api_http_401"] == Spoiled.allCases.count * 2)
            #expect(simulator.statistics.serverAPIRequests == ["inApps/v1/subscriptions": Spoiled.allCases.count, "inApps/v2/history": Spoiled.allCases.count])
        }
    }

    @Test func aTokenWithoutIssuedAtIsAccepted() async throws {
        try await Kit.withServer(simulator) { endpoints, client in
            // Apple's Python library sends bid, iss, aud and exp (five minutes ahead), no iat.
            let withoutIat = try Kit.token(simulator, claims: ["iat": nil])
            let reply = try await Kit.get(client, endpoints.serverAPIURL + "/inApps/v1/subscriptions/" + someID, token: withoutIat)
            #expect(reply.status == 200)
            let withIat = try await Kit.get(client, endpoints.serverAPIURL + "/inApps/v2/history/" + someID, token: try Kit.token(simulator, lifetime: 3600))
            #expect(withIat.status == 200)
        }
    }

    @Test func keyMaterialIsWhatAppleHandsOut() throws {
        let key = simulator.serverAPIKey
        #expect(key.keyID == "SIMKEY0001")
        #expect(key.keyID.count == 10)
        #expect(UUID(uuidString: key.issuerID) != nil)
        #expect(key.issuerID == key.issuerID.lowercased())
        #expect(key.privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        #expect(key.privateKeyPEM.hasSuffix("-----END PRIVATE KEY-----"))
        #expect(try P256.Signing.PrivateKey(pemRepresentation: key.privateKeyPEM).publicKey.pemRepresentation == key.publicKeyPEM)
        #expect(Self.population.configuration.appAppleID == 1_234_567_890)
        // Two simulators: two keys and two roots.
        let other = AppStoreSimulator(population: Self.population)
        #expect(other.serverAPIKey.privateKeyPEM != key.privateKeyPEM)
        #expect(other.pki.rootCertificateDER != simulator.pki.rootCertificateDER)
    }

    @Test func theChainIsShapedLikeApples() throws {
        let pki = simulator.pki
        let root = try Certificate(derEncoded: pki.rootCertificateDER)
        #expect(root == pki.root)
        #expect(try Certificate(pemEncoded: pki.rootCertificatePEM) == root)
        #expect(pki.rootCertificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----"))
        #expect(pki.chainBase64.count == 3)
        #expect(pki.chainBase64[2] == Data(pki.rootCertificateDER).base64EncodedString())
        let (leaf, intermediate) = (pki.leaf, pki.intermediate)
        #expect(leaf.issuer == intermediate.subject)
        #expect(intermediate.issuer == root.subject)
        #expect(try root.extensions.basicConstraints == .isCertificateAuthority(maxPathLength: nil))
        #expect(try intermediate.extensions.basicConstraints == .isCertificateAuthority(maxPathLength: 0))
        #expect(try root.extensions.keyUsage?.keyCertSign == true)
        #expect(try intermediate.extensions.keyUsage?.keyCertSign == true)
        #expect(try leaf.extensions.keyUsage?.digitalSignature == true)
        #expect(try leaf.extensions.keyUsage?.keyCertSign == false)
        let intermediateMarker = try #require(intermediate.extensions[oid: [1, 2, 840, 113_635, 100, 6, 2, 1]])
        let leafMarker = try #require(leaf.extensions[oid: [1, 2, 840, 113_635, 100, 6, 11, 1]])
        #expect(!intermediateMarker.critical && !leafMarker.critical)
        #expect(Array(leafMarker.value) == [0x05, 0x00])
        // Wide validity: the simulated clock and the wall clock are both inside.
        let signedAt = Date(timeIntervalSince1970: Double(Self.start) / 1000)
        for certificate in [root, intermediate, leaf] {
            #expect(certificate.notValidBefore < min(signedAt, Date()).addingTimeInterval(-9 * 365 * 86_400))
            #expect(certificate.notValidAfter >= Date(timeIntervalSince1970: 4_102_444_800))
        }
    }

    @Test func aSignatureVerifiesOnlyAgainstItsOwnRoot() async throws {
        try await Kit.withServer(simulator) { endpoints, client in
            let reply = try await Kit.get(client, simulator, endpoints.serverAPIURL, "v2/history/\(someID)")
            let jws = try #require((reply.json["signedTransactions"] as? [String])?.first)
            _ = try await Kit.verified(jws, trusting: simulator.pki.rootCertificateDER)
            let stranger = AppStoreSimulator(population: Self.population)
            await #expect(throws: Kit.VerificationFailure.self) { try await Kit.verified(jws, trusting: stranger.pki.rootCertificateDER) }
            let header = try #require(Kit.fromBase64URL(jws.split(separator: ".")[0]))
            #expect(String(decoding: header, as: UTF8.self).hasPrefix(#"{"alg":"ES256","x5c":[""#))
        }
    }

    @Test func keyFilesAreWrittenWithTheKeyPrivate() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sim-keys-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = try ServerAPIKeyFiles.write(simulator, into: directory)
        #expect(files.privateKeyPath == directory + "/SubscriptionKey_SIMKEY0001.p8")
        #expect(files.rootPEMPath == directory + "/simulator-root.pem")
        #expect(files.rootDERPath == directory + "/simulator-root.der")
        let mode = try FileManager.default.attributesOfItem(atPath: files.privateKeyPath)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(FileManager.default.contents(atPath: files.privateKeyPath) == Data(simulator.serverAPIKey.privateKeyPEM.utf8))
        #expect(FileManager.default.contents(atPath: files.rootDERPath) == Data(simulator.pki.rootCertificateDER))
        #expect(FileManager.default.contents(atPath: files.rootPEMPath) == Data(simulator.pki.rootCertificatePEM.utf8))
        _ = try ServerAPIKeyFiles.write(simulator, into: directory)
        #expect(try FileManager.default.attributesOfItem(atPath: files.privateKeyPath)[.posixPermissions] as? Int == 0o600)
    }
}
