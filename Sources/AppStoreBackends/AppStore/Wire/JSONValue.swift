/// A JSON document as values: what Apple's answers are read into before the wire models pick
/// their fields.
///
/// A focused reader rather than `JSONDecoder` because the profile said so: decoding one
/// verifyReceipt answer through `Codable` cost more CPU than the HTTP exchange that carried it
/// (docs/PERFORMANCE.md). It is strict RFC 8259 — anything that is not JSON is a
/// ``JSONSyntaxError``, which the client reports as `not_json` — and it keeps numbers as their
/// text so that 64-bit millisecond values are read exactly.
enum JSONValue: Sendable, Equatable {
    case object(JSONObject)
    case array([JSONValue])
    case string(String)
    /// A number's literal text, checked against JSON's grammar.
    case number(String)
    case bool(Bool)
    case null

    /// Parses one whole document; whitespace may surround it, nothing else may follow it.
    static func parse<Bytes: Collection>(_ bytes: Bytes) throws -> JSONValue where Bytes.Element == UInt8 {
        if let value = try bytes.withContiguousStorageIfAvailable({ try parse(UnsafeRawBufferPointer($0)) }) { return value }
        return try Array(bytes).withUnsafeBytes { try parse($0) }
    }

    private static func parse(_ buffer: UnsafeRawBufferPointer) throws -> JSONValue {
        var parser = JSONParser(bytes: buffer)
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == buffer.count else { throw parser.error("unexpected bytes after the document") }
        return value
    }
}

extension JSONValue {
    /// Whether none of the eight bytes of `word` is a quote, a backslash, a control character or
    /// non-ASCII (each test sets a byte's high bit where it holds; exact as a yes or no).
    static func isPlain(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        let quote = hasZeroByte(word ^ (ones &* 0x22)), backslash = hasZeroByte(word ^ (ones &* 0x5C))
        let control = (word &- ones &* 0x20) & ~word & highs
        return (quote | backslash | control | (word & highs)) == 0
    }
}

/// A recursive-descent reader over raw bytes.
private struct JSONParser {
    let bytes: UnsafeRawBufferPointer
    var index = 0
    /// Deeper documents are refused rather than risking the stack.
    static let maxDepth = 64

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    func error(_ problem: String) -> JSONSyntaxError { JSONSyntaxError(offset: index, problem: problem) }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    mutating func value(depth: Int) throws -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw error("the document ends where a value should be") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return .object(try object(depth: depth + 1))
        case UInt8(ascii: "["): return .array(try array(depth: depth + 1))
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw error("a value cannot start with this byte")
        }
    }

    mutating func object(depth: Int) throws -> JSONObject {
        guard depth <= Self.maxDepth else { throw error("nested deeper than \(Self.maxDepth) levels") }
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return JSONObject(members: members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a key in quotes") }
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':' after a key") }
            index += 1
            members.append((key, try value(depth: depth)))
            skipWhitespace()
            guard index < bytes.count else { throw error("the document ends inside an object") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return JSONObject(members: members)
            default: throw error("expected ',' or '}' in an object")
            }
        }
    }

    mutating func array(depth: Int) throws -> [JSONValue] {
        guard depth <= Self.maxDepth else { throw error("nested deeper than \(Self.maxDepth) levels") }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return elements
        }
        while true {
            elements.append(try value(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw error("the document ends inside an array") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return elements
            default: throw error("expected ',' or ']' in an array")
            }
        }
    }

    mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count,
            memcmpEqual(bytes.baseAddress! + index, word.utf8Start, count)
        else { throw error("expected \(word)") }
        index += count
    }

    /// A string; the common case, with no escape, is one scan and one copy.
    mutating func string() throws -> String {
        index += 1
        let start = index
        var ascii = true
        // Eight bytes at a time while none needs a look (a receipt is 3 KB of base64: the byte
        // loop alone was 2 % of a poll's CPU); the byte loop takes over at the first that does.
        while index + 8 <= bytes.count, JSONValue.isPlain(bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)) { index += 8 }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                index += 1
                // ASCII (receipts, ids, dates: nearly every string Apple sends) is UTF-8 as it
                // stands; validating it went through generic metadata lookups, 2 % of a poll's CPU.
                if ascii { return String(decoding: raw, as: UTF8.self) }
                // Bytes that are not UTF-8 are not JSON text (RFC 8259 §8.1): refused, never repaired
                // into U+FFFD, so a corrupted body cannot pass for an answer.
                guard let text = String(validating: raw, as: UTF8.self) else {
                    index -= 1
                    throw error("a string that is not UTF-8")
                }
                return text
            }
            if byte == UInt8(ascii: "\\") { return try escapedString(from: start) }
            if byte < 0x20 { throw error("a control character inside a string") }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        throw error("the document ends inside a string")
    }

    private mutating func escapedString(from start: Int) throws -> String {
        var utf8 = Array(UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: utf8, as: UTF8.self) else { throw error("a string that is not UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw error("the document ends inside an escape") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        // A high surrogate must be followed by an escaped low one.
                        guard index + 6 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                            throw error("a lone surrogate in a \\u escape")
                        }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("a lone surrogate in a \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw error("a lone surrogate in a \\u escape")
                    }
                    utf8.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
                default:
                    throw error("an unknown escape")
                }
            case 0..<0x20:
                throw error("a control character inside a string")
            default:
                utf8.append(byte)
            }
        }
        throw error("the document ends inside a string")
    }

    private mutating func hex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("a short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("a bad hex digit in a \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, as its text.
    mutating func number() throws -> String {
        let start = index
        func digits() -> Int {
            let from = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - from
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw error("a number without digits") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if digits() == 0 {
            throw error("a number without digits")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw error("a number with no digits after '.'") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw error("a number with no digits in its exponent") }
        }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }
}

private func memcmpEqual(_ lhs: UnsafeRawPointer, _ rhs: UnsafePointer<UInt8>, _ count: Int) -> Bool {
    for offset in 0..<count where lhs.load(fromByteOffset: offset, as: UInt8.self) != rhs[offset] { return false }
    return true
}
