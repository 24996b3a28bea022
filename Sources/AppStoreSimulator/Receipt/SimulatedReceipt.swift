import Foundation
import SwiftASN1

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
    /// version), the token, then one 17 per purchase.
    var payload: [UInt8] {
        var serializer = DER.Serializer()
        serializer.appendConstructedNode(identifier: .set) { set in
            Self.attribute(&set, type: 0, Self.string(0x0C, token.environment == "Sandbox" ? "ProductionSandbox" : "Production"))
            if let bundleID { Self.attribute(&set, type: 2, Self.string(0x0C, bundleID)) }
            Self.attribute(&set, type: 19, Self.string(0x0C, "1.0"))
            Self.attribute(&set, type: Self.tokenAttributeType, Self.string(0x0C, token.text))
            for purchase in purchases { Self.attribute(&set, type: 17, Self.inApp(purchase)) }
        }
        return serializer.serializedBytes
    }

    /// The value of one attribute 17: a DER SET of the in-app fields the poller reads.
    static func inApp(_ purchase: Purchase) -> [UInt8] {
        var serializer = DER.Serializer()
        serializer.appendConstructedNode(identifier: .set) { set in
            attribute(&set, type: 1701, integer(1))
            attribute(&set, type: 1702, string(0x0C, purchase.productID))
            attribute(&set, type: 1703, string(0x0C, purchase.transactionID))
            attribute(&set, type: 1704, string(0x16, RFC3339Text.string(ms: purchase.purchaseMs)))
            attribute(&set, type: 1705, string(0x0C, purchase.originalTransactionID))
            attribute(&set, type: 1708, string(0x16, RFC3339Text.string(ms: purchase.expiresMs)))
            attribute(&set, type: 1711, integer(purchase.webOrderLineItemID))
        }
        return serializer.serializedBytes
    }

    /// `SEQUENCE { type INTEGER, version 1, value OCTET STRING }` around an encoded value.
    static func attribute(_ set: inout DER.Serializer, type: Int, _ value: [UInt8]) {
        set.appendConstructedNode(identifier: .sequence) { sequence in
            sequence.serializeRawBytes(integer(type))
            sequence.serializeRawBytes([0x02, 0x01, 0x01])
            sequence.appendPrimitiveNode(identifier: .octetString) { $0.append(contentsOf: value) }
        }
    }

    /// A string TLV (0x0C UTF8String, 0x16 IA5String).
    static func string(_ tag: UInt8, _ text: String) -> [UInt8] {
        var out: [UInt8] = [tag]
        BERWriter.appendLength(text.utf8.count, to: &out)
        out.append(contentsOf: text.utf8)
        return out
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
