import Crypto
import Foundation

/// Standard Webhooks' signature: HMAC-SHA256 of `id.timestamp.body` under the secret's key, in
/// base64 after `v1,` (the `webhook-signature` header). Consumers verify it with the official
/// standardwebhooks library of their language (docs/EVENTS.md).
public enum WebhookSignature {
    /// `v1,<base64>` for a message `id` sent at `timestamp` (seconds since 1970) with `body`.
    public static func sign(id: String, timestamp: Int64, body: String, secret: WebhookSecret) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(id).\(timestamp).\(body)".utf8), using: secret.key)
        return "v1," + Data(mac).base64EncodedString()
    }

    /// Whether `header` (space-separated signatures) holds a `v1` signature of the message, and
    /// the timestamp is within `tolerance` seconds of `nowSeconds`: what a consumer checks.
    public static func verify(
        id: String, timestamp: String, body: String, header: String, secret: WebhookSecret, nowSeconds: Int64, tolerance: Int64 = 300
    ) -> Bool {
        guard let seconds = Int64(timestamp), abs(nowSeconds - seconds) <= tolerance else { return false }
        let expected = Data(sign(id: id, timestamp: seconds, body: body, secret: secret).utf8)
        // Compared in constant time per candidate, as a consumer must.
        return header.split(separator: " ").contains { candidate in
            let given = Data(candidate.utf8)
            guard given.count == expected.count else { return false }
            return zip(given, expected).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
        }
    }
}
