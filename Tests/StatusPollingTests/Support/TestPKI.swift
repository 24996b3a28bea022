import Crypto
import Foundation
import SwiftASN1
import X509

/// Certificate chains for the JWS tests, built with swift-certificates: a root, an intermediate
/// and a leaf like Apple's (marker extensions 1.2.840.113635.100.6.2.1 and .6.11.1), with every
/// defect a test needs switchable.
struct TestPKI {
    struct Options {
        var intermediateMarker = true
        var leafMarker = true
        var leafValidity: ClosedRange<Date> = TestPKI.wide
        var rootName = "Test Root CA"
    }

    static let wide = Date(timeIntervalSince1970: 946_684_800)...Date(timeIntervalSince1970: 4_102_444_800)  // 2000…2100

    let rootKey = P256.Signing.PrivateKey()
    let intermediateKey = P256.Signing.PrivateKey()
    let leafKey = P256.Signing.PrivateKey()
    let root: Certificate
    let intermediate: Certificate
    let leaf: Certificate

    init(_ options: Options = Options()) throws {
        let rootName = try DistinguishedName { CommonName(options.rootName); OrganizationName("status-poller tests") }
        let intermediateName = try DistinguishedName { CommonName("Test Intermediate"); OrganizationName("status-poller tests") }
        let leafName = try DistinguishedName { CommonName("Test Signing Leaf"); OrganizationName("status-poller tests") }
        root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey),
            notValidBefore: Self.wide.lowerBound, notValidAfter: Self.wide.upperBound, issuer: rootName, subject: rootName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(rootKey))
        let marker = options.intermediateMarker
        intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey),
            notValidBefore: Self.wide.lowerBound, notValidAfter: Self.wide.upperBound, issuer: rootName, subject: intermediateName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                if marker { Self.marker([1, 2, 840, 113_635, 100, 6, 2, 1]) }
            },
            issuerPrivateKey: .init(rootKey))
        let leafMarker = options.leafMarker
        leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey),
            notValidBefore: options.leafValidity.lowerBound, notValidAfter: options.leafValidity.upperBound,
            issuer: intermediateName, subject: leafName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                KeyUsage(digitalSignature: true)
                if leafMarker { Self.marker([1, 2, 840, 113_635, 100, 6, 11, 1]) }
            },
            issuerPrivateKey: .init(intermediateKey))
    }

    /// Apple's marker: a non-critical extension whose value is an ASN.1 NULL.
    static func marker(_ oid: ASN1ObjectIdentifier) -> Certificate.Extension {
        Certificate.Extension(oid: oid, critical: false, value: [0x05, 0x00])
    }

    static func base64DER(_ certificate: Certificate) -> String {
        var serializer = DER.Serializer()
        try! serializer.serialize(certificate)
        return Data(serializer.serializedBytes).base64EncodedString()
    }

    /// `x5c` as Apple sends it: leaf, intermediate, root.
    var x5c: [String] { [leaf, intermediate, root].map(Self.base64DER) }

    /// A compact JWS of `payload`, signed by the leaf; `x5c` nil leaves the chain out.
    func sign(_ payload: [String: Any], x5c: [String]? = nil, omitX5C: Bool = false, alg: String = "ES256") -> String {
        sign(text: String(decoding: try! JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys]), as: UTF8.self), x5c: x5c, omitX5C: omitX5C, alg: alg)
    }

    /// A compact JWS whose payload is `text` exactly, e.g. the literal `null` genuine Sandbox
    /// answers carry as renewal info.
    func sign(text: String, x5c: [String]? = nil, omitX5C: Bool = false, alg: String = "ES256") -> String {
        var header: [String: Any] = ["alg": alg]
        if !omitX5C { header["x5c"] = x5c ?? self.x5c }
        let head = Self.base64URL(try! JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]))
        let body = Self.base64URL(Data(text.utf8))
        let signature = try! leafKey.signature(for: Data("\(head).\(body)".utf8))
        return "\(head).\(body).\(Self.base64URL(signature.rawRepresentation))"
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
