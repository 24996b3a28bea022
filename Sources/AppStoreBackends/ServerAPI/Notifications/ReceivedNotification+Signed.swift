import EntitlementCore

extension ReceivedNotification {
    /// A verified V2 notification.
    public init(_ notification: SignedNotification, signedPayload: String, source: NotificationSource, receivedAtMs: Int64) {
        self.init(
            id: notification.notificationUUID, version: 2, type: notification.type, subtype: notification.subtype,
            signedAtMs: notification.signedDateMs, appleStateAtMs: notification.signedDateMs, originalTransactionID: notification.originalTransactionID,
            appAccountToken: notification.transaction?.appAccountToken, environment: notification.environment, source: source,
            receivedAtMs: receivedAtMs, answer: notification.answer, signedPayload: signedPayload)
    }
}
