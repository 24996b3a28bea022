import EntitlementCore

/// A JSON object of Apple's, read leniently the way Apple writes it: numbers and booleans inside
/// `latest_receipt_info` and `pending_renewal_info` arrive as strings ("1567764000000", "true",
/// "1"), and spellings and types have changed over the years. Each accessor takes every form Apple
/// has used and rejects values that are not numbers or booleans in any form, so a malformed answer
/// fails loudly instead of being read as "absent". Errors name the key path, never a value.
struct WireObject {
    let object: JSONObject
    /// Where this object sits in the answer, e.g. `latest_receipt_info.1`.
    let path: String

    init(_ object: JSONObject, path: String = "") {
        self.object = object
        self.path = path
    }

    /// The whole answer, which must be an object.
    init(document value: JSONValue) throws {
        guard case .object(let object) = value else { throw WireFormatError(path: "", problem: "the answer is not a JSON object") }
        self.init(object)
    }

    private func failure(_ key: String, _ problem: String) -> WireFormatError {
        WireFormatError(path: path.isEmpty ? key : "\(path).\(key)", problem: problem)
    }

    /// A string; integers are accepted too (identifiers have been seen as numbers in hand-made fixtures).
    /// One holding a NUL character is refused: no store keeps it whole (PostgreSQL's text cannot
    /// hold one, SQLite's binding ends the string there), and a cut id would name another chain.
    func string(_ key: String) throws -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let text)?:
            guard !JSONText.holdsNUL(text) else { throw failure(key, "a NUL character in a string") }
            return text
        case .number(let text)? where Int64(text) != nil: return text
        default: throw failure(key, "expected a string")
        }
    }

    /// An integer sent as a JSON number or as a string of digits; nil when absent, null or "".
    func int64(_ key: String) throws -> Int64? {
        switch object[key] {
        case nil, .null?: return nil
        case .number(let text)?:
            if let number = Int64(text) { return number }
        case .string(let text)?:
            if let number = Int64(text) { return number }
            let trimmed = text.trimmingWhitespace
            if trimmed.isEmpty { return nil }
            if let number = Int64(trimmed) { return number }
        default: break
        }
        throw failure(key, "expected an integer or a string of digits")
    }

    /// A boolean sent as true/false, 1/0, "true"/"false" or "1"/"0"; nil when absent, null or "".
    func bool(_ key: String) throws -> Bool? {
        switch object[key] {
        case nil, .null?: return nil
        case .bool(let flag)?: return flag
        case .number("1")?: return true
        case .number("0")?: return false
        case .string(let text)?:
            switch text.trimmingWhitespace.lowercased() {
            case "true", "1": return true
            case "false", "0": return false
            case "": return nil
            default: break
            }
        default: break
        }
        throw failure(key, "expected a boolean, 0/1 or \"true\"/\"false\"")
    }

    /// A nested object; nil when absent or null.
    func object(_ key: String) throws -> WireObject? {
        switch object[key] {
        case nil, .null?: return nil
        case .object(let nested)?: return WireObject(nested, path: path.isEmpty ? key : "\(path).\(key)")
        default: throw failure(key, "expected an object")
        }
    }

    /// An array of objects, a single object standing for a one-element array, or nothing (empty).
    func objects(_ key: String) throws -> [WireObject] {
        let base = path.isEmpty ? key : "\(path).\(key)"
        switch object[key] {
        case nil, .null?: return []
        case .object(let single)?: return [WireObject(single, path: base)]
        case .array(let elements)?:
            return try elements.enumerated().map { offset, element in
                guard case .object(let nested) = element else { throw failure("\(key).\(offset)", "expected an object") }
                return WireObject(nested, path: "\(base).\(offset)")
            }
        default: throw failure(key, "expected an array of objects")
        }
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingWhitespace: Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else { return "" }
        return self[first...last]
    }
}
