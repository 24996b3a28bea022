import AppStoreSimulator
import Foundation
import GRDB
import Logging
import NIOCore
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import SQLiteStore
@testable import StatusPolling

// MARK: - Values, by how the client reads them

extension ResponseFuzzTests {
    /// JSON's four whitespace bytes.
    static let whitespace: [UInt8] = [0x20, 0x0A, 0x0D, 0x09]

    /// The reader refuses documents deeper than this (`JSONParser.maxDepth`), rather than risk the stack.
    static let depthLimit = 64

    enum Pool { case refused, absent, equivalent }

    /// `member` replaced by a value from `pool`: refused, read as absent, or read as the same value.
    static func substitution(_ member: Member, in base: Base, from pool: Pool, _ rng: inout SeededRandom) -> Generated? {
        let forms: [String]
        switch pool {
        case .refused: forms = refused(member.kind)
        case .absent: forms = absent(member.kind)
        case .equivalent: forms = equivalents(of: member)
        }
        guard let text = forms.randomElement(using: &rng) else { return nil }
        let body = splice(base.tree, at: member.path, raw: Array(text.utf8))
        switch pool {
        case .refused: return (body, .unexpectedResponse, "\(member.key) = \(text)")
        case .absent: return (body, .like(base.tree.removing(at: member.path).rendered), "\(member.key) = \(text), read as absent")
        case .equivalent: return (body, .like(base.rendered), "\(member.key) = \(text), read as before")
        }
    }

