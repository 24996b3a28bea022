import Crypto
import Foundation
import SwiftASN1
import X509

/// The simulator's own test PKI: a root CA, an intermediate CA and a leaf, all P-256, shaped like
/// Apple's App Store chain (the intermediate and the leaf carry Apple's marker extensions), so a
/// client's real verification code (chain, OIDs, signature) runs against the simulator. Made anew
/// in every process; a client trusts it by being given ``rootCertificateDER``.
public struct SimulatorPKI: Sendable {
    public let root: Certificate
    public let intermediate: Certificate
    public let leaf: Certificate
    /// The leaf's key. Never mutated after creation, and BoringSSL signs with a shared key safely,
    /// as swift-certificates' own `Certificate.PrivateKey: Sendable` also relies on.
    nonisolated(unsafe) let leafKey: P256.Signing.PrivateKey
    /// `x5c`: the leaf, the intermediate and the root, standard base64 of their DER, as Apple sends.
    public let chainBase64: [String]
    /// The root certificate's DER: what a client passes to its verifier as the trusted root.
    public let rootCertificateDER: [UInt8]
    /// The root certificate as PEM (`-----BEGIN CERTIFICATE-----`).
    public let rootCertificatePEM: String
    /// The JWS protected header, base64url: the same for every signature, so encoded once.
    let encodedHeader: String

    /// Apple's marker on the WWDR intermediate (1.2.840.113635.100.6.2.1).
    public static let intermediateMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 2, 1]
    /// Apple's marker on the App Store signing leaf (1.2.840.113635.100.6.11.1).
    public static let leafMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 11, 1]

    /// A fresh chain valid from `notValidBefore` to `notValidAfter`: make it wide enough to hold
    /// both the simulated clock (`signedDate`, which Apple's libraries verify at) and the wall clock.
    public init(notValidBefore: Date, notValidAfter: Date) throws {
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName {
            CountryName("US")
            OrganizationName("AppStoreSimulator")
            CommonName("AppStoreSimulator Root CA - G3")
        }
        let intermediateName = try DistinguishedName {
            CountryName("US")
            OrganizationName("AppStoreSimulator")
            OrganizationalUnitName("G6")
            CommonName("AppStoreSimulator Worldwide Developer Relations Certification Authority")
        }
        let leafName = try DistinguishedName {
            CountryName("US")
            OrganizationName("AppStoreSimulator")
            CommonName("AppStoreSimulator Prod ECC Mac App Store and iTunes Store Receipt Signing")
        }
        let rootPublic = Certificate.PublicKey(rootKey.publicKey)
        let intermediatePublic = Certificate.PublicKey(intermediateKey.publicKey)
        let leafPublic = Certificate.PublicKey(leafKey.publicKey)
        // OpenSSL's strict mode (Apple's Python library turns it on) wants key identifiers and a
        // critical CA basic constraint.
        root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: rootPublic,
            notValidBefore: notValidBefore, notValidAfter: notValidAfter, issuer: rootName, subject: rootName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: rootPublic)
            },
            issuerPrivateKey: .init(rootKey))
        intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: intermediatePublic,
            notValidBefore: notValidBefore, notValidAfter: notValidAfter, issuer: rootName, subject: intermediateName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: intermediatePublic)
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: rootPublic).keyIdentifier)
                Certificate.Extension(oid: Self.intermediateMarkerOID, critical: false, value: Self.asn1Null)
            },
            issuerPrivateKey: .init(rootKey))
        leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: leafPublic,
            notValidBefore: notValidBefore, notValidAfter: notValidAfter, issuer: intermediateName, subject: leafName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                SubjectKeyIdentifier(hash: leafPublic)
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: intermediatePublic).keyIdentifier)
                Certificate.Extension(oid: Self.leafMarkerOID, critical: false, value: Self.asn1Null)
            },
            issuerPrivateKey: .init(intermediateKey))
        self.leafKey = leafKey
        let ders = try [leaf, intermediate, root].map { certificate -> [UInt8] in
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return serializer.serializedBytes
        }
        chainBase64 = ders.map { Data($0).base64EncodedString() }
        rootCertificateDER = ders[2]
        rootCertificatePEM = try root.serializeAsPEM().pemString
        let header: [String: Any] = ["alg": "ES256", "x5c": chainBase64]
        encodedHeader = Base64URL.encode(try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys, .withoutEscapingSlashes]))
    }

    /// A chain for the simulator of `population`: valid from ten years before the earlier of its
    /// start and now, until 2100.
    static func forSimulator(startMs: Int64) -> SimulatorPKI {
        let tenYears: TimeInterval = 10 * 366 * 86_400
        let from = min(Date(timeIntervalSince1970: Double(startMs) / 1000), Date()).addingTimeInterval(-tenYears)
        do {
            return try SimulatorPKI(notValidBefore: from, notValidAfter: Date(timeIntervalSince1970: 4_102_444_800))
        } catch {
            // Only fixed, valid inputs go in: a failure here is a programming error.
            fatalError("could not build the simulator's test certificates: \(error)")
        }
    }

    /// DER of ASN.1 NULL: the value of Apple's marker extensions.
    static let asn1Null: ArraySlice<UInt8> = [0x05, 0x00]
}
