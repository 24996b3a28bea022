import Crypto
import EntitlementCore
import Foundation
import Synchronization
import X509

/// Verifies the JWS the App Store Server API signs (`signedTransactionInfo`, `signedRenewalInfo`)
/// before a byte of it is used: an `x5c` chain of exactly three whose leaf and intermediate lead to a
/// pinned root, Apple's two marker extensions, every certificate valid at the payload's `signedDate`,
/// the ES256 signature, then the app and the environment. Verification is never skipped, for any
/// environment.
///
/// The chain is anchored at the configured roots, as Apple's own verifier anchors it: the roots are
/// the root store, `x5c[1]` is the only intermediate offered, and the third certificate the payload
/// carries is never trusted for itself (Apple's test vectors carry another encoding of their root
/// there). A chain, once verified, is remembered (by its header) with the time span in which the leaf,
/// the intermediate and the root it reached are all valid, so a night's thousands of payloads signed
/// by one leaf cost one signature check each.
public final class SignedDataVerifier: Sendable {
    /// Roots a chain may end in: Apple Root CA - G3 unless the run was given test roots.
    public let trustedRoots: [Certificate]
    /// The app every payload must be for.
    public let bundleID: String

    /// A verified chain: the leaf's key, and when all three certificates are valid.
    /// `@unchecked Sendable`: the public key is immutable, but swift-crypto does not say so on Linux.
    struct VerifiedChain: @unchecked Sendable {
        var leafKey: P256.Signing.PublicKey
        var validFrom: Date
        var validUntil: Date
    }

    /// Verified chains by the header text that carried them.
    private let verifiedChains = Mutex<[String: VerifiedChain]>([:])
    private static let maxRememberedChains = 64

    public init(trustedRoots: [Certificate] = AppleRootCertificate.defaultRoots, bundleID: String) {
        self.trustedRoots = trustedRoots
        self.bundleID = bundleID
    }

    /// Verifies a `signedTransactionInfo` for `environment` and decodes it.
    public func verifyTransaction(_ jws: String, environment: AppStoreEnvironment) async throws(SignedDataFailure) -> JWSTransactionPayload {
        try await verified(jws) { (payload: JWSTransactionPayload) throws(SignedDataFailure) in
            guard payload.bundleId == bundleID else {
                throw SignedDataFailure(.bundleID, "the transaction is for bundle \(payload.bundleId ?? "(none)"), expected \(bundleID)")
            }
            guard payload.environment == environment.rawValue else {
                throw SignedDataFailure(.environment, "the transaction is for environment \(payload.environment ?? "(none)"), asked \(environment.rawValue)")
            }
        }
    }

    /// Verifies a `signedRenewalInfo` and decodes it. Renewal info names no app, so it is accepted
    /// only beside `transaction` (already verified) of the same chain and environment.
    ///
    /// Returns nil for renewal info Apple signed as JSON `null` (or `{}`), as genuine Sandbox answers
    /// carry it: once its signature holds, it is no renewal info, and the verified transaction beside
    /// it still applies. Having no `signedDate`, its chain must be valid at the transaction's.
    public func verifyRenewalInfo(_ jws: String, of transaction: JWSTransactionPayload) async throws(SignedDataFailure) -> JWSRenewalInfoPayload? {
        let parts = try await SignedParts(jws, verifier: self)
        if parts.isEmptyPayload {
            try parts.checkValidity(atMs: transaction.signedDate)
            try parts.checkSignature()
            return nil
        }
        return try verified(parts) { (payload: JWSRenewalInfoPayload) throws(SignedDataFailure) in
            guard payload.originalTransactionId == transaction.originalTransactionId, payload.environment == transaction.environment else {
                throw SignedDataFailure(
                    .renewalMismatch,
                    "renewal info for \(payload.originalTransactionId ?? "(none)") in \(payload.environment ?? "(none)") came with transaction \(transaction.originalTransactionId ?? "(none)") in \(transaction.environment ?? "(none)")")
            }
        }
    }

    /// The checks every JWS goes through, in order; returns the decoded payload. `claims` checks what
    /// the signed payload says (its app, its environment) once the signature holds.
    ///
    /// A payload without `signedDate` is always refused (`payload`), but only after its claims: it
    /// has no instant to check its chain's validity at, and the refusal it gets is then the one
    /// Apple's verifier gives it (Apple's `wrongBundleId` vector has no `signedDate`, and Apple
    /// refuses it for its bundle).
    func verified<Payload: Decodable & SignedPayload>(
        _ jws: String, claims: (Payload) throws(SignedDataFailure) -> Void
    ) async throws(SignedDataFailure) -> Payload {
        try verified(try await SignedParts(jws, verifier: self), claims: claims)
    }

    /// The checks after the header's chain, on a JWS already split. A payload that does not decode
    /// is refused for its shape only once its signature holds: Apple signed it, so what failed is
    /// the answer's shape, not its trust.
    func verified<Payload: Decodable & SignedPayload>(
        _ parts: SignedParts, claims: (Payload) throws(SignedDataFailure) -> Void
    ) throws(SignedDataFailure) -> Payload {
        guard let payload = try? JSONDecoder().decode(Payload.self, from: parts.payload) else {
            try parts.checkSignature()
            throw SignedDataFailure(.payloadShape, "the signature holds, but the payload is not JSON of the shape Apple documents for \(Payload.self)")
        }
        try parts.checkValidity(atMs: payload.signedDate)
        try parts.checkSignature()
        try claims(payload)
        guard payload.signedDate != nil else { throw SignedDataFailure(.payload, "the payload has no signedDate") }
        return payload
    }

    /// The header's algorithm and chain, checked once per distinct header: every payload one leaf
    /// signs carries the same header text, so a night decodes and verifies it once.
    func chain(ofHeader text: Substring) async throws(SignedDataFailure) -> VerifiedChain {
        let key = String(text)
        if let known = verifiedChains.withLock({ $0[key] }) { return known }
        guard let data = Base64URL.decode(text), let header = try? JSONDecoder().decode(JWSHeader.self, from: data) else {
            throw SignedDataFailure(.malformed, "the JWS header is not base64url JSON of the expected shape")
        }
        guard header.alg == "ES256" else { throw SignedDataFailure(.algorithm, "alg is \(header.alg ?? "(none)"), not ES256") }
        guard let x5c = header.x5c, !x5c.isEmpty else { throw SignedDataFailure(.missingX5C, "the header has no x5c certificate chain") }
        guard x5c.count == 3 else { throw SignedDataFailure(.chainLength, "x5c holds \(x5c.count) certificates, not 3") }
        let chain = try await verifiedChain(x5c)
        verifiedChains.withLock { chains in
            if chains.count >= Self.maxRememberedChains { chains.removeAll() }
            chains[key] = chain
        }
        return chain
    }
}
