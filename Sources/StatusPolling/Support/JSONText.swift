/// JSON text written by hand where an encoder per row would cost more than the row: the
/// verifyReceipt request body and the audit trail's column snapshots.
public enum JSONText {
    /// `text` as a JSON string literal, quotes included, escaped as RFC 8259 requires.
    public static func quoted(_ text: String) -> String {
        // Receipts (base64) and identifiers never need escaping: skip the scalar walk.
        if !needsEscaping(text) { return "\"" + text + "\"" }
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
        return out
    }

    /// Whether `text` holds a byte JSON requires to be escaped (a quote, a backslash, a control).
    public static func needsEscaping(_ text: String) -> Bool {
        func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            for byte in bytes where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return true }
            return false
        }
        var text = text
        return text.withUTF8(scan)
    }

    /// `text` quoted, or `null`.
    public static func quoted(_ text: String?) -> String { text.map(quoted) ?? "null" }

    /// A number, or `null`.
    public static func number<N: BinaryInteger>(_ value: N?) -> String { value.map { String($0) } ?? "null" }

    /// A boolean, or `null`.
    public static func bool(_ value: Bool?) -> String { value.map { $0 ? "true" : "false" } ?? "null" }
}
