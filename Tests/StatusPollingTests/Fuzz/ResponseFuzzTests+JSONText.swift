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

// MARK: - Editing and writing JSON text

extension ResponseFuzzTests {
    /// Every member of every object in `tree`, with how the client reads it.
    static func members(of tree: JSONValue) -> [Member] {
        var found: [Member] = []
        func walk(_ value: JSONValue, path: [Int], place: Place, depth: Int) {
            switch value {
            case .object(let object):
                for (index, member) in object.members.enumerated() {
                    let kind = kind(of: member.key, at: index, in: object, place: place)
                    found.append(Member(path: path + [index], key: member.key, value: member.value, kind: kind, depth: depth))
                    let inner: Place
                    switch (place, kind, member.key) {
                    case (.top, .object, _): inner = .receipt
                    case (.top, .objects, "latest_receipt_info"): inner = .transaction
                    case (.top, .objects, _): inner = .renewal
                    default: inner = .elsewhere
                    }
                    walk(member.value, path: path + [index], place: inner, depth: depth + 1)
                }
            case .array(let elements):
                for (index, element) in elements.enumerated() { walk(element, path: path + [index], place: place, depth: depth + 1) }
            default:
                break
            }
        }
        walk(tree, path: [], place: .top, depth: 1)
        return found
    }

    /// How `VerifyReceiptResponse` and its entries read `key`; only the first of repeated keys counts.
    static func kind(of key: String, at index: Int, in object: JSONObject, place: Place) -> Kind {
        guard object.members.firstIndex(where: { $0.key == key }) == index else { return .ignored }
        switch place {
        case .top:
            switch key {
            case "status": return .status
            case "environment", "latest_receipt": return .string
            case "is-retryable": return .bool
            // The second spelling is read only when the first is absent or null.
            case "is_retryable": return object["is-retryable"].map { $0 == .null } ?? true ? .bool : .ignored
            case "receipt": return .object
            case "latest_receipt_info", "pending_renewal_info": return .objects
            default: return .ignored
            }
        case .receipt:
            return key == "bundle_id" ? .string : .ignored
        case .transaction:
            switch key {
            case "product_id", "transaction_id", "original_transaction_id", "cancellation_reason", "subscription_group_identifier", "in_app_ownership_type":
                return .string
            case "purchase_date_ms", "expires_date_ms", "cancellation_date_ms": return .int64
            case "is_upgraded", "is_trial_period", "is_in_intro_offer_period": return .bool
            default: return .ignored
            }
        case .renewal:
            switch key {
            case "original_transaction_id", "product_id", "auto_renew_product_id": return .string
            case "auto_renew_status", "is_in_billing_retry_period": return .bool
            case "expiration_intent", "grace_period_expires_date_ms": return .int64
            default: return .ignored
            }
        case .elsewhere:
            return .ignored
        }
    }

    /// A string no answer holds, written in place of a value or key and then replaced by raw bytes.
    static let marker = "\u{1}fuzz\u{1}"

    /// `tree` written with the value at `path` replaced by `raw`, which need not be JSON.
    static func splice(_ tree: JSONValue, at path: [Int], raw: [UInt8]) -> [UInt8] {
        replacing(quoted(marker), in: tree.updating(at: path[...]) { _ in .string(marker) }.rendered, with: raw)
    }

    /// `tree` written with the key at `path` replaced by `raw` (quotes included).
    static func spliceKey(_ tree: JSONValue, at path: [Int], raw: [UInt8]) -> [UInt8] {
        replacing(quoted(marker), in: tree.updating(at: path.dropLast()) { $0.renamingMember(path.last!, to: marker) }.rendered, with: raw)
    }

    /// `tree` written with a new top-level member whose value is `raw`.
    static func adding(_ key: String, raw: [UInt8], to tree: JSONValue) -> [UInt8] {
        replacing(quoted(marker), in: tree.setting(key, .string(marker)).rendered, with: raw)
    }

    static func replacing(_ needle: [UInt8], in haystack: [UInt8], with replacement: [UInt8]) -> [UInt8] {
        // Foundation's search: a byte-by-byte loop in a debug build would cost most of the test's time.
        guard let found = Data(haystack).range(of: Data(needle)) else { return haystack }
        return Array(haystack[..<found.lowerBound]) + replacement + haystack[found.upperBound...]
    }

    /// A JSON string: quotes, backslashes and control characters escaped, everything else as UTF-8.
    static func quoted(_ text: String) -> [UInt8] { [UInt8(ascii: "\"")] + escaped(text) + [UInt8(ascii: "\"")] }

    static func escaped(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), byte]
            case 0..<0x20: out += Array(String(format: "\\u%04x", byte).utf8)
            default: out.append(byte)
            }
        }
        return out
    }

    /// `levels` nested arrays (shape 0), objects (1) or both in turn (2) around a 1.
    static func nesting(_ levels: Int, shape: Int) -> [UInt8] {
        var open: [UInt8] = []
        var close: [UInt8] = []
        for level in 0..<levels {
            if shape == 0 || (shape == 2 && level % 2 == 0) {
                open += [UInt8(ascii: "[")]
                close += [UInt8(ascii: "]")]
            } else {
                open += Array(#"{"a":"#.utf8)
                close += [UInt8(ascii: "}")]
            }
        }
        return open + [UInt8(ascii: "1")] + close.reversed()
    }
}
