import Crypto
import Foundation

/// A compact JWS split into its parts, its header's chain verified: what is left to check is the
/// payload's instant against the chain and the signature over the header and payload.
struct SignedParts {
    let chain: SignedDataVerifier.VerifiedChain
    /// The payload's bytes, base64url-decoded, not yet trusted.
    let payload: Data
    let signature: Data
    /// `header.payload`, the bytes the signature covers.
    let signingInput: Data

    /// Splits `jws` and verifies its header's chain (once per distinct header, through `verifier`).
    init(_ jws: String, verifier: SignedDataVerifier) async throws(SignedDataFailure) {
        let utf8 = jws.utf8
        guard let firstDot = utf8.firstIndex(of: UInt8(ascii: ".")), let lastDot = utf8.lastIndex(of: UInt8(ascii: ".")), firstDot != lastDot,
            !utf8[utf8.index(after: firstDot)..<lastDot].contains(UInt8(ascii: "."))
        else { throw SignedDataFailure(.malformed, "not a compact JWS of three base64url parts") }
        chain = try await verifier.chain(ofHeader: jws[..<firstDot])
        guard let payload = Base64URL.decode(jws[jws.index(after: firstDot)..<lastDot]),
            let signature = Base64URL.decode(jws[jws.index(after: lastDot)...])
        else { throw SignedDataFailure(.malformed, "not a compact JWS of three base64url parts") }
        self.payload = payload
        self.signature = signature
        signingInput = Data(utf8[..<lastDot])
    }

    /// Whether the payload is JSON `null` or `{}` (whitespace aside): Apple signed nothing in it.
    var isEmptyPayload: Bool {
        guard payload.count <= 16 else { return false }
        let text = payload.filter { !" \t\r\n".utf8.contains($0) }
        return text.elementsEqual("null".utf8) || text.elementsEqual("{}".utf8)
    }

    /// Every certificate of the chain must be valid at `signedDateMs` (nil: no instant to check).
    func checkValidity(atMs signedDateMs: Int64?) throws(SignedDataFailure) {
        guard let signedDateMs else { return }
        let signedDate = Date(timeIntervalSince1970: Double(signedDateMs) / 1000)
        guard chain.validFrom <= signedDate, signedDate <= chain.validUntil else {
            throw SignedDataFailure(.validity, "a certificate of the chain was not valid at signedDate \(signedDateMs) ms (valid \(Int64(chain.validFrom.timeIntervalSince1970 * 1000))…\(Int64(chain.validUntil.timeIntervalSince1970 * 1000)) ms)")
        }
    }

    /// The ES256 signature of the chain's leaf over the header and payload.
    func checkSignature() throws(SignedDataFailure) {
        guard signature.count == 64, let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
            chain.leafKey.isValidSignature(ecdsa, for: signingInput)
        else { throw SignedDataFailure(.signature, "the ES256 signature does not match the header and payload") }
    }
}
