#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
    /// Eight bytes a step (the verifyReceipt body passes every receipt, 3 KB, through here: a byte
    /// at a time it was 1 % of a poll's CPU).
    public static func needsEscaping(_ text: String) -> Bool {
        func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            // A byte of `w` below 0x20, or equal to `"` or `\` (each a byte of `w ^ pattern` at 0).
            func flags(_ w: UInt64) -> Bool {
                let quote = w ^ (ones &* 0x22), backslash = w ^ (ones &* 0x5c)
                let below = (w &- ones &* 0x20) & ~w
                let zeroQuote = (quote &- ones) & ~quote, zeroBackslash = (backslash &- ones) & ~backslash
                return (below | zeroQuote | zeroBackslash) & highs != 0
            }
            var index = 0
            if let base = UnsafeRawPointer(bytes.baseAddress) {
                while index + 8 <= bytes.count {
                    if flags(base.loadUnaligned(fromByteOffset: index, as: UInt64.self)) { return true }
                    index += 8
                }
            }
            for byte in bytes[index...] where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return true }
            return false
        }
        var text = text
        return text.withUTF8(scan)
    }

    /// Whether `text` holds a NUL character: one `memchr` over its UTF-8 (the latest receipt, 3 KB
    /// of base64, is read through here with every answer; a walk through `utf8` cost 2 % of a run).
    public static func holdsNUL(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in bytes.baseAddress.map { memchr($0, 0, bytes.count) != nil } ?? false }
    }

    /// Appends `text` to `out` as a JSON string literal, quotes included (``quoted(_:)`` without
    /// the intermediate string); `null` for nil.
    public static func append(_ text: String?, to out: inout String) {
        guard let text else { return out.append("null") }
        if needsEscaping(text) { return out.append(quoted(text)) }
        out.append("\"")
        out.append(text)
        out.append("\"")
    }

    /// An object of string members, keys in code-point order (the order `.sortedKeys` gives
    /// ASCII keys): the run's options, written without JSONSerialization, whose key sort opens
    /// ICU's collator (3 MB of a run's resident memory).
    public static func object(_ members: [String: String]) -> String {
        var out = "{"
        for key in members.keys.sorted() {
            if out.utf8.count > 1 { out.append(",") }
            append(key, to: &out)
            out.append(":")
            append(members[key], to: &out)
        }
        out.append("}")
        return out
    }

    /// `text` quoted, or `null`.
    public static func quoted(_ text: String?) -> String { text.map(quoted) ?? "null" }

    /// A number, or `null`.
    public static func number<N: BinaryInteger>(_ value: N?) -> String { value.map { String($0) } ?? "null" }

    /// A boolean, or `null`.
    public static func bool(_ value: Bool?) -> String { value.map { $0 ? "true" : "false" } ?? "null" }
}
