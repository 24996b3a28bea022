import EntitlementCore

/// A body posted to the receiver, told apart by its shape: version 2 is `{"signedPayload": "…"}`,
/// version 1 a JSON object with `notification_type`. Apple sends both to the same URL shape, and
/// an App Store Connect setting decides which; the receiver takes either.
public enum NotificationBody: Sendable {
    case version2(signedPayload: String)
    case version1(NotificationV1)

    /// Reads `bytes`; throws ``NotificationRefusal`` (`malformed`) for anything else.
    public init(_ bytes: [UInt8]) throws(NotificationRefusal) {
        let document: JSONValue
        do {
            document = try JSONValue.parse(bytes)
        } catch {
            throw NotificationRefusal(.malformed, "the body is not JSON (\(error))")
        }
        guard case .object(let object) = document else { throw NotificationRefusal(.malformed, "the body is not a JSON object") }
        if let signed = object["signedPayload"] {
            guard case .string(let jws) = signed, !jws.isEmpty else { throw NotificationRefusal(.malformed, "signedPayload is not a string") }
            self = .version2(signedPayload: jws)
        } else if object["notification_type"] != nil {
            self = .version1(try NotificationV1(document: document, body: bytes))
        } else {
            throw NotificationRefusal(.malformed, "the body is neither a version 2 (signedPayload) nor a version 1 (notification_type) notification")
        }
    }
}
