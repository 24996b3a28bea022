import Foundation

/// Builds verifyReceipt answers the way Apple writes them: every value inside
/// `latest_receipt_info` and `pending_renewal_info` a string, each date in its three forms.
/// Independent of the client's decoding types on purpose.
enum AppleJSON {
    static let bundleID = "com.example.premium"
    /// 2026-01-01T00:00:00Z in ms: the tests' epoch.
    static let t0: Int64 = 1_767_225_600_000
    static let hour: Int64 = 3_600_000
    static let day: Int64 = 86_400_000

    /// One transaction of `latest_receipt_info`.
    struct Transaction {
        var productID = "premium.monthly"
        var originalTransactionID = "1000000001"
        var transactionID = "2000000001"
        var purchaseMs: Int64 = t0
        var expiresMs: Int64? = t0 + 30 * day
        var cancellationMs: Int64? = nil
        var isUpgraded = false
        var groupID = "21000001"

        var object: [String: Any] {
            var o: [String: Any] = [
                "quantity": "1", "product_id": productID, "transaction_id": transactionID,
                "original_transaction_id": originalTransactionID, "web_order_line_item_id": "3000\(transactionID)",
                "is_trial_period": "false", "is_in_intro_offer_period": "false",
                "subscription_group_identifier": groupID, "in_app_ownership_type": "PURCHASED",
            ]
            AppleJSON.addDate(&o, "purchase_date", purchaseMs)
            AppleJSON.addDate(&o, "original_purchase_date", purchaseMs)
            if let expiresMs { AppleJSON.addDate(&o, "expires_date", expiresMs) }
            if let cancellationMs {
                AppleJSON.addDate(&o, "cancellation_date", cancellationMs)
                o["cancellation_reason"] = "0"
            }
            if isUpgraded { o["is_upgraded"] = "true" }
            return o
        }
    }

    /// One entry of `pending_renewal_info`.
    struct Renewal {
        var originalTransactionID = "1000000001"
        var productID = "premium.monthly"
        var autoRenewProductID: String? = "premium.monthly"
        var autoRenewStatus: String? = "1"
        var expirationIntent: String? = nil
        var isInBillingRetry: String? = nil
        var graceEndsMs: Int64? = nil

        var object: [String: Any] {
            var o: [String: Any] = ["original_transaction_id": originalTransactionID, "product_id": productID]
            if let autoRenewProductID { o["auto_renew_product_id"] = autoRenewProductID }
            if let autoRenewStatus { o["auto_renew_status"] = autoRenewStatus }
            if let expirationIntent { o["expiration_intent"] = expirationIntent }
            if let isInBillingRetry { o["is_in_billing_retry_period"] = isInBillingRetry }
            if let graceEndsMs { AppleJSON.addDate(&o, "grace_period_expires_date", graceEndsMs) }
            return o
        }
    }

    static func addDate(_ object: inout [String: Any], _ name: String, _ ms: Int64) {
        let date = Date(timeIntervalSince1970: Double(ms) / 1000)
        let utc = DateFormatter()
        utc.locale = Locale(identifier: "en_US_POSIX")
        utc.timeZone = TimeZone(identifier: "UTC")
        utc.dateFormat = "yyyy-MM-dd HH:mm:ss"
        let pst = DateFormatter()
        pst.locale = utc.locale
        pst.timeZone = TimeZone(identifier: "America/Los_Angeles")
        pst.dateFormat = "yyyy-MM-dd HH:mm:ss"
        object[name] = utc.string(from: date) + " Etc/GMT"
        object["\(name)_ms"] = String(ms)
        object["\(name)_pst"] = pst.string(from: date) + " America/Los_Angeles"
    }

    /// A complete status-0 answer.
    static func valid(
        environment: String = "Production", bundleID: String = bundleID, latestReceipt: String? = "UPDATED-RECEIPT",
        transactions: [Transaction], renewals: [Renewal]
    ) -> String {
        var o: [String: Any] = [
            "status": 0, "environment": environment,
            "receipt": [
                "receipt_type": environment == "Sandbox" ? "ProductionSandbox" : "Production",
                "bundle_id": bundleID, "application_version": "42", "in_app": [] as [Any],
            ] as [String: Any],
            "latest_receipt_info": transactions.map(\.object),
            "pending_renewal_info": renewals.map(\.object),
        ]
        if let latestReceipt { o["latest_receipt"] = latestReceipt }
        return serialize(o)
    }

    /// An error answer, optionally with a retry flag in one of Apple's spellings; `retryFlag.json`
    /// is the flag's value as JSON text (`true`, `0`, `"false"`).
    static func status(_ code: Int, environment: String = "Production", retryFlag: (key: String, json: String)? = nil) -> String {
        var body = #"{"status": \#(code), "environment": "\#(environment)""#
        if let retryFlag { body += #", "\#(retryFlag.key)": \#(retryFlag.json)"# }
        return body + "}"
    }

    static func serialize(_ object: [String: Any]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }
}
