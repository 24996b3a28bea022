import Crypto
import Foundation
import Testing
import X509

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The chain check on its own, with the chains of Apple's libraries' `ChainVerifierTest`: the chain is
/// anchored at the pinned roots, `x5c[1]` is the intermediate, and `x5c[2]` takes no part, as in
/// Apple's verifier.
@Suite struct AppleChainConformanceTests {
    typealias Apple = AppleConformance

    static func ms(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970 * 1000) }

    /// A genuine App Store signing chain (2025's "Prod ECC Mac App Store and iTunes Store Receipt
    /// Signing" under Apple's WWDR G6 intermediate) verifies under the pinned Apple Root CA - G3, the
    /// default root: Apple's marker extensions are where our policy looks for them.
    @Test func aGenuineAppleChainVerifiesUnderThePinnedRoot() async throws {
        let x5c = try JSONDecoder().decode([String].self, from: try Apple.data("certs/appleProductionChain.json"))
        let chain = try await SignedDataVerifier(bundleID: Apple.bundleID).verifiedChain(x5c)
        // The leaf's validity bounds the chain's: 2025-09-19T19:44:51Z … 2027-10-13T17:47:23Z.
        #expect(Self.ms(chain.validFrom) == 1_758_311_091_000)
        #expect(Self.ms(chain.validUntil) == 1_823_449_643_000)
        let leaf = try Certificate(derEncoded: Array(try #require(Data(base64Encoded: x5c[0]))))
        #expect(chain.leafKey.rawRepresentation == P256.Signing.PublicKey(leaf.publicKey)?.rawRepresentation)
        // Under Apple's test root instead, it leads nowhere.
        let underTestRoot = try Apple.verifier()
        do {
            _ = try await underTestRoot.verifiedChain(x5c)
            Issue.record("Apple's production chain verified under testCA.der")
        } catch {
            #expect(error.check == .untrustedRoot)
            #expect(error.detail.hasPrefix("the chain's root is not a trusted root (") && error.detail.contains("CN=Apple Root CA - G3"))
        }
    }

    /// Apple's `testValidChainInvalidIntermediateOIDWithoutOCSP`: its third certificate is a leaf, not
    /// a root at all, and the chain still fails for the intermediate's missing marker — the path was
    /// built to the pinned root, whatever the payload put third.
    @Test func theThirdCertificateTakesNoPart() async throws {
        let verifier = try Apple.verifier()
        let invalidIntermediate = try [Apple.x5cEntry("testLeaf.pem"), Apple.x5cEntry("testInvalidOIDIntermediate.pem"), Apple.x5cEntry("testInvalidIntermediateLeaf.pem")]
        await #expect(throws: SignedDataFailure(.intermediateOID, "the intermediate lacks extension 1.2.840.113635.100.6.2.1")) {
            try await verifier.verifiedChain(invalidIntermediate)
        }
        // A good leaf and intermediate verify whatever comes third, as in Apple's verifier.
        let good = try [Apple.x5cEntry("testLeaf.pem"), Apple.x5cEntry("testIntermediate.pem")]
        let withRoot = try await verifier.verifiedChain(good + [Apple.x5cEntry("testCA.der")])
        let withLeaf = try await verifier.verifiedChain(good + [Apple.x5cEntry("testLeaf.pem")])
        let withNothing = try await verifier.verifiedChain(good + ["not a certificate"])
        for chain in [withLeaf, withNothing] {
            #expect(chain.validFrom == withRoot.validFrom && chain.validUntil == withRoot.validUntil)
            #expect(chain.leafKey.rawRepresentation == withRoot.leafKey.rawRepresentation)
        }
        // The chain's validity spans its leaf, its intermediate and testCA.der, the root it reached:
        // 2023-01-05T21:31:34Z (the leaf) … 2033-01-01T21:31:05Z (the intermediate).
        #expect(Self.ms(withRoot.validFrom) == 1_672_954_294_000)
        #expect(Self.ms(withRoot.validUntil) == 1_988_227_865_000)
    }

    /// Apple's `testValidChainInvalidLeafOIDWithoutOCSP`, and a leaf that is not base64 DER.
    @Test func aLeafWithoutAppleMarkerOrNotACertificateIsRefused() async throws {
        let verifier = try Apple.verifier()
        let chain = try [Apple.x5cEntry("testInvalidOIDLeaf.pem"), Apple.x5cEntry("testIntermediate.pem"), Apple.x5cEntry("testCA.der")]
        await #expect(throws: SignedDataFailure(.leafOID, "the leaf lacks extension 1.2.840.113635.100.6.11.1")) {
            try await verifier.verifiedChain(chain)
        }
        await #expect(throws: SignedDataFailure(.certificate, "x5c[0] is not a base64 DER X.509 certificate")) {
            try await verifier.verifiedChain([Data("abc123".utf8).base64EncodedString()] + chain.dropFirst())
        }
    }
}
