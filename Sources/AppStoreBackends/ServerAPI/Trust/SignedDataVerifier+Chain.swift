@_spi(DisableValidityCheck) import X509
import Crypto
import Foundation

extension SignedDataVerifier {
    /// The chain's verification, as Apple's `SignedDataVerifier` does it: swift-certificates builds a
    /// path from the leaf (`x5c[0]`) through the intermediate (`x5c[1]`) to one of the trusted roots,
    /// with RFC 5280's rules and Apple's policy. The third certificate of `x5c` takes no part: a
    /// payload cannot bring its own anchor, and Apple's test vectors carry another encoding of their
    /// root there (same name and key, other serial and dates). Validity is checked apart, at each
    /// payload's own `signedDate`, over the certificates of the path found.
    func verifiedChain(_ x5c: [String]) async throws(SignedDataFailure) -> VerifiedChain {
        if trustedRoots.isEmpty, case .failure(let error) = AppleRootCertificate.g3 {
            throw SignedDataFailure(.untrustedRoot, "no root is trusted: \(error)")
        }
        let leaf = try Self.certificate(x5c, 0)
        let intermediate = try Self.certificate(x5c, 1)
        var verifier = Verifier(rootCertificates: CertificateStore(trustedRoots)) {
            RFC5280Policy.withValidityCheckDisabled()
            AppleSigningPolicy()
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        guard case .validCertificate(let path) = result else {
            throw failure(result, payloadRoot: x5c[2])
        }
        guard path.count == 3, let leafKey = P256.Signing.PublicKey(leaf.publicKey) else {
            throw SignedDataFailure(.untrustedRoot, "the chain does not lead from the leaf through x5c[1] to a trusted root")
        }
        return VerifiedChain(leafKey: leafKey, validFrom: path.map(\.notValidBefore).max()!, validUntil: path.map(\.notValidAfter).min()!)
    }

    /// `x5c[index]`, parsed.
    private static func certificate(_ x5c: [String], _ index: Int) throws(SignedDataFailure) -> Certificate {
        guard let der = Data(base64Encoded: x5c[index]), let certificate = try? Certificate(derEncoded: Array(der)) else {
            throw SignedDataFailure(.certificate, "x5c[\(index)] is not a base64 DER X.509 certificate")
        }
        return certificate
    }

    /// Names the check a failed chain broke: Apple's policy says which marker is missing; any other
    /// failure (no issuer among the roots, a signature between certificates, a CA flag) means no
    /// trusted path. When the root the payload names is none of ours (by name and key), the message
    /// says so, since that is the usual cause: a chain to another root.
    private func failure(_ result: CertificateValidationResult, payloadRoot: String) -> SignedDataFailure {
        guard case .couldNotValidate(let failures) = result else { return SignedDataFailure(.untrustedRoot, "no trusted chain") }
        let reasons = failures.map { String(describing: $0.policyFailureReason) }
        for check in [SignedDataFailure.Check.chainLength, .intermediateOID, .leafOID] {
            if let reason = reasons.first(where: { $0.hasPrefix(check.rawValue + ":") }) {
                return SignedDataFailure(check, String(reason.dropFirst(check.rawValue.count + 2)))
            }
        }
        if let der = Data(base64Encoded: payloadRoot), let named = try? Certificate(derEncoded: Array(der)),
            !trustedRoots.contains(where: { $0.subject == named.subject && $0.publicKey == named.publicKey })
        {
            return SignedDataFailure(.untrustedRoot, "the chain's root is not a trusted root (\(named.subject))")
        }
        let detail = reasons.first.map { "no chain from the leaf through x5c[1] to a trusted root (\($0.prefix(160)))" } ?? "no chain from the leaf through x5c[1] to a trusted root"
        return SignedDataFailure(.untrustedRoot, detail)
    }
}
