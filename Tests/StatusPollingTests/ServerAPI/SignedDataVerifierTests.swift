import Foundation
import Testing
import X509
@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Every check a signed payload goes through, each failing on its own.
@Suite struct SignedDataVerifierTests {
    func failure(_ jws: String, pki: TestPKI, roots: [Certificate]? = nil, environment: AppStoreEnvironment = .production) async -> SignedDataFailure? {
        let verifier = SignedDataVerifier(trustedRoots: roots ?? [pki.root], bundleID: SignedPayloads.bundle)
        do {
            _ = try await verifier.verifyTransaction(jws, environment: environment)
            return nil
        } catch {
            return error
        }
    }

    @Test func aGoodPayloadVerifiesAndDecodes() async throws {
        let pki = try TestPKI()
        let verifier = SignedDataVerifier(trustedRoots: [pki.root], bundleID: SignedPayloads.bundle)
        let transaction = try await verifier.verifyTransaction(pki.sign(SignedPayloads.transaction(["revocationDate": 1_789_500_000_000, "isUpgraded": true])), environment: .production)
        #expect(transaction.transactionId == "1000000123")
        #expect(transaction.originalTransactionId == "1000000100")
        #expect(transaction.expiresDate == 1_791_600_000_000)
        #expect(transaction.revocationDate == 1_789_500_000_000)
        #expect(transaction.isUpgraded == true)
        let renewal = try #require(try await verifier.verifyRenewalInfo(pki.sign(SignedPayloads.renewal(["expirationIntent": 2, "isInBillingRetryPeriod": true, "gracePeriodExpiresDate": 1_792_000_000_000])), of: transaction))
        #expect(renewal.autoRenewProductId == "com.example.premium.yearly")
        #expect(renewal.autoRenewStatus == 1)
        #expect(renewal.expirationIntent == 2)
        #expect(renewal.isInBillingRetryPeriod == true)
        #expect(renewal.gracePeriodExpiresDate == 1_792_000_000_000)
    }

    @Test func missingX5C() async throws {
        let pki = try TestPKI()
        #expect(await failure(pki.sign(SignedPayloads.transaction(), omitX5C: true), pki: pki)?.check == .missingX5C)
    }

    @Test func twoCertificates() async throws {
        let pki = try TestPKI()
        let failure = await failure(pki.sign(SignedPayloads.transaction(), x5c: Array(pki.x5c.prefix(2))), pki: pki)
        #expect(failure == SignedDataFailure(.chainLength, "x5c holds 2 certificates, not 3"))
    }

    @Test func leafWithoutAppleMarker() async throws {
        let pki = try TestPKI(.init(leafMarker: false))
        let failure = await failure(pki.sign(SignedPayloads.transaction()), pki: pki)
        #expect(failure == SignedDataFailure(.leafOID, "the leaf lacks extension 1.2.840.113635.100.6.11.1"))
    }

    @Test func intermediateWithoutAppleMarker() async throws {
        let pki = try TestPKI(.init(intermediateMarker: false))
        let failure = await failure(pki.sign(SignedPayloads.transaction()), pki: pki)
        #expect(failure == SignedDataFailure(.intermediateOID, "the intermediate lacks extension 1.2.840.113635.100.6.2.1"))
    }

    /// A chain to a root nobody configured fails, and so does the default: the pinned Apple root.
    @Test func untrustedRoot() async throws {
        let pki = try TestPKI()
        let other = try TestPKI(.init(rootName: "Another Root"))
        #expect(await failure(pki.sign(SignedPayloads.transaction()), pki: pki, roots: [other.root])?.check == .untrustedRoot)
        #expect(await failure(pki.sign(SignedPayloads.transaction()), pki: pki, roots: AppleRootCertificate.defaultRoots)?.check == .untrustedRoot)
    }

    /// The third certificate is the trusted root itself, but the intermediate was issued by another
    /// root: no path, though the payload names the trusted root (Apple's Python verifier accepts a
    /// foreign third certificate; this one anchors on the pinned root).
    @Test func aTrustedThirdCertificateDoesNotMakeAForeignChainTrusted() async throws {
        let pki = try TestPKI()
        let foreign = try TestPKI(.init(rootName: "Test Root CA"))
        let jws = foreign.sign(SignedPayloads.transaction(), x5c: [TestPKI.base64DER(foreign.leaf), TestPKI.base64DER(foreign.intermediate), TestPKI.base64DER(pki.root)])
        #expect(await failure(jws, pki: pki)?.check == .untrustedRoot)
    }

