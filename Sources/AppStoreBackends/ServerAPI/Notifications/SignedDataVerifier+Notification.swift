import EntitlementCore

extension SignedDataVerifier {
    /// Verifies a V2 notification's `signedPayload` and everything inside it: the outer JWS (the
    /// same checks as any signed payload), then — when it carries `data` — the app (`bundleId`, and in
    /// production `appAppleId` when one is configured) and the environment, a notification id, type
    /// and `signedDate`, then the signed transaction for that environment and the renewal info against it.
    /// Unknown types and subtypes pass: Apple adds some every year, and they are stored, not refused.
    /// So do the shapes without `data` (a `summary`, an `externalPurchaseToken`, `appData`): they touch
    /// no row.
    public func verifyNotification(_ signedPayload: String, appAppleID: Int64?) async throws(SignedDataFailure) -> SignedNotification {
        var environment: AppStoreEnvironment?
        let payload: NotificationPayload = try await verified(signedPayload) { (payload: NotificationPayload) throws(SignedDataFailure) in
            if let data = payload.data { environment = try app(of: data, appAppleID: appAppleID) }
        }
        guard let uuid = payload.notificationUUID, !uuid.isEmpty, let type = payload.notificationType, !type.isEmpty, let signedDate = payload.signedDate else {
            throw SignedDataFailure(.payload, "the notification has no notificationUUID or notificationType")
        }
        var notification = SignedNotification(notificationUUID: uuid, type: type, subtype: payload.subtype, signedDateMs: signedDate)
        guard let data = payload.data, let environment else { return notification }
        notification.environment = environment
        notification.status = data.status
        if let signed = data.signedTransactionInfo {
            let transaction = try await verifyTransaction(signed, environment: environment)
            notification.transaction = transaction
            if let renewal = data.signedRenewalInfo { notification.renewal = try await verifyRenewalInfo(renewal, of: transaction) }
        } else if data.signedRenewalInfo != nil {
            throw SignedDataFailure(.renewalMismatch, "the notification carries renewal info without a transaction")
        }
        return notification
    }

    /// Checks that `data` is for the configured app, and returns its environment.
    private func app(of data: NotificationPayload.NotificationData, appAppleID: Int64?) throws(SignedDataFailure) -> AppStoreEnvironment {
        guard data.bundleId == bundleID else {
            throw SignedDataFailure(.bundleID, "the notification is for bundle \(data.bundleId ?? "(none)"), expected \(bundleID)")
        }
        guard let environment = data.environment.flatMap(AppStoreEnvironment.init(rawValue:)) else {
            throw SignedDataFailure(.environment, "the notification's environment is \(data.environment ?? "(none)"), not Production or Sandbox")
        }
        if environment == .production, let appAppleID, data.appAppleId != appAppleID {
            throw SignedDataFailure(.bundleID, "the notification is for appAppleId \(data.appAppleId.map(String.init) ?? "(none)"), expected \(appAppleID)")
        }
        return environment
    }
}
