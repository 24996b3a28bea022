/// Writes the BER framing of Apple's app receipts: constructed nodes of indefinite length, which
/// swift-asn1's `DER.Serializer` cannot write (DER allows definite lengths only). An indefinite
/// node is its tag (constructed bit set), the byte 0x80, its content, then the end-of-contents
/// octets 00 00 (X.690 §8.1.3.6). Definite pieces inside are written whole.
struct BERWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    /// A constructed node of indefinite length around what `content` writes.
    mutating func indefinite(_ tag: UInt8, _ content: (inout BERWriter) -> Void) {
        precondition(tag & 0x20 != 0, "only a constructed node may have an indefinite length")
        bytes.append(tag)
        bytes.append(0x80)
        content(&self)
        bytes.append(0x00)
        bytes.append(0x00)
    }

    /// A primitive node of definite length.
    mutating func definite(_ tag: UInt8, _ content: ArraySlice<UInt8>) {
        bytes.append(tag)
        Self.appendLength(content.count, to: &bytes)
        bytes.append(contentsOf: content)
    }

    /// Bytes already encoded (a DER constant, a DER value).
    mutating func raw(_ encoded: [UInt8]) {
        bytes.append(contentsOf: encoded)
    }

    /// A definite length: one byte below 128, else 0x80 | count followed by the big-endian count.
    static func appendLength(_ length: Int, to out: inout [UInt8]) {
        if length < 0x80 {
            out.append(UInt8(length))
            return
        }
        var digits: [UInt8] = []
        var rest = length
        while rest > 0 {
            digits.append(UInt8(rest & 0xFF))
            rest >>= 8
        }
        out.append(0x80 | UInt8(digits.count))
        out.append(contentsOf: digits.reversed())
    }
}