    @Test func tamperedPayload() async throws {
        let pki = try TestPKI()
        let parts = pki.sign(SignedPayloads.transaction()).split(separator: ".").map(String.init)
        let forged = TestPKI.base64URL(try JSONSerialization.data(withJSONObject: SignedPayloads.transaction(["expiresDate": 4_000_000_000_000]), options: [.sortedKeys]))
        let failure = await failure("\(parts[0]).\(forged).\(parts[2])", pki: pki)
        #expect(failure == SignedDataFailure(.signature, "the ES256 signature does not match the header and payload"))
    }

    @Test func wrongBundle() async throws {
        let pki = try TestPKI()
        let failure = await failure(pki.sign(SignedPayloads.transaction(["bundleId": "com.example.other"])), pki: pki)
        #expect(failure == SignedDataFailure(.bundleID, "the transaction is for bundle com.example.other, expected com.example.premium"))
    }

    @Test func wrongEnvironment() async throws {
        let pki = try TestPKI()
        let failure = await failure(pki.sign(SignedPayloads.transaction(["environment": "Sandbox"])), pki: pki)
        #expect(failure == SignedDataFailure(.environment, "the transaction is for environment Sandbox, asked Production"))
        #expect(await self.failure(pki.sign(SignedPayloads.transaction(["environment": "Sandbox"])), pki: pki, environment: .sandbox) == nil)
    }

    @Test func leafExpiredAtSignedDate() async throws {
        let expiredBefore = Date(timeIntervalSince1970: Double(SignedPayloads.signedDate) / 1000 - 1)
        let pki = try TestPKI(.init(leafValidity: Date(timeIntervalSince1970: 1_700_000_000)...expiredBefore))
        #expect(await failure(pki.sign(SignedPayloads.transaction()), pki: pki)?.check == .validity)
        // The same chain verifies a payload signed while the leaf was valid.
        #expect(await failure(pki.sign(SignedPayloads.transaction(["signedDate": 1_750_000_000_000])), pki: pki) == nil)
    }

    @Test func otherAlgorithmsAndShapesAreRefused() async throws {
        let pki = try TestPKI()
        #expect(await failure(pki.sign(SignedPayloads.transaction(), alg: "none"), pki: pki)?.check == .algorithm)
        #expect(await failure("not.a-jws", pki: pki)?.check == .malformed)
        #expect(await failure(pki.sign(SignedPayloads.transaction()) + ".x", pki: pki)?.check == .malformed)
        var unsigned = SignedPayloads.transaction()
        unsigned["signedDate"] = nil
        #expect(await failure(pki.sign(unsigned), pki: pki)?.check == .payload)
    }

