/// App Store Server Notifications V2's decoded `signedPayload` (`responseBodyV2DecodedPayload`):
/// what happened (`notificationType`, `subtype`), the id duplicates share (`notificationUUID`), when
/// Apple signed the snapshot (`signedDate`, the same on every retry), and `data` about one of the
/// app's subscriptions — absent for the kinds that carry a summary, consent or an external token.
/// Every field is optional here: the verifier says which ones a notification must have.
public struct NotificationPayload: Decodable, Sendable, SignedPayload {
    public var notificationType: String?
    public var subtype: String?
    public var notificationUUID: String?
    public var signedDate: Int64?
    public var version: String?
    public var data: NotificationData?

    /// `data`: the app and environment it is for, and the subscription's signed state.
    public struct NotificationData: Decodable, Sendable {
        /// The app's Apple id; Apple sends none in the sandbox.
        public var appAppleId: Int64?
        public var bundleId: String?
        public var bundleVersion: String?
        public var environment: String?
        public var signedTransactionInfo: String?
        public var signedRenewalInfo: String?
        /// The subscription's status as of `signedDate`: 1 active, 2 expired, 3 billing retry,
        /// 4 grace period, 5 revoked.
        public var status: Int?
    }
}
