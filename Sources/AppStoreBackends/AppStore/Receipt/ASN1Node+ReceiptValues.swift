import SwiftASN1

/// The few value shapes an app receipt uses, read leniently about BER framing (definite or
/// indefinite lengths, constructed strings) and strictly about tags: a value of the wrong type is
/// reported, never guessed at.
extension ASN1Node {
    /// The children of a constructed node, or nil for a primitive one.
    var children: [ASN1Node]? {
        guard case .constructed(let collection) = content else { return nil }
        return Array(collection)
    }

    /// The bytes of an OCTET STRING, primitive or constructed (its segments concatenated, as
    /// BER allows and Apple's indefinite-length receipts use); nil when this is not one.
    var octetStringBytes: [UInt8]? {
        guard identifier == .octetString else { return nil }
        switch content {
        case .primitive(let bytes):
            return Array(bytes)
        case .constructed(let segments):
            var joined: [UInt8] = []
            for segment in segments {
                // Segments are OCTET STRINGs themselves; the parser's depth limit bounds the recursion.
                guard let bytes = segment.octetStringBytes else { return nil }
                joined.append(contentsOf: bytes)
            }
            return joined
        }
    }

    /// An INTEGER that fits in `Int`.
    var integerValue: Int? {
        guard identifier == .integer else { return nil }
        return try? Int(berEncoded: self)
    }

    /// An OBJECT IDENTIFIER.
    var objectIdentifierValue: ASN1ObjectIdentifier? {
        guard identifier == .objectIdentifier else { return nil }
        return try? ASN1ObjectIdentifier(berEncoded: self)
    }

    /// The text of a primitive string of tag `tag`, when it is valid UTF-8 (and ASCII for IA5String).
    func text(_ tag: ASN1Identifier) -> String? {
        guard identifier == tag, case .primitive(let bytes) = content else { return nil }
        if tag == .ia5String, bytes.contains(where: { $0 >= 0x80 }) { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}
