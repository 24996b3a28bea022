import Foundation

/// base64url without padding (RFC 7515 §2), as JWS and JWT parts are written. Works on bytes:
/// a night verifies thousands of payloads, and Foundation's string replacing was most of their cost.
enum Base64URL {
    static func encode<D: DataProtocol>(_ bytes: D) -> String {
        var text = Array(Data(bytes).base64EncodedString().utf8)
        for index in text.indices {
            switch text[index] {
            case UInt8(ascii: "+"): text[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): text[index] = UInt8(ascii: "_")
            default: break
            }
        }
        while text.last == UInt8(ascii: "=") { text.removeLast() }
        return String(decoding: text, as: UTF8.self)
    }

    /// nil for text that is not base64url.
    static func decode<S: StringProtocol>(_ text: S) -> Data? {
        var bytes = Array(text.utf8)
        if bytes.count % 4 == 1 { return nil }
        for index in bytes.indices {
            switch bytes[index] {
            case UInt8(ascii: "-"): bytes[index] = UInt8(ascii: "+")
            case UInt8(ascii: "_"): bytes[index] = UInt8(ascii: "/")
            case UInt8(ascii: "+"), UInt8(ascii: "/"): return nil
            default: break
            }
        }
        if !bytes.contains(UInt8(ascii: "=")) {
            bytes += Array(repeating: UInt8(ascii: "="), count: (4 - bytes.count % 4) % 4)
        }
        return Data(base64Encoded: Data(bytes))
    }
}
