import EntitlementCore

/// Why a JWS from the App Store Server API was not trusted: the check that failed, named as
/// `last_error` shows it (`untrusted_signature (leaf_oid): …`), and what was found.
public struct SignedDataFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// Every check, in the order they run; the first that fails is reported.
    public enum Check: String, Sendable, CaseIterable {
        /// Not three base64url parts, or a header that is not JSON.
        case malformed
        /// The header's `alg` is not ES256.
        case algorithm
        /// The header has no `x5c` chain.
        case missingX5C = "missing_x5c"
        /// `x5c` does not hold exactly three certificates (leaf, intermediate, root).
        case chainLength = "chain_length"
        /// The leaf or the intermediate of `x5c` is not base64 DER X.509 (the third is not read for trust).
        case certificate
        /// The leaf and the intermediate do not lead to a trusted root (Apple Root CA - G3, or a
        /// `--trusted-root-file`), whatever root the payload names as the third certificate.
        case untrustedRoot = "untrusted_root"
        /// The intermediate lacks Apple's extension 1.2.840.113635.100.6.2.1.
        case intermediateOID = "intermediate_oid"
        /// The leaf lacks Apple's extension 1.2.840.113635.100.6.11.1.
        case leafOID = "leaf_oid"
        /// A certificate of the chain was not valid at the payload's `signedDate`.
        case validity
        /// The ES256 signature does not match the header and payload.
        case signature
        /// The signature holds, but the payload is not JSON of the shape Apple documents (a field of
        /// the wrong type, not an object): the answer's shape failed, not its trust.
        case payloadShape = "payload_shape"
        /// The payload's `bundleId` is not the configured app's.
        case bundleID = "bundle_id"
        /// The payload's `environment` is not the one asked.
        case environment
        /// Renewal info whose `originalTransactionId` or environment is not its verified transaction's.
        case renewalMismatch = "renewal_mismatch"
        /// The payload lacks a field every signed payload has (`signedDate`; a notification's
        /// `notificationUUID` and `notificationType`). Checked after what the payload claims (its app,
        /// its environment, its chain), so a payload for another app is refused for that, as Apple's
        /// verifier refuses it.
        case payload
    }

    public var check: Check
    /// What was found; never holds the JWS itself.
    public var detail: String

    public init(_ check: Check, _ detail: String) {
        self.check = check
        self.detail = detail
    }

    public var description: String { "\(check.rawValue): \(detail)" }
}

extension SignedDataFailure {
    /// Whether the payload's trust failed (its chain, signature or claims), as opposed to its shape.
    public var isUntrusted: Bool { check != .payloadShape }
}

extension VerificationFailure {
    /// A row whose answer held a payload that failed `failure`'s check: nothing of it is applied.
    /// A payload of the wrong shape under a valid signature is an unexpected response, not an
    /// untrusted signature, so that an operator is not sent to look at certificates.
    static func signedData(_ failure: SignedDataFailure) -> VerificationFailure {
        let reason: Reason = failure.isUntrusted ? .untrustedSignature : .unexpectedResponse
        return VerificationFailure(reason, "\(reason.rawValue) (\(failure.check.rawValue)): \(failure.detail)", upstreamStatus: .serverAPI(200))
    }
}
