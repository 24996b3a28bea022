import Foundation

/// Writes the body the App Store posts for a lifecycle event: the subscription as it stands at the
/// event's instant, by the same builders as the simulator's API answers, so a notification and a
/// poll at that instant say the same thing. Plain dictionaries, as everywhere in the simulator.
enum NotificationBuilder {
    /// V2: the `signedPayload` (signed by `pki`; `signedDate` is the event's instant); ``body(_:)`` wraps it.
    static func version2(_ event: LifecycleEvent, uuid: String, population: Population, pki: SimulatorPKI) -> String {
        let subscriber = population.subscribers[event.subscriberIndex]
        let configuration = population.configuration
        var data = ServerAPIResponseBuilder.head(environment: subscriber.environment, configuration: configuration)
        data["bundleVersion"] = "1"
        if let chain = subscriber.chains.first(where: { $0.originalTransactionID == event.originalTransactionID }),
            let current = chain.current(at: event.atMs),
            let truth = chain.entitlement(at: event.atMs, environment: subscriber.environment, latestReceipt: "")
        {
            // The transaction the event is about (a refunded earlier period's, the new one of an
            // upgrade), as it stands at the event; the status and the renewal info are the chain's.
            let about = event.transactionID.flatMap { id in chain.transactions.first { $0.transactionID == id } } ?? current
            data["status"] = ServerAPIResponseBuilder.status(truth.state)
            data["signedTransactionInfo"] = pki.sign(ServerAPIResponseBuilder.transaction(
                about, chain: chain, environment: subscriber.environment, bundleID: configuration.bundleID, at: event.atMs))
            data["signedRenewalInfo"] = pki.sign(ServerAPIResponseBuilder.renewal(chain, current: current, environment: subscriber.environment, at: event.atMs))
            if event.kind == .refundRequested { data["consumptionRequestReason"] = "UNSATISFIED_WITH_PURCHASE" }
        }
        let (type, subtype) = event.version2
        var payload: [String: Any] = ["notificationType": type, "notificationUUID": uuid, "signedDate": event.atMs, "version": "2.0", "data": data]
        if let subtype { payload["subtype"] = subtype }
        return pki.sign(payload)
    }

    /// V2 `RENEWAL_EXTENSION/SUMMARY`: a `summary` instead of `data`, as Apple sends it when a
    /// mass extension completes.
    static func summary(_ summary: [String: Any], uuid: String, atMs: Int64, pki: SimulatorPKI) -> String {
        pki.sign([
            "notificationType": "RENEWAL_EXTENSION", "subtype": "SUMMARY", "notificationUUID": uuid, "signedDate": atMs, "version": "2.0",
            "summary": summary,
        ])
    }

    /// V2 `TEST`: no data but the app's.
    static func test(uuid: String, atMs: Int64, environment: String, configuration: PopulationConfiguration, pki: SimulatorPKI) -> String {
        let data = ServerAPIResponseBuilder.head(environment: environment, configuration: configuration)
        return pki.sign(["notificationType": "TEST", "notificationUUID": uuid, "signedDate": atMs, "version": "2.0", "data": data])
    }

    /// V1 (Apple's current shape): the type, the shared secret as `password`, and in
    /// `unified_receipt` the same receipt data verifyReceipt answers at the event's instant.
    static func version1(_ event: LifecycleEvent, type: String, population: Population) -> Data {
        let subscriber = population.subscribers[event.subscriberIndex]
        let configuration = population.configuration
        let answer = ResponseBuilder.valid(subscriber, at: event.atMs, bundleID: configuration.bundleID, excludeOldTransactions: false)
        let pending = (answer["pending_renewal_info"] as? [[String: Any]])?.first { $0["original_transaction_id"] as? String == event.originalTransactionID }
        var body: [String: Any] = [
            "notification_type": type, "password": configuration.sharedSecret, "bid": configuration.bundleID, "bvrs": "1",
            "environment": subscriber.environment == "Sandbox" ? "Sandbox" : "PROD", "original_transaction_id": event.originalTransactionID,
            "unified_receipt": [
                "environment": subscriber.environment, "status": 0, "latest_receipt": answer["latest_receipt"] ?? "",
                "latest_receipt_info": answer["latest_receipt_info"] ?? [], "pending_renewal_info": answer["pending_renewal_info"] ?? [],
            ] as [String: Any],
        ]
        // When auto-renew last changed, as Apple writes it: the only date V1 gives a status change.
        let chain = subscriber.chains.first { $0.originalTransactionID == event.originalTransactionID }
        if let changed = chain?.autoRenew.last(where: { $0.atMs <= event.atMs }) {
            ResponseBuilder.addDate(&body, "auto_renew_status_change_date", changed.atMs)
        }
        if let pending {
            body["auto_renew_status"] = pending["auto_renew_status"] as? String == "1" ? "true" : "false"
            body["auto_renew_product_id"] = pending["auto_renew_product_id"]
            if let intent = pending["expiration_intent"] { body["expiration_intent"] = intent }
        }
        return (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
    }

    /// The body Apple posts for a V2 notification.
    static func body(_ signedPayload: String) -> Data {
        Data(#"{"signedPayload":"\#(signedPayload)"}"#.utf8)
    }
}
