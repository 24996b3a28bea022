import SwiftASN1

/// Opens an app receipt's PKCS#7 container down to its encapsulated content, without checking
/// the signature. `ContentInfo { signedData, [0] SignedData { version, digestAlgorithms,
/// encapContentInfo { data, [0] OCTET STRING }, … } }`, in definite or indefinite lengths.
enum PKCS7Envelope {
    /// id-signedData, 1.2.840.113549.1.7.2.
    static let signedData: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 2]
    /// id-data, 1.2.840.113549.1.7.1: the encapsulated content is plain bytes (the receipt payload).
    static let data: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 1]
    /// The `[0]` that wraps both the SignedData and the encapsulated content.
    static let explicitZero = ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)

    /// The encapsulated content's bytes: the receipt payload.
    static func payload(of bytes: [UInt8]) throws(AppReceiptError) -> [UInt8] {
        let root: ASN1Node
        do {
            root = try BER.parse(bytes)
        } catch let error as ASN1Error {
            // The code ("truncatedASN1Field", …) says what broke without quoting any byte.
            throw .notPKCS7(reason: "the ASN.1 framing is broken: \(error.code)")
        } catch {
            throw .notPKCS7(reason: "the ASN.1 framing is broken")
        }
        guard root.identifier == .sequence, let contentInfo = root.children, contentInfo.count >= 2 else {
            throw .notPKCS7(reason: "it does not start with a ContentInfo SEQUENCE")
        }
        guard contentInfo[0].objectIdentifierValue == signedData else {
            throw .notPKCS7(reason: "its content type is not signedData (1.2.840.113549.1.7.2)")
        }
        guard contentInfo[1].identifier == explicitZero, let wrapped = contentInfo[1].children, wrapped.count == 1,
              wrapped[0].identifier == .sequence, let signed = wrapped[0].children, signed.count >= 3
        else {
            throw .notPKCS7(reason: "its [0] content is not a SignedData SEQUENCE")
        }
        guard signed[0].integerValue != nil, signed[1].identifier == .set else {
            throw .notPKCS7(reason: "the SignedData does not start with a version and a SET of digest algorithms")
        }
        guard signed[2].identifier == .sequence, let encapsulated = signed[2].children, let contentType = encapsulated.first else {
            throw .notPKCS7(reason: "the SignedData has no encapsulated content info")
        }
        guard contentType.objectIdentifierValue == data, encapsulated.count >= 2 else { throw .noReceiptPayload }
        guard encapsulated[1].identifier == explicitZero, let content = encapsulated[1].children, content.count == 1,
              let payload = content[0].octetStringBytes
        else {
            throw .notPKCS7(reason: "the encapsulated content is not an [0] OCTET STRING")
        }
        guard !payload.isEmpty else { throw .noReceiptPayload }
        return payload
    }
}
