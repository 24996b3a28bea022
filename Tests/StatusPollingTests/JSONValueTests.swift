import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The focused JSON reader: strict RFC 8259, numbers kept exact, and every fixture read the same
/// as Foundation's independent `JSONSerialization` reads it.
@Suite struct JSONValueTests {
    func parse(_ text: String) throws -> JSONValue { try JSONValue.parse(Array(text.utf8)) }

    @Test func readsEveryKindOfValue() throws {
        let value = try parse(#" {"a": [1, -2.5e3, "x", true, false, null, {}], "b": {"c": []}} "#)
        #expect(value == .object(JSONObject(members: [
            ("a", .array([.number("1"), .number("-2.5e3"), .string("x"), .bool(true), .bool(false), .null, .object(JSONObject(members: []))])),
            ("b", .object(JSONObject(members: [("c", .array([]))]))),
        ])))
    }

    @Test func stringsWithEscapesAndUnicode() throws {
        let value = try parse(#"["q\"b\\s\/\b\f\n\r\t", "\u00e9\u20AC", "\ud83d\ude00", "é€😀"]"#)
        #expect(value == .array([.string("q\"b\\s/\u{8}\u{c}\n\r\t"), .string("é€"), .string("😀"), .string("é€😀")]))
    }

    /// Strings are scanned eight bytes at a time until a byte needs a look: each such byte at every
    /// offset of strings around a word's length is read as a byte-at-a-time reader reads it.
    @Test func aByteThatNeedsALookIsSeenAtEveryOffset() throws {
        for length in 1...26 {
            for offset in 0..<length {
                let before = String(repeating: "a", count: offset), after = String(repeating: "Z", count: length - offset - 1)
                #expect(try parse("\"\(before)\\\"\(after)\"") == .string(before + "\"" + after))
                #expect(try parse("\"\(before)\\n\(after)\"") == .string(before + "\n" + after))
                #expect(try parse("\"\(before)é\(after)\"") == .string(before + "é" + after))
                #expect(try parse("\"\(before)\u{7F}\(after)\"") == .string(before + "\u{7F}" + after))
                #expect(throws: JSONSyntaxError.self) { try parse("\"\(before)\u{1F}\(after)\"") }
                #expect(throws: JSONSyntaxError.self) { try parse("\"\(before)\u{0}\(after)\"") }
                // The string ends at the first quote: what follows it is not a document's end.
                #expect(throws: JSONSyntaxError.self) { try parse("\"\(before)\"\(after)\"") }
                #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(Array("\"\(before)".utf8) + [0xFF] + Array("\(after)\"".utf8)) }
            }
        }
        // Every byte from 0x20 to 0x7F but the quote and the backslash is plain; none other is.
        for byte in UInt8(0)...UInt8(255) {
            let plain = (0x20...0x7F).contains(byte) && byte != 0x22 && byte != 0x5C
            for position in 0..<8 {
                let word = UInt64(0x61) &* 0x0101_0101_0101_0101 & ~(UInt64(0xFF) << (8 * position)) | UInt64(byte) << (8 * position)
                #expect(JSONValue.isPlain(word) == plain, "byte \(byte) at \(position)")
            }
        }
    }

    @Test func millisecondsStayExact() throws {
        let value = try parse(#"{"ms": 9223372036854775807, "text": "1570356000000"}"#)
        guard case .object(let object) = value else { Issue.record("not an object"); return }
        #expect(try WireObject(object).int64("ms") == Int64.max)
        #expect(try WireObject(object).int64("text") == 1_570_356_000_000)
    }

    @Test(arguments: [
        #"{"status": -}"#, "{\"status\": 0, \"environment\": \"Pro\u{1}duction\"}", #"{"status": 0} trailing"#,
        #"{"status": 0"#, #"{"status" 0}"#, #"{"status": 0,}"#, #"[1 2]"#, #"{"a": 01}"#, #"{"a": 1.}"#, #"{"a": .5}"#,
        #"{"a": "\x"}"#, #"{"a": "\ud800"}"#, #"{"a": "\udc00x"}"#, #"{"a": tru}"#, "", "   ", "<html>", #"{'a': 1}"#,
        #"{"a": "unterminated}"#, #"{"a": 1e}"#, #"{"a": -}"#, #"{"a": "\u12"}"#,
    ])
    func rejectsWhatIsNotJSON(text: String) {
        #expect(throws: JSONSyntaxError.self) { try parse(text) }
    }

    @Test func refusesDeepNesting() throws {
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JSONSyntaxError.self) { try parse(deep) }
        let fine = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        _ = try parse(fine)
    }

    /// An independent reader agrees on every fixture: same keys, same strings, same numbers.
    @Test(arguments: ["renewal-production.json", "grace-period-single-object.json", "internal-error-is_retryable.json", "internal-error-is-retryable-false.json", "malformed-expires.json"])
    func agreesWithJSONSerialization(fixture: String) throws {
        let data = try Fixture.data(fixture)
        let ours = try JSONValue.parse(data)
        let theirs = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        #expect(Self.same(ours, theirs), "\(fixture)")
    }

    static func same(_ ours: JSONValue, _ theirs: Any) -> Bool {
        switch ours {
        case .object(let object):
            guard let dictionary = theirs as? [String: Any], dictionary.count == object.members.count else { return false }
            return object.members.allSatisfy { member in dictionary[member.key].map { same(member.value, $0) } ?? false }
        case .array(let elements):
            guard let array = theirs as? [Any], array.count == elements.count else { return false }
            return zip(elements, array).allSatisfy { same($0, $1) }
        case .string(let text): return theirs as? String == text
        case .number(let text):
            if let integer = Int64(text) { return (theirs as? NSNumber)?.int64Value == integer }
            return (theirs as? NSNumber)?.doubleValue == Double(text)
        case .bool(let flag): return (theirs as? NSNumber).map { $0.boolValue == flag } ?? false
        case .null: return theirs is NSNull
        }
    }
}
