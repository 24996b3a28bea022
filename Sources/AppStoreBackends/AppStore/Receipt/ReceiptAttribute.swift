import SwiftASN1

/// One `ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`, the
/// shape of both the receipt payload's entries and an in-app purchase receipt's fields.
struct ReceiptAttribute {
    /// Why a SET of attributes could not be read, in words for ``AppReceiptError``.
    struct Malformed: Error {
        var reason: String
    }

    var type: Int
    /// The value's own encoding (DER of a UTF8String, INTEGER, SET …), still to be parsed.
    var value: [UInt8]

    /// The attributes of `bytes`, which must be one SET of them and nothing more.
    static func set(_ bytes: [UInt8]) throws(Malformed) -> [ReceiptAttribute] {
        guard let root = try? BER.parse(bytes) else { throw Malformed(reason: "not valid DER/BER") }
        guard root.identifier == .set, let entries = root.children else { throw Malformed(reason: "not a SET of attributes") }
        var attributes: [ReceiptAttribute] = []
        attributes.reserveCapacity(entries.count)
        for entry in entries {
            guard entry.identifier == .sequence, let fields = entry.children, fields.count >= 3 else {
                throw Malformed(reason: "an entry is not a SEQUENCE { type, version, value }")
            }
            guard let type = fields[0].integerValue, fields[1].integerValue != nil else {
                throw Malformed(reason: "an entry's type or version is not an INTEGER")
            }
            guard let value = fields[2].octetStringBytes else {
                throw Malformed(reason: "the value of attribute \(type) is not an OCTET STRING")
            }
            attributes.append(ReceiptAttribute(type: type, value: value))
        }
        return attributes
    }

    /// The value parsed as one ASN.1 node, or nil when it is not exactly one.
    var node: ASN1Node? { try? BER.parse(value) }

    /// The value as a UTF8String.
    var utf8String: String? { node?.text(.utf8String) }

    /// The value as an IA5String.
    var ia5String: String? { node?.text(.ia5String) }

    /// The value as an INTEGER.
    var integer: Int? { node?.integerValue }
}
