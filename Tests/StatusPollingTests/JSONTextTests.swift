import EntitlementCore
import StatusPolling
import Testing

/// `JSONText.needsEscaping` reads eight bytes a step: it must agree with a byte-by-byte reading
/// wherever the byte lies (in a word, across the tail) and whatever its neighbours are.
@Suite struct JSONTextTests {
    private static func byByte(_ text: String) -> Bool {
        text.utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
    }

    @Test func everyASCIIByteAtEveryPlace() {
        for length in [1, 7, 8, 9, 16, 17, 23] {
            for position in 0..<length {
                for byte in UInt8(1)...0x7f {
                    var bytes = [UInt8](repeating: UInt8(ascii: "A"), count: length)
                    bytes[position] = byte
                    let text = String(decoding: bytes, as: UTF8.self)
                    #expect(JSONText.needsEscaping(text) == Self.byByte(text), "byte \(byte) at \(position) of \(length)")
                }
            }
        }
    }

    @Test func borrowsAndMultiByteCharactersRaiseNothing() {
        // Bytes just above the bounds (0x20, 0x21, 0x23, 0x5b, 0x5d) beside each other, and
        // UTF-8 continuation bytes (0x80…0xbf), which a carry in the word arithmetic could mistake.
        for text in [" !#[]  !#[]", "ünïcødé — ok ✓ 日本語テキスト", String(repeating: "MIIT+/=09az", count: 300), ""] {
            #expect(JSONText.needsEscaping(text) == false)
        }
        for text in ["ü\"", "日本語\\", "é\u{1f}", String(repeating: "MIIT", count: 750) + "\n"] {
            #expect(JSONText.needsEscaping(text) == true)
        }
        #expect(JSONText.quoted("a\"b\\c\nd") == #""a\"b\\c\nd""#)
    }

    /// The run's options in `poll_runs.options`: keys sorted, values escaped, an empty object as `{}`.
    @Test func anObjectOfStringsHasItsKeysSorted() {
        #expect(JSONText.object([:]) == "{}")
        #expect(JSONText.object(["concurrency": "64", "backend": "verify-receipt", "bundle_id": "com.example \"quoted\""])
            == #"{"backend":"verify-receipt","bundle_id":"com.example \"quoted\"","concurrency":"64"}"#)
    }
}
