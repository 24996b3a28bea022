import SwiftASN1

/// The simulator's own reader of its receipts: just enough to find the token attribute, so a
/// request identifies its subscriber. Shares nothing with the poller's `AppReceipt` on purpose.
extension SimulatedReceipt {
    /// The token text of a receipt file, or nil when `bytes` is not one of this simulator's receipts.
    static func tokenText(in bytes: [UInt8]) -> String? {
        // ContentInfo → [0] → SignedData → encapContentInfo → [0] → OCTET STRING.
        guard let root = try? BER.parse(bytes),
              let signedData = child(1, of: root).flatMap({ child(0, of: $0) }),
              let encapsulated = child(2, of: signedData),
              let octets = child(1, of: encapsulated).flatMap({ child(0, of: $0) }),
              let payload = octetString(octets),
              let set = try? BER.parse(payload), case .constructed(let attributes) = set.content
        else { return nil }
        for attribute in attributes {
            guard let type = child(0, of: attribute), (try? Int(berEncoded: type)) == tokenAttributeType,
                  let value = child(2, of: attribute).flatMap(octetString), let text = try? BER.parse(value),
                  text.identifier == .utf8String, case .primitive(let utf8) = text.content
            else { continue }
            return String(validating: utf8, as: UTF8.self)
        }
        return nil
    }

    private static func child(_ index: Int, of node: ASN1Node) -> ASN1Node? {
        guard case .constructed(let children) = node.content else { return nil }
        return children.dropFirst(index).first { _ in true }
    }

    /// A primitive OCTET STRING's bytes, or a constructed one's segments joined.
    private static func octetString(_ node: ASN1Node) -> [UInt8]? {
        guard node.identifier == .octetString else { return nil }
        switch node.content {
        case .primitive(let bytes): return Array(bytes)
        case .constructed(let segments):
            var joined: [UInt8] = []
            for segment in segments {
                guard case .primitive(let bytes) = segment.content else { return nil }
                joined += bytes
            }
            return joined
        }
    }
}
