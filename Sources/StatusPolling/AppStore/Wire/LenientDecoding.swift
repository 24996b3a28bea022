import Foundation

/// Apple sends numbers and booleans inside `latest_receipt_info` and `pending_renewal_info` as
/// strings ("1567764000000", "true", "1"), and has switched spellings and types over the years.
/// These helpers accept each form Apple has used, and reject values that are not numbers or
/// booleans in any form, so a malformed answer fails loudly instead of being read as "absent".
extension KeyedDecodingContainer {
    /// An integer sent as a JSON number or as a string of digits; nil when the key is absent or null.
    func decodeLenientInt64(forKey key: Key) throws -> Int64? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let number = try? decode(Int64.self, forKey: key) { return number }
        if let text = try? decode(String.self, forKey: key) {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { return nil }
            if let number = Int64(trimmed) { return number }
        }
        throw DecodingError.dataCorruptedError(
            forKey: key, in: self, debugDescription: "expected an integer or a string of digits")
    }

    /// A boolean sent as true/false, 1/0, "true"/"false" or "1"/"0"; nil when absent or null.
    func decodeLenientBool(forKey key: Key) throws -> Bool? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let flag = try? decode(Bool.self, forKey: key) { return flag }
        if let number = try? decode(Int.self, forKey: key), number == 0 || number == 1 { return number == 1 }
        if let text = try? decode(String.self, forKey: key) {
            switch text.trimmingCharacters(in: .whitespaces).lowercased() {
            case "true", "1": return true
            case "false", "0": return false
            case "": return nil
            default: break
            }
        }
        throw DecodingError.dataCorruptedError(
            forKey: key, in: self, debugDescription: "expected a boolean, 0/1 or \"true\"/\"false\"")
    }

    /// A string; numbers are accepted too (identifiers have been seen as numbers in hand-made fixtures).
    func decodeLenientString(forKey key: Key) throws -> String? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let text = try? decode(String.self, forKey: key) { return text }
        if let number = try? decode(Int64.self, forKey: key) { return String(number) }
        throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "expected a string")
    }
}

/// A coding key built from any string, so one type can read both spellings of a field.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
