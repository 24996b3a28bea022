import EntitlementCore

/// A V2 notification whose every signature and claim was checked, outer payload first, then its
/// transaction and renewal info: what a receiver or a catch-up may apply to a row.
public struct SignedNotification: Sendable {
    public var notificationUUID: String
    public var type: String
    public var subtype: String?
    /// When Apple signed it, ms: the instant its data was true (newer Apple data wins).
    public var signedDateMs: Int64
    /// Nil for a notification without `data` (a summary, a consent change): it touches no row.
    public var environment: AppStoreEnvironment?
    /// The subscription's status as of `signedDateMs` (1…5), when Apple sends it.
    public var status: Int?
    public var transaction: JWSTransactionPayload?
    public var renewal: JWSRenewalInfoPayload?

    init(notificationUUID: String, type: String, subtype: String?, signedDateMs: Int64) {
        self.notificationUUID = notificationUUID
        self.type = type
        self.subtype = subtype
        self.signedDateMs = signedDateMs
    }

    /// How the trail names it: `DID_RENEW/BILLING_RECOVERY`, or the type alone.
    public var name: String { subtype.map { "\(type)/\($0)" } ?? type }

    /// The chain it is about, which names the row it may change.
    public var originalTransactionID: String? { transaction?.originalTransactionId }

    /// Its data as a backend's answer about the chain — a transaction of the chain (not always
    /// the current period: a refund of last month names last month's) and the renewal info, for
    /// the app its transaction names — for `EntitlementDecision`; nil without a transaction. It
    /// carries no receipt: the row keeps its own.
    public var answer: StatusAnswer? {
        guard let transaction else { return nil }
        return StatusAnswer(
            upstreamStatus: UpstreamStatus(backend: .notification, code: status ?? 0), bundleID: transaction.bundleId, environment: environment?.rawValue,
            transactions: [ServerAPIClient.transaction(transaction)], renewals: renewal.map { [ServerAPIClient.renewal($0)] } ?? [],
            scope: .oneTransaction, subscriptionStatus: appleStatus,
            missingRenewals: renewal == nil ? [MissingRenewalInfo(originalTransactionID: transaction.originalTransactionId, appleStatus: appleStatus)] : [])
    }

    /// `status` in Apple's terms (nil: none sent, or a value Apple has not documented).
    var appleStatus: AppleSubscriptionStatus? { status.flatMap(AppleSubscriptionStatus.init(rawValue:)) }

    /// An auto-renewable subscription's transaction that came without renewal info (none sent, or
    /// signed as JSON `null` or `{}`): worth a log line, since its renewal columns stay the row's.
    public var lacksRenewalInfo: Bool {
        renewal == nil && transaction?.expiresDate != nil
    }
}

extension StatusBackend {
    /// App Store Server Notifications; its code is the notification's subscription `status` (0: none sent).
    public static let notification = StatusBackend(rawValue: "notification")
}
