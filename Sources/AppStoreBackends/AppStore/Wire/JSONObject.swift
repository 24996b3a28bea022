/// The members of a JSON object, in document order. Apple's objects have tens of keys, so a
/// linear search beats hashing them all.
struct JSONObject: Sendable, Equatable {
    var members: [(key: String, value: JSONValue)]

    /// The first member named `key`.
    subscript(key: String) -> JSONValue? {
        members.first { $0.key == key }?.value
    }

    static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.elementsEqual(rhs.members) { $0.key == $1.key && $0.value == $1.value }
    }
}
