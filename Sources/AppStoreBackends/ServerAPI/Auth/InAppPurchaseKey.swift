import Foundation
import Crypto

/// The In-App Purchase key (App Store Connect → Users and Access → Integrations → In-App
/// Purchase): a P-256 private key, as the `.p8` file Apple hands out once (PKCS#8 PEM). It signs
/// the bearer JWT. Secret: it prints as "<redacted>", and nothing logs the PEM.
///
/// `@unchecked Sendable`: swift-crypto's key is an immutable value that only signs, but it does
/// not declare `Sendable` on Linux.
public struct InAppPurchaseKey: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    let signingKey: P256.Signing.PrivateKey

    /// Reads the `.p8` text. The error says what was found, never the text itself.
    public init(pem: String) throws(InAppPurchaseKeyError) {
        let trimmed = pem.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix("-----BEGIN") else { throw .notPEM }
        do {
            signingKey = try P256.Signing.PrivateKey(pemRepresentation: trimmed)
        } catch {
            throw .notP256
        }
    }

    init(signingKey: P256.Signing.PrivateKey) {
        self.signingKey = signingKey
    }

    /// The matching public key, PEM: what App Store Connect (or the simulator) checks tokens with.
    public var publicKeyPEM: String { signingKey.publicKey.pemRepresentation }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
}

/// Why an In-App Purchase key could not be read.
public enum InAppPurchaseKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    case notPEM
    case notP256

    public var description: String {
        switch self {
        case .notPEM: "the In-App Purchase key is not PEM text (expected the .p8 file App Store Connect gave you, starting with -----BEGIN PRIVATE KEY-----)"
        case .notP256: "the In-App Purchase key is PEM but not a P-256 private key (App Store Connect's In-App Purchase keys are; check you gave the .p8 file, not a certificate or another key)"
        }
    }
}