    /// Strings that are not a 64-bit integer in any form Apple uses.
    static let nonNumericStrings = [
        #""abc""#, #""next tuesday""#, #""1.5""#, #""1e3""#, #""0x1F""#, #""NaN""#, #""Infinity""#, #""-Infinity""#,
        #""9223372036854775808""#, #""-9223372036854775809""#, #""1,570,356,000,000""#, #""1 570 356 000 000""#,
        #""\u0661\u0665\u0667""#, #""１２３""#, #""12abc""#, #""--1""#, #""1-""#, #""\u00a0123""#, #""\n123""#, #""123\r""#,
        #""null""#, #""true""#, #""1570356000000ms""#, #""+-1""#, #""0b101""#, #""1_000""#,
    ]
    static let integerRejects = [
        "{}", "[]", "true", "false", "1.5", "1e3", "1e309", "-0.0", "9223372036854775808", #"["1"]"#, #"{"ms": "1"}"#,
    ] + nonNumericStrings
    static let boolRejects = [
        "{}", "[]", "2", "-1", "1.0", "-0", "0.0", "1e309", "10", #""yes""#, #""no""#, #""maybe""#, #""2""#, #""NaN""#, #""on""#,
        #""off""#, #""Y""#, #""t""#, #""1.0""#, #""\n1""#, #""01""#, #""truee""#, #"["true"]"#,
    ]
    static let stringRejects = ["{}", "[]", "true", "false", "1.5", "1e3", "1e309", "-0.0", #"["x"]"#, #"{"a": 1}"#, "9223372036854775808", "0.0", "-1.5e-3"]
    static let objectRejects = [#""x""#, "1", "true", "[]", "[{}]", #""{}""#, #"[{"bundle_id": "com.example.premium"}]"#]
    static let objectsRejects = [#""x""#, "1", "true", "[1]", #"["x"]"#, "[null]", "[[]]", "[{}, 1]", #""""#, #""[]""#, "false", "0"]
    /// Every value above, for members the client never reads.
    static let anyValues = Array(Set(integerRejects + boolRejects + stringRejects + objectRejects + objectsRejects + ["null", #""""#])).sorted()

    static func refused(_ kind: Kind) -> [String] {
        switch kind {
        case .status: integerRejects + ["null", #""""#, #"" ""#]
        case .int64: integerRejects
        case .bool: boolRejects
        case .string: stringRejects
        case .object: objectRejects
        case .objects: objectsRejects
        case .ignored: []
        }
    }

    /// Values read as if the member were not there.
    static func absent(_ kind: Kind) -> [String] {
        switch kind {
        case .int64: ["null", #""""#, #""  ""#, #""\t""#, #"" \t ""#]
        case .bool: ["null", #""""#, #"" ""#]
        case .string, .object: ["null"]
        case .objects: ["null", "[]"]
        case .status, .ignored: []
        }
    }

    /// Other spellings of the member's value that Apple has used.
    static func equivalents(of member: Member) -> [String] {
        switch member.kind {
        case .status, .int64:
            guard let digits = member.value.integerText else { return [] }
            return [#""\#(digits)""#, #"" \#(digits)""#, #""\#(digits)\t""#, #"" \t\#(digits) ""#] + (isCanonicalInteger(digits) ? [digits] : [])
        case .bool:
            guard let flag = member.value.flag else { return [] }
            return flag ? ["true", "1", #""1""#, #""true""#, #""TRUE""#, #"" True ""#, #""\t1""#] : ["false", "0", #""0""#, #""false""#, #""FALSE""#, #""False ""#, #"" 0""#]
        case .string:
            switch member.value {
            case .string(let text): return [String(decoding: quoted(text), as: UTF8.self)] + (isCanonicalInteger(text) ? [text] : [])
            case .number(let text): return [#""\#(text)""#, text]
            default: return []
            }
        case .objects:
            switch member.value {
            case .array(let elements) where elements.count == 1: return [String(decoding: elements[0].rendered, as: UTF8.self)]
            case .object: return ["[" + String(decoding: member.value.rendered, as: UTF8.self) + "]"]
            default: return []
            }
        case .object, .ignored: return []
        }
    }

    /// A well-typed value other than the member's, as text and as the value it reads as.
    static func wellTyped(_ kind: Kind, _ rng: inout SeededRandom) -> (String, JSONValue) {
        switch kind {
        case .status:
            let code = ["0", "21003", "21005", "21007", "21100"].randomElement(using: &rng)!
            return (code, .number(code))
        case .string:
            let text = "dup-\(rng.next() % 1_000)"
            return (#""\#(text)""#, .string(text))
        case .int64:
            let ms = String(AppleJSON.t0 + Int64.random(in: -90...90, using: &rng) * AppleJSON.day)
            return (#""\#(ms)""#, .string(ms))
        case .bool:
            let flag = rng.chance(0.5) ? "1" : "0"
            return (#""\#(flag)""#, .string(flag))
        case .object:
            return (#"{"bundle_id": "com.other.app"}"#, .object(JSONObject(members: [("bundle_id", .string("com.other.app"))])))
        case .objects:
            return ("[]", .array([]))
        case .ignored:
            return (#""dup""#, .string("dup"))
        }
    }

    static let dateForms = [
        #""2019-10-06 10:00:00 Etc/GMT""#, #""2019-10-06T10:00:00Z""#, #""2019-10-06T10:00:00.000+00:00""#, #""Sun, 06 Oct 2019 10:00:00 GMT""#,
        #""1570356000.000""#, #""1.570356E12""#, "1.570356e12", "1570356000000.0", #""2019-10-06""#, #""10/06/2019 03:00:00 PDT""#,
        #""1570356000000 Etc/GMT""#, #""@1570356000""#, #"{"ms": 1570356000000}"#, "[2019, 10, 6]",
    ]
    /// Not JSON at all.
    static let invalidTokens = [
        "NaN", "-NaN", "Infinity", "-Infinity", "+Infinity", "+1", ".5", "01", "-01", "1.", "0x10", "nan", "inf", "undefined", "1e", "1e+",
        "--1", "Inf", "None", "True", "NULL", "-", "1.5.2", "0.e1",
    ]
    /// JSON numbers no 64-bit integer reader takes, except those in `integerValued`.
    static let oddNumbers = [
        "1e309", "-1e309", "1E400", "1e-400", "-0", "-0.0", "0e0", "0.0", "-0e-0", "123456789012345678901234567890", "4.9e-324",
        "1.7976931348623157e308", "-9223372036854775809", "9223372036854775807",
    ]
    static let integerValued: Set = ["-0", "9223372036854775807"]
    static let nanStrings = ["NaN", "Infinity", "-Infinity", "-0", "1e309", "nan", "-nan"]
    static let invalidUTF8: [[UInt8]] = [
        [0xFF], [0xFE], [0xC0, 0xAF], [0xC1, 0xBF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80],
        [0xF5, 0x80, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xBF], [0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xC3, 0x28],
    ]
    static let loneSurrogates = [#"\ud800"#, #"\udbff"#, #"\udc00"#, #"\udfff"#, #"\ud800\u0041"#, #"\ud800x"#, #"\udc00\ud800"#, #"\ud800\ud800"#]
    /// Valid text as written inside quotes, and what it spells.
    static let validOddities: [(String, String)] = [
        (#"\ud83d\ude00"#, "😀"), ("😀", "😀"), (#"\u00e9"#, "é"), ("é", "é"), ("\u{FFFF}", "\u{FFFF}"), (#"\u2028"#, "\u{2028}"),
        (#"\u0000"#, "\u{0}"), ("e\u{301}", "e\u{301}"), ("\u{7F}", "\u{7F}"), (#"\uFEFF"#, "\u{FEFF}"), (#"\/"#, "/"),
        (#"\uDBFF\uDFFF"#, "\u{10FFFF}"), ("\u{10FFFF}", "\u{10FFFF}"),
    ]

    /// `-?(0|[1-9][0-9]*)` with at most 18 digits: a JSON integer that fits in 64 bits.
    static func isCanonicalInteger(_ text: String) -> Bool {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ ("0"..."9").contains($0) }) else { return false }
        return digits == "0" || digits.first != "0"
    }
}
