import Foundation

/// The recorded notifications as `status-poller notifications list` prints them.
extension StoredNotification {
    /// The table's header.
    package static let tableHeader = "received (UTC)         v  notification                         outcome            status     original_transaction_id  row       user"

    /// One notification as a row of the table.
    package var line: String {
        [
            Display.time(receivedAtMs).padded(22), String(version), name.padded(36), outcome.padded(18), statusText.padded(10),
            (originalTransactionID ?? "-").padded(24), (subscriptionID.map(String.init) ?? "-").padded(9), userID ?? "-",
        ].joined(separator: " ")
    }

    /// Apple's `status` and whether the row agreed: "1", "5 asked" (the row said otherwise and is
    /// asked again), "-" without one.
    package var statusText: String {
        guard let status = appleStatus else { return "-" }
        return statusAgrees == false ? "\(status) asked" : String(status)
    }

    /// The notifications as one JSON document, keys sorted.
    package static func json(_ notifications: [StoredNotification]) throws -> String {
        let rows: [[String: Any]] = notifications.map { n in
            var o: [String: Any] = [
                "notification_id": n.id, "version": n.version, "type": n.type, "received_at": Display.time(n.receivedAtMs),
                "apple_state_at": Display.time(n.appleStateAtMs), "source": n.source, "outcome": n.outcome,
            ]
            if let subtype = n.subtype { o["subtype"] = subtype }
            if let signed = n.signedAtMs { o["signed_at"] = Display.time(signed) }
            if let chain = n.originalTransactionID { o["original_transaction_id"] = chain }
            if let token = n.appAccountToken { o["app_account_token"] = token }
            if let environment = n.environment { o["environment"] = environment }
            if let id = n.subscriptionID { o["subscription_id"] = id }
            if let user = n.userID { o["user_id"] = user }
            if let status = n.appleStatus { o["apple_status"] = status }
            if let agrees = n.statusAgrees { o["status_agrees"] = agrees }
            return o
        }
        return String(decoding: try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys]), as: UTF8.self)
    }
}
