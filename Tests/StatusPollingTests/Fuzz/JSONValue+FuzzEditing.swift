import AppStoreSimulator
@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Edits of a parsed answer for the fuzz tests: read a member, replace, remove or rename one, and
/// write the tree back as JSON text.
extension JSONValue {
    func member(_ key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    func memberIndex(_ key: String) -> Int? {
        if case .object(let object) = self { return object.members.firstIndex { $0.key == key } }
        return nil
    }

    /// Digits, as a string or a number.
    var integerText: String? {
        switch self {
        case .string(let text), .number(let text):
            return !text.isEmpty && text.allSatisfy({ ("0"..."9").contains($0) }) ? text : nil
        default: return nil
        }
    }

    /// A flag in any of Apple's spellings.
    var flag: Bool? {
        switch self {
        case .bool(let flag): return flag
        case .string("true"), .string("1"), .number("1"): return true
        case .string("false"), .string("0"), .number("0"): return false
        default: return nil
        }
    }

    /// This value with the one at `path` (member or element indexes) transformed.
    func updating(at path: ArraySlice<Int>, _ transform: (JSONValue) -> JSONValue) -> JSONValue {
        guard let first = path.first else { return transform(self) }
        switch self {
        case .object(var object):
            object.members[first].value = object.members[first].value.updating(at: path.dropFirst(), transform)
            return .object(object)
        case .array(var elements):
            elements[first] = elements[first].updating(at: path.dropFirst(), transform)
            return .array(elements)
        default:
            return self
        }
    }

    /// This value without the member or element at `path`.
    func removing(at path: [Int]) -> JSONValue {
        updating(at: path.dropLast()) { parent in
            switch parent {
            case .object(var object):
                object.members.remove(at: path.last!)
                return .object(object)
            case .array(var elements):
                elements.remove(at: path.last!)
                return .array(elements)
            default:
                return parent
            }
        }
    }

    /// This object with `key` set to `value` (appended when new), or removed when `value` is nil.
    func setting(_ key: String, _ value: JSONValue?) -> JSONValue {
        guard case .object(var object) = self else { return self }
        if let index = object.members.firstIndex(where: { $0.key == key }) {
            if let value { object.members[index].value = value } else { object.members.remove(at: index) }
        } else if let value {
            object.members.append((key, value))
        }
        return .object(object)
    }

    func renamingMember(_ index: Int, to key: String) -> JSONValue {
        guard case .object(var object) = self else { return self }
        object.members[index].key = key
        return .object(object)
    }

    /// The paths of every object and every array, the document included.
    var containers: (objects: [[Int]], arrays: [[Int]]) {
        var objects: [[Int]] = []
        var arrays: [[Int]] = []
        func walk(_ value: JSONValue, _ path: [Int]) {
            switch value {
            case .object(let object):
                objects.append(path)
                for (index, member) in object.members.enumerated() { walk(member.value, path + [index]) }
            case .array(let elements):
                arrays.append(path)
                for (index, element) in elements.enumerated() { walk(element, path + [index]) }
            default: break
            }
        }
        walk(self, [])
        return (objects, arrays)
    }

    var rendered: [UInt8] {
        var out: [UInt8] = []
        render(into: &out) { _ in }
        return out
    }

    /// Written with random JSON whitespace between tokens.
    func rendered(whitespace rng: inout SeededRandom) -> [UInt8] {
        var out: [UInt8] = []
        render(into: &out) { out in
            guard rng.chance(0.3) else { return }
            for _ in 0..<Int.random(in: 1...3, using: &rng) { out.append(ResponseFuzzTests.whitespace.randomElement(using: &rng)!) }
        }
        return out
    }

    func render(into out: inout [UInt8], space: (inout [UInt8]) -> Void) {
        space(&out)
        switch self {
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            for (index, member) in object.members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                space(&out)
                out += ResponseFuzzTests.quoted(member.key)
                space(&out)
                out.append(UInt8(ascii: ":"))
                member.value.render(into: &out, space: space)
            }
            space(&out)
            out.append(UInt8(ascii: "}"))
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                element.render(into: &out, space: space)
            }
            space(&out)
            out.append(UInt8(ascii: "]"))
        case .string(let text): out += ResponseFuzzTests.quoted(text)
        case .number(let text): out += Array(text.utf8)
        case .bool(let flag): out += Array((flag ? "true" : "false").utf8)
        case .null: out += Array("null".utf8)
        }
        space(&out)
    }
}
