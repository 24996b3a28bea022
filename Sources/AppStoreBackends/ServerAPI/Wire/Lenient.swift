import EntitlementCore

/// A field of a signed payload that no entitlement depends on (the ledger's price, storefront,
/// offer…), read leniently: a value of another type than Apple documents, or text no store can
/// keep (a NUL character), reads as unknown instead of refusing the whole payload — Apple adds
/// and reshapes such fields every year, and the access a payload grants must not hang on them.
@propertyWrapper
public struct Lenient<Value: Decodable & Sendable & Equatable>: Decodable, Sendable, Equatable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) {
        self.wrappedValue = Self.keepable(wrappedValue)
    }

    public init(from decoder: any Decoder) throws {
        self.init(wrappedValue: try? decoder.singleValueContainer().decode(Value.self))
    }

    /// Nil for text a store cannot hold whole.
    private static func keepable(_ value: Value?) -> Value? {
        if let text = value as? String, JSONText.holdsNUL(text) { return nil }
        return value
    }
}

extension KeyedDecodingContainer {
    /// An absent key, a null or a value of another type: nil (the synthesised decoding would
    /// otherwise ask for the key).
    public func decode<Value>(_ type: Lenient<Value>.Type, forKey key: Key) throws -> Lenient<Value> {
        Lenient(wrappedValue: (try? decodeIfPresent(Value.self, forKey: key)) ?? nil)
    }
}
