/// Hand-built app receipts for `AppReceiptTests`: byte by byte, so that a test can write any
/// framing Apple might (definite or indefinite lengths, a segmented content OCTET STRING) and
/// any mistake the parser must report.
enum ReceiptFixture {
    static let signedDataOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
    static let envelopedDataOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x03]
    static let dataOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01]
    static let sha1Algorithms: [UInt8] = [0x31, 0x0B, 0x30, 0x09, 0x06, 0x05, 0x2B, 0x0E, 0x03, 0x02, 0x1A, 0x05, 0x00]

    /// A definite-length TLV.
    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var out = [tag]
        if content.count < 0x80 {
            out.append(UInt8(content.count))
        } else {
            var digits: [UInt8] = []
            var rest = content.count
            while rest > 0 { digits.insert(UInt8(rest & 0xFF), at: 0); rest >>= 8 }
            out += [0x80 | UInt8(digits.count)] + digits
        }
        return out + content
    }

    /// An indefinite-length constructed node: tag, 0x80, the parts, 00 00.
    static func indefinite(_ tag: UInt8, _ parts: [UInt8]...) -> [UInt8] {
        [tag, 0x80] + parts.flatMap { $0 } + [0x00, 0x00]
    }

    static func integer(_ value: Int) -> [UInt8] {
        var content = withUnsafeBytes(of: value.bigEndian) { Array($0) }
        while content.count > 1, (content[0] == 0 && content[1] < 0x80) || (content[0] == 0xFF && content[1] >= 0x80) { content.removeFirst() }
        return tlv(0x02, content)
    }

    static func utf8(_ text: String) -> [UInt8] { tlv(0x0C, Array(text.utf8)) }
    static func ia5(_ text: String) -> [UInt8] { tlv(0x16, Array(text.utf8)) }

    /// `SEQUENCE { type, version 1, OCTET STRING value }`.
    static func attribute(_ type: Int, _ value: [UInt8]) -> [UInt8] {
        tlv(0x30, integer(type) + integer(1) + tlv(0x04, value))
    }

    /// The value of an attribute 17, with Apple's field types unless `fields` overrides some.
    static func inApp(product: String, transaction: String, original: String, purchase: String, expires: String,
                      fields: [Int: [UInt8]] = [:], omitting: Set<Int> = []) -> [UInt8] {
        var values: [Int: [UInt8]] = [
            1701: integer(1), 1702: utf8(product), 1703: utf8(transaction), 1704: ia5(purchase),
            1705: utf8(original), 1708: ia5(expires), 1711: integer(9_000_000_001), 1719: integer(0),
        ]
        values.merge(fields) { _, new in new }
        return tlv(0x31, values.keys.sorted().filter { !omitting.contains($0) }.flatMap { attribute($0, values[$0]!) })
    }

    /// A payload: receipt type, bundle id, an unknown attribute, then the in-app values.
    static func payload(bundleID: String = "com.example.app", inApps: [[UInt8]]) -> [UInt8] {
        tlv(0x31, attribute(0, utf8("Production")) + attribute(2, utf8(bundleID)) + attribute(4, tlv(0x04, [1, 2, 3]))
            + attribute(19, utf8("1.0")) + inApps.flatMap { attribute(17, $0) })
    }

    /// Apple's current shape: indefinite lengths outside, the content OCTET STRING constructed
    /// from `segments` pieces (one of them nested once more, which BER allows).
    static func indefiniteReceipt(_ payload: [UInt8], segments: Int = 3, contentType: [UInt8] = signedDataOID) -> [UInt8] {
        let size = (payload.count + segments - 1) / segments
        var pieces = stride(from: 0, to: payload.count, by: size).map { tlv(0x04, Array(payload[$0..<min($0 + size, payload.count)])) }
        if pieces.count > 1 { pieces[1] = indefinite(0x24, pieces[1]) }
        let content = indefinite(0x24, pieces.flatMap { $0 })
        return indefinite(0x30, contentType, indefinite(0xA0, indefinite(0x30,
            integer(1), sha1Algorithms, indefinite(0x30, dataOID, indefinite(0xA0, content)),
            tlv(0xA0, []), tlv(0x31, [])))
        )
    }

    /// The older shape: DER throughout, the content a primitive OCTET STRING.
    static func definiteReceipt(_ payload: [UInt8], contentType: [UInt8] = signedDataOID, encapsulated: [UInt8]? = nil) -> [UInt8] {
        let encap = encapsulated ?? tlv(0x30, dataOID + tlv(0xA0, tlv(0x04, payload)))
        return tlv(0x30, contentType + tlv(0xA0, tlv(0x30, integer(1) + sha1Algorithms + encap + tlv(0x31, []))))
    }
}
