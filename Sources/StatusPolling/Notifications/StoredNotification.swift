/// One row of `app_store_notifications`, as support reads it: never its signed payload.
public struct StoredNotification: Sendable, Equatable {
    public var id: String
    public var version: Int
    public var type: String
    public var subtype: String?
    public var signedAtMs: Int64?
    public var appleStateAtMs: Int64
    public var originalTransactionID: String?
    public var appAccountToken: String?
    public var environment: String?
    public var source: String
    public var receivedAtMs: Int64
    public var outcome: String
    /// The row it was applied to (or found stale, conflicting… against); nil when unmatched.
    public var subscriptionID: Int64?
    public var userID: String?
    /// A V2 notification's `data.status` (1 active … 5 revoked), as of its `signedDate`.
    public var appleStatus: Int?
    /// Whether the row, once the notification was applied, said what Apple's status says; false:
    /// the row was marked to be asked again. Nil: no status, or not applied.
    public var statusAgrees: Bool?

    public init(
        id: String, version: Int, type: String, subtype: String?, signedAtMs: Int64?, appleStateAtMs: Int64, originalTransactionID: String?,
        appAccountToken: String?, environment: String?, source: String, receivedAtMs: Int64, outcome: String, subscriptionID: Int64?, userID: String?,
        appleStatus: Int? = nil, statusAgrees: Bool? = nil
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
        self.outcome = outcome
        self.subscriptionID = subscriptionID
        self.userID = userID
        self.appleStatus = appleStatus
        self.statusAgrees = statusAgrees
    }

    /// `DID_RENEW/BILLING_RECOVERY`, or the type alone.
    public var name: String { subtype.map { "\(type)/\($0)" } ?? type }
}