    @Test func renewalInfoOnlyBesideItsOwnTransaction() async throws {
        let pki = try TestPKI()
        let verifier = SignedDataVerifier(trustedRoots: [pki.root], bundleID: SignedPayloads.bundle)
        let transaction = try await verifier.verifyTransaction(pki.sign(SignedPayloads.transaction()), environment: .production)
        await #expect(throws: SignedDataFailure.self) {
            try await verifier.verifyRenewalInfo(pki.sign(SignedPayloads.renewal(["originalTransactionId": "999"])), of: transaction)
        }
        await #expect(throws: SignedDataFailure.self) {
            try await verifier.verifyRenewalInfo(pki.sign(SignedPayloads.renewal(["environment": "Sandbox"])), of: transaction)
        }
    }

    /// Genuine Sandbox answers carry renewal info Apple signed as JSON `null`: once its signature
    /// holds it is no renewal info (nil), and so is `{}`; the same text under a forged signature is
    /// still refused for its signature.
    @Test func renewalInfoSignedAsNullOrEmptyIsNoRenewalInfo() async throws {
        let pki = try TestPKI()
        let verifier = SignedDataVerifier(trustedRoots: [pki.root], bundleID: SignedPayloads.bundle)
        let transaction = try await verifier.verifyTransaction(pki.sign(SignedPayloads.transaction()), environment: .production)
        for text in ["null", "{}", " null\n", "{ }"] {
            #expect(try await verifier.verifyRenewalInfo(pki.sign(text: text), of: transaction) == nil, "\(text)")
        }
        let parts = pki.sign(text: "null").split(separator: ".").map(String.init)
        let forged = "\(parts[0]).\(parts[1]).\(pki.sign(text: "{}").split(separator: ".")[2])"
        await #expect(throws: SignedDataFailure(.signature, "the ES256 signature does not match the header and payload")) {
            try await verifier.verifyRenewalInfo(forged, of: transaction)
        }
        // Under another root, `null` is as untrusted as anything else.
        let stranger = try TestPKI(.init(rootName: "Another Root"))
        await #expect(throws: SignedDataFailure.self) { try await verifier.verifyRenewalInfo(stranger.sign(text: "null"), of: transaction) }
    }

    /// A payload Apple signed whose shape is not Apple's is refused for its shape, not its trust;
    /// the same payload under a forged signature is refused for the signature.
    @Test func aPayloadOfTheWrongShapeIsNotAnUntrustedSignature() async throws {
        let pki = try TestPKI()
        let wrong = pki.sign(SignedPayloads.transaction(["expiresDate": "next month"]))
        let failure = try #require(await failure(wrong, pki: pki))
        #expect(failure == SignedDataFailure(.payloadShape, "the signature holds, but the payload is not JSON of the shape Apple documents for JWSTransactionPayload"))
        #expect(!failure.isUntrusted)
        #expect(VerificationFailure.signedData(failure) == VerificationFailure(
            .unexpectedResponse, "unexpected_response (payload_shape): the signature holds, but the payload is not JSON of the shape Apple documents for JWSTransactionPayload",
            upstreamStatus: .serverAPI(200)))
        let parts = wrong.split(separator: ".").map(String.init)
        let forged = "\(parts[0]).\(parts[1]).\(pki.sign(SignedPayloads.transaction()).split(separator: ".")[2])"
        #expect(await self.failure(forged, pki: pki)?.check == .signature)
        #expect(await self.failure(pki.sign(text: "null"), pki: pki)?.check == .payloadShape)
    }

    @Test func base64URLRoundTripsAndRefusesOtherAlphabets() {
        for length in 0..<70 {
            let bytes = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 251) })
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(text) == bytes)
        }
        #expect(Base64URL.decode("-_8") == Data([0xFB, 0xFF]))
        #expect(Base64URL.decode("+_8") == nil)
        #expect(Base64URL.decode("abcde") == nil)
    }

    /// A pinned root whose bytes were damaged or swapped is an error that names it, never a crash
    /// (the embedded root loads through the same function).
    @Test func aDamagedPinnedRootIsAnErrorNotACrash() throws {
        let fingerprint = AppleRootCertificate.g3Fingerprint
        #expect(throws: AppleRootError.notBase64) { try AppleRootCertificate.load(base64: "", fingerprint: fingerprint) }
        var der = Array(try #require(Data(base64Encoded: AppleRootCertificate.g3Base64)))
        der[200] ^= 0xFF
        let altered = AppleRootCertificate.fingerprint(der)
        #expect(altered != fingerprint)
        #expect(throws: AppleRootError.fingerprintMismatch(found: altered)) {
            try AppleRootCertificate.load(base64: Data(der).base64EncodedString(), fingerprint: fingerprint)
        }
        let notDER: [UInt8] = Array("not a certificate".utf8)
        let unparsed = #expect(throws: AppleRootError.self) {
            try AppleRootCertificate.load(base64: Data(notDER).base64EncodedString(), fingerprint: AppleRootCertificate.fingerprint(notDER))
        }
        guard case .notACertificate? = unparsed else { Issue.record("expected notACertificate, got \(String(describing: unparsed))"); return }
        #expect(try AppleRootCertificate.load(base64: AppleRootCertificate.g3Base64, fingerprint: fingerprint) == AppleRootCertificate.g3.get())
    }

    @Test func thePinnedRootIsAppleRootCAG3() throws {
        #expect(try AppleRootCertificate.g3.get().subject.description.contains("CN=Apple Root CA - G3"))
        #expect(AppleRootCertificate.fingerprint(Array(Data(base64Encoded: AppleRootCertificate.g3Base64)!)) == AppleRootCertificate.g3Fingerprint)
    }
}
