/// A notification that passed every check (a V2 signature chain, or a V1 shared secret), in the
/// terms the store records and applies: the `app_store_notifications` columns, and its data as a
/// backend's answer for `EntitlementDecision`.
public struct ReceivedNotification: Sendable, Equatable {
    /// `notificationUUID`; for a V1 notification, which has none, `v1:` and the SHA-256 of its body
    /// (Apple's retries send the same body).
    public var id: String
    /// 1 or 2.
    public var version: Int
    public var type: String
    public var subtype: String?
    /// A V2 notification's `signedDate`, ms.
    public var signedAtMs: Int64?
    /// When its data was true: `signedDate`, or for V1 the latest Apple event its receipt data
    /// names. Older than the row's `apple_state_at`: stale.
    public var appleStateAtMs: Int64
    /// The chain it is about, which names the row it changes.
    public var originalTransactionID: String?
    /// The UUID the app passed at purchase: links it to a row that owns no chain yet.
    public var appAccountToken: String?
    public var environment: AppStoreEnvironment?
    public var source: NotificationSource
    public var receivedAtMs: Int64
    /// Its data as a backend's answer; nil when it carries none about a subscription.
    public var answer: StatusAnswer?
    /// The V2 `signedPayload`, kept only while the notification is unmatched, so a row enrolled
    /// later can adopt it after verifying it again. Personal data: stored, never logged.
    public var signedPayload: String?

    public init(
        id: String, version: Int, type: String, subtype: String?, signedAtMs: Int64?, appleStateAtMs: Int64, originalTransactionID: String?,
        appAccountToken: String?, environment: AppStoreEnvironment?, source: NotificationSource, receivedAtMs: Int64, answer: StatusAnswer?,
        signedPayload: String? = nil
    ) {
        self.id = id
        self.version = version
        self.type = type
        self.subtype = subtype
        self.signedAtMs = signedAtMs
        self.appleStateAtMs = appleStateAtMs
        self.originalTransactionID = originalTransactionID
        self.appAccountToken = appAccountToken
        self.environment = environment
        self.source = source
        self.receivedAtMs = receivedAtMs
        self.answer = answer
        self.signedPayload = signedPayload
    }

    /// How the trail names it: `DID_RENEW/BILLING_RECOVERY`, or the type alone.
    public var name: String { subtype.map { "\(type)/\($0)" } ?? type }

    /// Where a change it makes came from, for the trail.
    public var provenance: Provenance { .notification(notificationUUID: id, type: name, signedAtMs: appleStateAtMs) }
}
