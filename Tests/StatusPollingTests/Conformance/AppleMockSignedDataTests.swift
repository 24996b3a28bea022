import Foundation
import Testing
import X509

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Apple's own test vectors (`mock_signed_data`, the same bytes in its Python, Java and Swift
/// libraries), through our verifier configured as Apple's tests configure theirs: testCA.der the
/// only root, bundle `com.example`, appAppleId 1234, online checks off. Apple's tests then check
/// validity at the payload's `signedDate`, as ours always does; we have no online (OCSP) check.
@Suite struct AppleMockSignedDataTests {
    typealias Apple = AppleConformance

    /// Apple's `testNotification` is accepted though its third certificate is not testCA.der: it is
    /// another certificate of the same root (same name, same key, another serial and dates), and the
    /// chain is anchored at the pinned root, never at the certificate the payload brings.
    @Test func testNotificationVerifiesUnderTestCA() async throws {
        let jws = try Apple.text("mock_signed_data/testNotification")
        let notification = try await Apple.verifier().verifyNotification(jws, appAppleID: Apple.appAppleID)
        #expect(notification.notificationUUID == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
        #expect(notification.type == "TEST")
        #expect(notification.subtype == nil)
        #expect(notification.signedDateMs == 1_681_314_324_000)
        #expect(notification.environment == .sandbox)
        #expect(notification.status == nil && notification.transaction == nil && notification.renewal == nil && notification.answer == nil)
        // Apple's tests refuse it in a production verifier (INVALID_ENVIRONMENT). Ours takes both
        // environments and says which: a Sandbox notification never changes a Production row.
    }

    /// What makes `testNotification` a case at all: its `x5c[2]` is not testCA.der byte for byte,
    /// only the same name and key. A verifier that compared the bytes refused it.
    @Test func testNotificationCarriesAnotherEncodingOfTheRoot() throws {
        let header = try Apple.text("mock_signed_data/testNotification").split(separator: ".")[0]
        let x5c = try JSONDecoder().decode(JWSHeader.self, from: try #require(Base64URL.decode(header))).x5c ?? []
        #expect(x5c.count == 3)
        let carried = try Certificate(derEncoded: Array(try #require(Data(base64Encoded: x5c[2]))))
        let pinned = try Apple.testRoot()
        #expect(carried != pinned)
        #expect(carried.serialNumber != pinned.serialNumber)
        #expect(carried.subject == pinned.subject && carried.publicKey == pinned.publicKey)
    }

    @Test func wrongBundleIdIsRefusedForItsBundle() async throws {
        let jws = try Apple.text("mock_signed_data/wrongBundleId")
        // Apple's tests refuse it with INVALID_APP_IDENTIFIER; it has no signedDate, which ours
        // refuses too, but only after the app (so that the reason is the same as Apple's).
        await #expect(throws: SignedDataFailure(.bundleID, "the notification is for bundle com.example.wrong, expected com.example")) {
            try await Apple.verifier().verifyNotification(jws, appAppleID: Apple.appAppleID)
        }
        // Its bundle made right, what refuses it next is its missing environment (then its signedDate).
        await #expect(throws: SignedDataFailure(.environment, "the notification's environment is (none), not Production or Sandbox")) {
            try await Apple.verifier(bundleID: "com.example.wrong").verifyNotification(jws, appAppleID: Apple.appAppleID)
        }
    }

    /// Its header names the chain `x5cwrong`: Apple's tests refuse it (VERIFICATION_FAILURE, or
    /// INVALID_JWT_FORMAT in the Swift library); ours says which check.
    @Test func missingX5CHeaderClaimIsRefused() async throws {
        let jws = try Apple.text("mock_signed_data/missingX5CHeaderClaim")
        await #expect(throws: SignedDataFailure(.missingX5C, "the header has no x5c certificate chain")) {
            try await Apple.verifier().verifyNotification(jws, appAppleID: Apple.appAppleID)
        }
    }

    @Test func transactionInfoAndRenewalInfoDecodeExactly() async throws {
        let verifier = try Apple.verifier()
        let transaction = try await verifier.verifyTransaction(try Apple.text("mock_signed_data/transactionInfo"), environment: .sandbox)
        // The whole payload is {"environment":"Sandbox","bundleId":"com.example","signedDate":1672956154000}.
        var expected = JWSTransactionPayload()
        expected.environment = "Sandbox"
        expected.bundleId = "com.example"
        expected.signedDate = 1_672_956_154_000
        #expect(transaction == expected)
        // renewalInfo is signed by another chain of testCA (whose x5c[2] is testCA.der itself).
        let renewal = try await verifier.verifyRenewalInfo(try Apple.text("mock_signed_data/renewalInfo"), of: transaction)
        var expectedRenewal = JWSRenewalInfoPayload()
        expectedRenewal.environment = "Sandbox"
        expectedRenewal.signedDate = 1_672_956_154_000
        #expect(renewal == expectedRenewal)
    }

    /// Apple's `testWrongBundleIdForTransaction`, and a production verifier for a Sandbox transaction.
    @Test func transactionInfoForAnotherAppOrEnvironmentIsRefused() async throws {
        let jws = try Apple.text("mock_signed_data/transactionInfo")
        await #expect(throws: SignedDataFailure(.bundleID, "the transaction is for bundle com.example, expected com.example.x")) {
            try await Apple.verifier(bundleID: "com.example.x").verifyTransaction(jws, environment: .sandbox)
        }
        await #expect(throws: SignedDataFailure(.environment, "the transaction is for environment Sandbox, asked Production")) {
            try await Apple.verifier().verifyTransaction(jws, environment: .production)
        }
    }

    /// Apple's test chain under the real Apple Root CA - G3 (Apple's `testChainDifferentThanRootCertificate`).
    @Test func appleTestChainIsRefusedUnderThePinnedAppleRoot() async throws {
        let jws = try Apple.text("mock_signed_data/testNotification")
        await #expect(throws: SignedDataFailure(.untrustedRoot, "the chain's root is not a trusted root (L=Cupertino,ST=California,C=US)")) {
            try await Apple.verifier(roots: AppleRootCertificate.defaultRoots).verifyNotification(jws, appAppleID: Apple.appAppleID)
        }
    }

    /// Apple's malformed-JWS tests, and `legacyTransaction` (an old-style receipt, not a JWS at all).
    @Test func malformedAndLegacyDataAreRefusedAsMalformed() async throws {
        let verifier = try Apple.verifier()
        for jws in ["a.b.c.d", "a.b.c", try Apple.text("mock_signed_data/legacyTransaction")] {
            await #expect(throws: SignedDataFailure.self) { try await verifier.verifyNotification(jws, appAppleID: nil) }
            do {
                _ = try await verifier.verifyTransaction(jws, environment: .sandbox)
                Issue.record("\(jws) verified")
            } catch {
                #expect(error.check == .malformed, "\(jws)")
            }
        }
    }
}
