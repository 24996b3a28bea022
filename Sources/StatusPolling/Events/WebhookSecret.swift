import Crypto
import Foundation

/// An endpoint's signing secret, as Standard Webhooks spells it: `whsec_` and the key in base64
/// (24 to 64 bytes). The key signs; nothing prints it (``description`` is fixed).
public struct WebhookSecret: Sendable, CustomStringConvertible {
    /// The key's bytes (Crypto's `SymmetricKey` is not `Sendable`; one is made per signature).
    private let bytes: Data
    var key: SymmetricKey { SymmetricKey(data: bytes) }

    /// Parses `whsec_…` (surrounding whitespace ignored); throws a message that says what is wrong
    /// without repeating the text.
    public init(_ text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix("whsec_") else { throw WebhookSecretError("it must start with whsec_ (Standard Webhooks' form)") }
        guard let bytes = Data(base64Encoded: String(trimmed.dropFirst(6))) else { throw WebhookSecretError("after whsec_ it must be base64") }
        guard (24...64).contains(bytes.count) else { throw WebhookSecretError("its key must be 24 to 64 bytes, not \(bytes.count)") }
        self.bytes = bytes
    }

    /// A new random secret of 32 bytes, in its `whsec_` form (for `events secret` and tests).
    public static func generate() -> String {
        "whsec_" + SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
    }

    public var description: String { "whsec_(hidden)" }
}

/// Why a webhook secret was refused.
public struct WebhookSecretError: Error, Sendable, CustomStringConvertible {
    public var reason: String
    init(_ reason: String) { self.reason = reason }
    public var description: String { "the webhook secret is not usable: \(reason)" }
}
