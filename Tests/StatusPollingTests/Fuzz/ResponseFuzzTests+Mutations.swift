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

// MARK: - One mutation per category

extension ResponseFuzzTests {
    /// Cut before the closing brace: no prefix of an object is a whole document.
    static func truncated(_ base: Base, _ rng: inout SeededRandom) -> Generated {
        let full: [UInt8]
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: full = base.bytes
        case 1: full = base.tree.rendered
        default: full = base.tree.rendered(whitespace: &rng)
        }
        let close = full.lastIndex(of: UInt8(ascii: "}"))!
        let cut = Int.random(in: 0..<close, using: &rng)
        return (Array(full[..<cut]), .notJSON, "cut at \(cut) of \(full.count)")
    }

    /// A value of a type the member is never sent as; an ignored member may hold anything.
    static func wrongType(_ base: Base, _ rng: inout SeededRandom) -> Generated {
        let members = base.members
        let read = members.filter { $0.kind != .ignored }
        if !read.isEmpty, rng.chance(0.8) {
            let member = read.randomElement(using: &rng)!
            let roll = Double.random(in: 0..<1, using: &rng)
            let pool: Pool = roll < 0.7 ? .refused : roll < 0.85 ? .absent : .equivalent
            return substitution(member, in: base, from: pool, &rng) ?? substitution(member, in: base, from: .refused, &rng)!
        }
        let text = anyValues.randomElement(using: &rng)!
        guard let member = members.filter({ $0.kind == .ignored }).randomElement(using: &rng) else {
            return (adding("x_fuzz", raw: Array(text.utf8), to: base.tree), .like(base.rendered), "x_fuzz: \(text) added")
        }
        return (splice(base.tree, at: member.path, raw: Array(text.utf8)), .like(base.rendered), "ignored \(member.key) = \(text)")
    }

    /// A missing or null array reads as empty; a single object as a one-element array.
    static func missingOrNullArray(_ base: Base, _ row: SubscriptionRow, _ rng: inout SeededRandom) -> Generated {
        let names = ["latest_receipt_info", "pending_renewal_info", "receipt"]
        let candidates = base.members.filter { ($0.path.count == 1 && names.contains($0.key)) || $0.key == "in_app" }
        guard let member = candidates.randomElement(using: &rng) else {
            let key = ["latest_receipt_info", "pending_renewal_info"].randomElement(using: &rng)!
            let text = ["null", "[]"].randomElement(using: &rng)!
            return (adding(key, raw: Array(text.utf8), to: base.tree), .like(base.rendered), "\(key): \(text) added")
        }
        let removed = base.tree.removing(at: member.path).rendered
        let variant = Int.random(in: 0..<4, using: &rng)
        let body: [UInt8]
        let note: String
        switch variant {
        case 0: (body, note) = (removed, "\(member.key) removed")
        case 1: (body, note) = (splice(base.tree, at: member.path, raw: Array("null".utf8)), "\(member.key) null")
        case 2: (body, note) = (splice(base.tree, at: member.path, raw: Array("[]".utf8)), "\(member.key) []")
        default:
            switch member.value {
            case .array(let elements) where elements.count == 1:
                (body, note) = (splice(base.tree, at: member.path, raw: elements[0].rendered), "\(member.key) as its single object")
            case .object:
                (body, note) = (splice(base.tree, at: member.path, raw: Array("[".utf8) + member.value.rendered + Array("]".utf8)), "\(member.key) wrapped in an array")
            case .array(let elements) where elements.isEmpty:
                (body, note) = (splice(base.tree, at: member.path, raw: Array("[null]".utf8)), "\(member.key) with a null entry")
            default:
                (body, note) = (splice(base.tree, at: member.path, raw: Array(member.value.rendered.dropLast()) + Array(", null]".utf8)), "\(member.key) with a null entry")
            }
        }
        let expected: Expected
        switch (member.key, variant) {
        case ("in_app", _): expected = .like(base.rendered)
        case ("receipt", 2), ("receipt", 3): expected = .unexpectedResponse
        case ("receipt", _): expected = base.reachesDecision ? .rejected(.bundleMismatch) : .like(removed)
        case (_, 3): expected = note.hasSuffix("null entry") ? .unexpectedResponse : .like(base.rendered)
        case ("latest_receipt_info", _) where base.reachesDecision:
            expected = .rejected(row.state.originalTransactionID == nil ? .noSubscriptionInReceipt : .chainNotInReceipt)
        default: expected = .like(removed)
        }
        return (body, expected, note)
    }

    /// Hundreds of kilobytes: padding Apple might add, a long history, whitespace, or garbage.
    static func hugeBody(_ base: Base, _ rng: inout SeededRandom) -> Generated {
        let size = Int.random(in: 100_000...400_000, using: &rng)
        switch Int.random(in: 0..<6, using: &rng) {
        case 0:
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
            let text = String((0..<size).map { _ in alphabet.randomElement(using: &rng)! })
            return (adding("x_fuzz_padding", raw: quoted(text), to: base.tree), .like(base.rendered), "a \(size)-byte unknown string")
        case 1:
            let text = "[" + (0..<size / 7).map { String($0) }.joined(separator: ",") + "]"
            return (adding("x_fuzz_padding", raw: Array(text.utf8), to: base.tree), .like(base.rendered), "a \(text.utf8.count)-byte unknown array")
        case 2:
            guard let history = longHistory(base, entries: size / 900) else {
                return (adding("x_fuzz_padding", raw: quoted(String(repeating: "B", count: size)), to: base.tree), .like(base.rendered), "a \(size)-byte unknown string")
            }
            return (history.rendered, .like(base.rendered), "\(size / 900) older renewals")
        case 3:
            let space = { (count: Int, rng: inout SeededRandom) in (0..<count).map { _ in whitespace.randomElement(using: &rng)! } }
            let body = space(size, &rng) + base.tree.rendered(whitespace: &rng) + space(size, &rng)
            return (body, .like(base.rendered), "\(2 * size) bytes of whitespace")
        case 4:
            let page = "<html><body>" + String(repeating: "We are temporarily unable to process your request. ", count: size / 52) + "</body></html>"
            return (Array(page.utf8), .notJSON, "a \(page.utf8.count)-byte page")
        default:
            let padded = adding("x_fuzz_padding", raw: quoted(String(repeating: "Q", count: size)), to: base.tree)
            return (Array(padded.prefix(size / 2 + Int.random(in: 0..<size / 2, using: &rng))), .notJSON, "a padded body cut short")
        }
    }

    /// The answer with `entries` older renewals of its first chain, all upgraded away from and
    /// expiring before every transaction it holds: the decision must not move.
    static func longHistory(_ base: Base, entries: Int) -> JSONValue? {
        guard let index = base.tree.memberIndex("latest_receipt_info") else { return nil }
        let list: [JSONValue]
        switch base.tree.member("latest_receipt_info") {
        case .array(let elements)?: list = elements
        case .object(let single)?: list = [.object(single)]
        default: return nil
        }
        let expiries = list.compactMap { $0.member("expires_date_ms")?.integerText.flatMap { Int64($0) } }
        guard let template = list.first(where: { $0.member("expires_date_ms") != nil }), let earliest = expiries.min() else { return nil }
        let copies = (0..<entries).map { k -> JSONValue in
            let expires = earliest - Int64(k + 1) * AppleJSON.day
            return template
                .setting("transaction_id", .string("fuzz-old-\(k)"))
                .setting("expires_date_ms", .string(String(expires)))
                .setting("purchase_date_ms", .string(String(expires - 30 * AppleJSON.day)))
                .setting("is_upgraded", .string("true"))
                .setting("cancellation_date_ms", nil)
        }
        return base.tree.updating(at: [index]) { _ in .array(list + copies) }
    }

    /// Nesting past the reader's limit is not JSON; within it, it is an unknown key or a wrong type.
    static func deepNesting(_ base: Base, _ rng: inout SeededRandom) -> Generated {
        let members = base.members
        func depth(around start: Int) -> Int {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<6: return Int.random(in: 1...100, using: &rng)
            case 6..<9: return max(1, depthLimit - start + Int.random(in: 0...1, using: &rng))
            default: return Int.random(in: 1_000...50_000, using: &rng)
            }
        }
        switch Int.random(in: 0..<3, using: &rng) {
        case 0:
            let member = members.filter { $0.kind == .ignored }.randomElement(using: &rng)
            let start = member?.depth ?? 1
            let levels = depth(around: start)
            let text = nesting(levels, shape: Int.random(in: 0..<3, using: &rng))
            let body = member.map { splice(base.tree, at: $0.path, raw: text) } ?? adding("x_fuzz_nest", raw: text, to: base.tree)
            return (body, start + levels <= depthLimit ? .like(base.rendered) : .notJSON, "\(levels) levels in \(member?.key ?? "x_fuzz_nest") at depth \(start)")
        case 1:
            let member = members.filter { $0.kind != .ignored }.randomElement(using: &rng)!
            let levels = depth(around: member.depth)
            let body = splice(base.tree, at: member.path, raw: nesting(levels, shape: 0))
            return (body, member.depth + levels <= depthLimit ? .unexpectedResponse : .notJSON, "\(levels) levels of arrays in \(member.key)")
        default:
            let levels = depth(around: 0)
            let shape = Int.random(in: 0..<2, using: &rng)
            // A document of nested arrays is not an object; nested objects hold no status.
            return (nesting(levels, shape: shape), levels <= depthLimit ? .unexpectedResponse : .notJSON, "a document \(levels) levels deep")
        }
    }

    /// Words, other numerals and other notations where Apple sends a string of digits.
    static func nonNumericString(_ base: Base, _ rng: inout SeededRandom) -> Generated {
        let members = base.members
        let flags = members.filter { $0.kind == .bool }
        if !flags.isEmpty, rng.chance(0.15) {
            let member = flags.randomElement(using: &rng)!
            let text = boolRejects.filter { $0.hasPrefix("\"") }.randomElement(using: &rng)!
            return (splice(base.tree, at: member.path, raw: Array(text.utf8)), .unexpectedResponse, "\(member.key) = \(text)")
        }
        let member = members.filter { $0.kind == .int64 || $0.kind == .status }.randomElement(using: &rng)!
        if rng.chance(0.1), let result = substitution(member, in: base, from: .equivalent, &rng) { return result }
        let text = nonNumericStrings.randomElement(using: &rng)!
        return (splice(base.tree, at: member.path, raw: Array(text.utf8)), .unexpectedResponse, "\(member.key) = \(text)")
    }

    /// Dates written as dates where milliseconds belong; the other two forms are never read.
    static func otherDateForm(_ base: Base, _ rng: inout SeededRandom) -> Generated {
        let dated = base.members.filter { $0.key.contains("date") }
        let text = dateForms.randomElement(using: &rng)!
        guard let member = dated.randomElement(using: &rng) else {
            return (adding("expires_date", raw: Array(text.utf8), to: base.tree), .like(base.rendered), "expires_date: \(text) added")
        }
        guard member.kind == .int64 else {
            return (splice(base.tree, at: member.path, raw: Array(text.utf8)), .like(base.rendered), "ignored \(member.key) = \(text)")
        }
        let roll = Double.random(in: 0..<1, using: &rng)
        if roll < 0.15, let digits = member.value.integerText, isCanonicalInteger(digits) {
            return (splice(base.tree, at: member.path, raw: Array(digits.utf8)), .like(base.rendered), "\(member.key) as a JSON number")
        }
        if roll < 0.35 {
            let removed = base.tree.removing(at: member.path).rendered
            return (removed, .like(removed), "\(member.key) removed, its other forms kept")
        }
        return (splice(base.tree, at: member.path, raw: Array(text.utf8)), .unexpectedResponse, "\(member.key) = \(text)")
    }

    /// A key twice: the first one counts, whatever the second holds.
    static func duplicateKey(_ base: Base, _ rng: inout SeededRandom) -> Generated {
        let member = base.members.randomElement(using: &rng)!
        let original = member.value.rendered
        let (otherText, otherValue) = wellTyped(member.kind, &rng)
        let wrong = (refused(member.kind).randomElement(using: &rng) ?? anyValues.randomElement(using: &rng)!)
        let key = Array(", ".utf8) + quoted(member.key) + Array(": ".utf8)
        let roll = Double.random(in: 0..<1, using: &rng)
        if roll < 0.4 {
            return (splice(base.tree, at: member.path, raw: original + key + Array(otherText.utf8)), .like(base.rendered), "\(member.key) again after, \(otherText)")
        }
        if roll < 0.65 {
            let reference = base.tree.updating(at: member.path[...]) { _ in otherValue }.rendered
            return (splice(base.tree, at: member.path, raw: Array(otherText.utf8) + key + original), .like(reference), "\(member.key) \(otherText) first")
        }
        if roll < 0.85 {
            return (splice(base.tree, at: member.path, raw: original + key + Array(wrong.utf8)), .like(base.rendered), "\(member.key) again after, \(wrong)")
        }
        let expected: Expected = member.kind == .ignored ? .like(base.rendered) : .unexpectedResponse
        return (splice(base.tree, at: member.path, raw: Array(wrong.utf8) + key + original), expected, "\(member.key) \(wrong) first")
    }

    /// NaN and infinities are not JSON; huge, tiny and negative-zero numbers are, and only an
    /// integer reader's own values (-0 and the largest Int64) are accepted as integers.
    static func nanLike(_ base: Base, _ rng: inout SeededRandom) -> Generated {
        let member = base.members.randomElement(using: &rng)!
        let roll = Double.random(in: 0..<1, using: &rng)
        if roll < 0.45 {
            let token = invalidTokens.randomElement(using: &rng)!
            return (splice(base.tree, at: member.path, raw: Array(token.utf8)), .notJSON, "\(member.key) = \(token)")
        }
        let asString = roll >= 0.85
        let text = asString ? "\"" + nanStrings.randomElement(using: &rng)! + "\"" : oddNumbers.randomElement(using: &rng)!
        let body = splice(base.tree, at: member.path, raw: Array(text.utf8))
        let replaced = { (value: JSONValue) in Expected.like(base.tree.updating(at: member.path[...]) { _ in value }.rendered) }
        let unquoted = String(text.dropFirst().dropLast())
        let expected: Expected
        switch member.kind {
        case .ignored: expected = .like(base.rendered)
        case .string where asString: expected = replaced(.string(unquoted))
        case .status, .int64, .string:
            if asString { expected = unquoted == "-0" && member.kind != .string ? replaced(.string("-0")) : .unexpectedResponse }
            else { expected = integerValued.contains(text) ? replaced(.number(text)) : .unexpectedResponse }
        case .bool, .object, .objects: expected = .unexpectedResponse
        }
        return (body, expected, "\(member.key) = \(text)")
    }

    /// Bytes that are not UTF-8, a BOM, UTF-16, raw control characters, lone surrogates; and odd
    /// but valid text, which must read as the characters it spells.
    static func utf8Oddity(_ base: Base, _ rng: inout SeededRandom) -> Generated {
        var tree = base.tree
        if !members(of: tree).contains(where: { if case .string = $0.value { true } else { false } }) {
            tree = tree.setting("x_fuzz_note", .string("a note"))
        }
        let members = members(of: tree)
        let strings = members.filter { if case .string = $0.value { true } else { false } }
        let member = strings.randomElement(using: &rng)!
        guard case .string(let text) = member.value else { fatalError("filtered above") }
        let cut = Int.random(in: 0...text.count, using: &rng)
        let (prefix, suffix) = (escaped(String(text.prefix(cut))), escaped(String(text.dropFirst(cut))))
        let quote: [UInt8] = [UInt8(ascii: "\"")]
        switch Int.random(in: 0..<9, using: &rng) {
        case 0:
            return ([0xEF, 0xBB, 0xBF] + base.tree.rendered, .notJSON, "a byte order mark")
        case 1:
            let units = Array(String(decoding: base.tree.rendered, as: UTF8.self).utf16)
            let bigEndian = rng.chance(0.5)
            let bytes = units.flatMap { bigEndian ? [UInt8($0 >> 8), UInt8($0 & 0xFF)] : [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
            return ((rng.chance(0.5) ? (bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]) : []) + bytes, .notJSON, "UTF-16")
        case 2:
            let bad = invalidUTF8.randomElement(using: &rng)!
            return (splice(tree, at: member.path, raw: quote + prefix + bad + suffix + quote), .notJSON, "\(bad) inside \(member.key)'s value")
        case 3:
            let bad = invalidUTF8.randomElement(using: &rng)!
            let key = escaped(member.key)
            let at = Int.random(in: 0...key.count, using: &rng)
            return (spliceKey(tree, at: member.path, raw: quote + key[..<at] + bad + key[at...] + quote), .notJSON, "\(bad) inside the key \(member.key)")
        case 4:
            let bad = invalidUTF8.randomElement(using: &rng)!
            return (splice(tree, at: member.path, raw: bad + member.value.rendered), .notJSON, "\(bad) before \(member.key)'s value")
        case 5:
            let control = UInt8.random(in: 0x00...0x1F, using: &rng)
            return (splice(tree, at: member.path, raw: quote + prefix + [control] + suffix + quote), .notJSON, "raw \(control) inside \(member.key)'s value")
        case 6:
            let control = ([0x00, 0x08, 0x0B, 0x0C, 0x0E, 0x1F, 0x7F] as [UInt8]).randomElement(using: &rng)!
            return (splice(tree, at: member.path, raw: [control] + member.value.rendered), .notJSON, "raw \(control) before \(member.key)'s value")
        case 7:
            let lone = loneSurrogates.randomElement(using: &rng)!
            return (splice(tree, at: member.path, raw: quote + prefix + Array(lone.utf8) + suffix + quote), .notJSON, "\(lone) inside \(member.key)'s value")
        default:
            guard member.kind == .string || member.kind == .ignored else {
                return ([0xEF, 0xBB, 0xBF] + base.tree.rendered, .notJSON, "a byte order mark")
            }
            let (raw, meaning) = validOddities.randomElement(using: &rng)!
            let reference = tree.updating(at: member.path[...]) { _ in .string(String(text.prefix(cut)) + meaning + String(text.dropFirst(cut))) }
            let body = splice(tree, at: member.path, raw: quote + prefix + Array(raw.utf8) + suffix + quote)
            // A NUL in a string the decision reads is refused: no store keeps it whole.
            if meaning == "\u{0}", member.kind == .string { return (body, .unexpectedResponse, "a NUL inside \(member.key)'s value") }
            return (body, .like(reference.rendered), "\(raw.debugDescription) inside \(member.key)'s value")
        }
    }

    /// Edits of the stored answers that keep their meaning (order, whitespace, unknown keys,
    /// repeated entries) or drop a member.
    static func fixtureMutation(_ base: Base, _ rng: inout SeededRandom) -> Generated {
        let members = base.members
        switch Int.random(in: 0..<8, using: &rng) {
        case 0:
            let member = members.randomElement(using: &rng)!
            let removed = base.tree.removing(at: member.path).rendered
            return (removed, member.kind == .status ? .unexpectedResponse : .like(removed), "\(member.key) removed")
        case 4:
            let member = members.randomElement(using: &rng)!
            let retryFlags: Set = ["is-retryable", "is_retryable"]
            var renamed: String
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: renamed = member.key.prefix(1).uppercased() + member.key.dropFirst()
            case 1: renamed = member.key.contains("_") ? member.key.replacingOccurrences(of: "_", with: "-") : member.key.replacingOccurrences(of: "-", with: "_")
            case 2: renamed = " " + member.key
            default: renamed = member.key + "_x"
            }
            if renamed == member.key { renamed = member.key + "_x" }
            let body = base.tree.updating(at: member.path.dropLast()) { $0.renamingMember(member.path.last!, to: renamed) }.rendered
            let expected: Expected
            if retryFlags == [member.key, renamed] { expected = .like(base.rendered) }
            else if member.kind == .status { expected = .unexpectedResponse }
            else { expected = .like(base.tree.removing(at: member.path).rendered) }
            return (body, expected, "\(member.key) renamed \(renamed)")
        case 6:
            return (base.tree.rendered(whitespace: &rng), .like(base.rendered), "whitespace between tokens")
        case 7:
            var tree = base.tree
            var notes: [String] = []
            for _ in 0..<Int.random(in: 2...4, using: &rng) {
                let (next, note) = meaningKeepingEdit(tree, &rng)
                tree = next
                notes.append(note)
            }
            return (rng.chance(0.5) ? tree.rendered(whitespace: &rng) : tree.rendered, .like(base.rendered), notes.joined(separator: ", "))
        default:
            let (tree, note) = meaningKeepingEdit(base.tree, &rng)
            return (tree.rendered, .like(base.rendered), note)
        }
    }

    /// Members in another order, array entries in another order or repeated, an unknown member.
    static func meaningKeepingEdit(_ tree: JSONValue, _ rng: inout SeededRandom) -> (JSONValue, String) {
        let (objects, arrays) = tree.containers
        switch Int.random(in: 0..<4, using: &rng) {
        case 0:
            let path = objects.randomElement(using: &rng)!
            return (tree.updating(at: path[...]) { value in
                guard case .object(var object) = value else { return value }
                object.members.shuffle(using: &rng)
                return .object(object)
            }, "members of \(path) shuffled")
        case 1 where !arrays.isEmpty:
            let path = arrays.randomElement(using: &rng)!
            return (tree.updating(at: path[...]) { value in
                guard case .array(var elements) = value else { return value }
                elements.shuffle(using: &rng)
                return .array(elements)
            }, "entries of \(path) shuffled")
        case 2 where !arrays.isEmpty:
            let path = arrays.randomElement(using: &rng)!
            return (tree.updating(at: path[...]) { value in
                guard case .array(var elements) = value, let any = elements.randomElement(using: &rng) else { return value }
                elements.insert(any, at: Int.random(in: 0...elements.count, using: &rng))
                return .array(elements)
            }, "an entry of \(path) repeated")
        default:
            let path = objects.randomElement(using: &rng)!
            let value = try! JSONValue.parse(Array(anyValues.randomElement(using: &rng)!.utf8))
            return (tree.updating(at: path[...]) { $0.setting("x_fuzz_\(rng.next() % 10_000)", value) }, "an unknown member in \(path)")
        }
    }
}
