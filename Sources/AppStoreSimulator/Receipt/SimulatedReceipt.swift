import Foundation

/// An app receipt shaped like Apple's: a PKCS#7 SignedData ContentInfo in indefinite-length BER
/// whose encapsulated content is the payload, a DER SET of `ReceiptAttribute`s. Unsigned (no
/// certificates, no signer): the poller reads it for ids and never trusts it for a status.
///
/// Deterministic: the same token and purchases give the same bytes, so a receipt is an identity
/// that tests and the truth can compare.
struct SimulatedReceipt {
    /// One in-app purchase receipt (attribute 17).
    struct Purchase {
        var productID: String
        var transactionID: String
        var originalTransactionID: String
        var purchaseMs: Int64
        var expiresMs: Int64
        var webOrderLineItemID: Int
    }

    /// The simulator's private attribute that carries ``ReceiptToken``'s text. Apple's types
    /// below 17 and 1701… are public; this one is outside both ranges.
    static let tokenAttributeType = 90210

    var token: ReceiptToken
    var bundleID: String?
    var purchases: [Purchase]

    /// Base64 of the receipt file, as an app uploads it.
    var encoded: String { Data(bytes).base64EncodedString() }

    /// The receipt file: the BER container around the payload.
    var bytes: [UInt8] {
        let payload = self.payload
        var writer = BERWriter(capacity: payload.count + 128)
        writer.indefinite(0x30) { contentInfo in
            contentInfo.raw(Self.signedDataOID)
            contentInfo.indefinite(0xA0) { explicit in
                explicit.indefinite(0x30) { signedData in
                    signedData.raw([0x02, 0x01, 0x01])  // version 1
                    signedData.raw(Self.sha256Algorithms)
                    signedData.indefinite(0x30) { encapsulated in
                        encapsulated.raw(Self.dataOID)
                        encapsulated.indefinite(0xA0) { content in
                            // A constructed OCTET STRING in segments of 1,000 bytes, as CER writes one.
                            content.indefinite(0x24) { octets in
                                for start in stride(from: 0, to: payload.count, by: 1000) {
                                    octets.definite(0x04, payload[start..<min(start + 1000, payload.count)])
                                }
                            }
                        }
                    }
                    signedData.raw([0x31, 0x00])  // signerInfos: none
                }
            }
        }
        return writer.bytes
    }

    /// The payload: attributes 0 (receipt type), 2 (bundle id), 19 (original application
    /// version), the token, then one 17 per purchase. DER written by hand, in one buffer per
    /// level: every length is known before its content, and receipts are built for every
    /// subscriber at every request and truth check, where `DER.Serializer` cost several times more.
    var payload: [UInt8] {
        var attributes: [UInt8] = []
        attributes.reserveCapacity(160 + purchases.count * 230)
        Self.attribute(&attributes, type: 0, value: Self.string(0x0C, token.environment == "Sandbox" ? "ProductionSandbox" : "Production"))
        if let bundleID { Self.attribute(&attributes, type: 2, value: Self.string(0x0C, bundleID)) }
        Self.attribute(&attributes, type: 19, value: Self.string(0x0C, "1.0"))
        Self.attribute(&attributes, type: Self.tokenAttributeType, value: Self.string(0x0C, token.text))
        for purchase in purchases { Self.attribute(&attributes, type: 17, value: Self.inApp(purchase)) }
        return Self.tlv(0x31, attributes)
    }

    /// The value of one attribute 17: a DER SET of the in-app fields the poller reads.
    static func inApp(_ purchase: Purchase) -> [UInt8] {
        var fields: [UInt8] = []
        fields.reserveCapacity(230)
        attribute(&fields, type: 1701, value: integer(1))
        attribute(&fields, type: 1702, value: string(0x0C, purchase.productID))
        attribute(&fields, type: 1703, value: string(0x0C, purchase.transactionID))
        attribute(&fields, type: 1704, value: tlv(0x16, RFC3339Text.bytes(ms: purchase.purchaseMs)))
        attribute(&fields, type: 1705, value: string(0x0C, purchase.originalTransactionID))
        attribute(&fields, type: 1708, value: tlv(0x16, RFC3339Text.bytes(ms: purchase.expiresMs)))
        attribute(&fields, type: 1711, value: integer(purchase.webOrderLineItemID))
        return tlv(0x31, fields)
    }

    /// Appends `SEQUENCE { type INTEGER, version 1, value OCTET STRING }` around an encoded value.
    static func attribute(_ out: inout [UInt8], type: Int, value: [UInt8]) {
        let typeBytes = integer(type)
        var octetHeader: [UInt8] = [0x04]
        BERWriter.appendLength(value.count, to: &octetHeader)
        out.append(0x30)
        BERWriter.appendLength(typeBytes.count + 3 + octetHeader.count + value.count, to: &out)
        out.append(contentsOf: typeBytes)
        out.append(contentsOf: [0x02, 0x01, 0x01])
        out.append(contentsOf: octetHeader)
        out.append(contentsOf: value)
    }

    /// A definite-length TLV.
    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [tag]
        out.reserveCapacity(content.count + 5)
        BERWriter.appendLength(content.count, to: &out)
        out.append(contentsOf: content)
        return out
    }

    /// A string TLV (0x0C UTF8String, 0x16 IA5String).
    static func string(_ tag: UInt8, _ text: String) -> [UInt8] {
        tlv(tag, Array(text.utf8))
    }

    /// An INTEGER TLV: minimal big-endian two's complement.
    static func integer(_ value: Int) -> [UInt8] {
        var content = withUnsafeBytes(of: value.bigEndian) { Array($0) }
        while content.count > 1, (content[0] == 0x00 && content[1] & 0x80 == 0) || (content[0] == 0xFF && content[1] & 0x80 != 0) {
            content.removeFirst()
        }
        return [0x02, UInt8(content.count)] + content
    }

    /// OBJECT IDENTIFIER 1.2.840.113549.1.7.2 (id-signedData), DER.
    static let signedDataOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
    /// OBJECT IDENTIFIER 1.2.840.113549.1.7.1 (id-data), DER.
    static let dataOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01]
    /// `SET { AlgorithmIdentifier { 2.16.840.1.101.3.4.2.1 (sha256), NULL } }`, DER.
    static let sha256Algorithms: [UInt8] = [
        0x31, 0x0F, 0x30, 0x0D, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00,
    ]
}
