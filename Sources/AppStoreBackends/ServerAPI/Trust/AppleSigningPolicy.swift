import SwiftASN1
import X509

/// Apple's own rules for the chain of a signed App Store payload, beside RFC 5280's: exactly
/// leaf → intermediate → root, the intermediate marked with Apple's WWDR extension and the leaf
/// with the App Store receipt-signing extension. A chain that reaches the root without them was
/// issued for something else (any developer can get a certificate under Apple's root).
struct AppleSigningPolicy: VerifierPolicy {
    /// 1.2.840.113635.100.6.2.1, on Apple's intermediate.
    static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 2, 1]
    /// 1.2.840.113635.100.6.11.1, on the signing leaf.
    static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 11, 1]

    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [Self.intermediateMarker, Self.leafMarker]

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        guard chain.count == 3 else {
            return .failsToMeetPolicy(reason: "chain_length: the chain to the root has \(chain.count) certificates, not 3")
        }
        guard chain[1].extensions[oid: Self.intermediateMarker] != nil else {
            return .failsToMeetPolicy(reason: "intermediate_oid: the intermediate lacks extension 1.2.840.113635.100.6.2.1")
        }
        guard chain[0].extensions[oid: Self.leafMarker] != nil else {
            return .failsToMeetPolicy(reason: "leaf_oid: the leaf lacks extension 1.2.840.113635.100.6.11.1")
        }
        return .meetsPolicy
    }
}
