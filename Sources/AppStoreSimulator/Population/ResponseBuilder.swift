import Foundation

/// Writes verifyReceipt's answer the way Apple does: every value inside `latest_receipt_info` and
/// `pending_renewal_info` a string, each date three ways. Built from plain dictionaries on purpose:
/// it shares no Codable type with the poller, so a decoding mistake there cannot be mirrored here.
enum ResponseBuilder {
    static func valid(_ subscriber: SimulatedSubscriber, at ms: Int64, bundleID: String, excludeOldTransactions: Bool) -> [String: Any] {
        var latest: [[String: Any]] = []
        var pending: [[String: Any]] = []
        var inApp: [[String: Any]] = []
        for chain in subscriber.chains {
            let visible = chain.transactions.filter { $0.purchaseMs <= ms }
            guard let current = chain.current(at: ms), let first = visible.first else { continue }
            var shown = visible
            if excludeOldTransactions {
                // Only the latest transaction of each product: an upgrade still shows both products.
                var byProduct: [String: SimulatedChain.Transaction] = [:]
                for transaction in visible where (byProduct[transaction.productID]?.purchaseMs ?? .min) <= transaction.purchaseMs {
                    byProduct[transaction.productID] = transaction
                }
                shown = byProduct.values.sorted { $0.purchaseMs < $1.purchaseMs }
            }
            latest += shown.map { transaction($0, chain: chain, firstPurchaseMs: first.purchaseMs, at: ms) }
            inApp.append(transaction(first, chain: chain, firstPurchaseMs: first.purchaseMs, at: ms))
            pending.append(renewal(chain, current: current, at: ms))
        }
        return [
            "status": 0,
            "environment": subscriber.environment,
            "receipt": [
                "receipt_type": subscriber.environment == "Sandbox" ? "ProductionSandbox" : "Production",
                "adam_id": 0, "app_item_id": 0, "bundle_id": bundleID, "application_version": "1",
                "download_id": 0, "version_external_identifier": 0,
                "receipt_creation_date_ms": String(ms), "request_date_ms": String(ms),
                "original_application_version": "1.0", "in_app": inApp,
            ] as [String: Any],
            "latest_receipt": subscriber.receipt(at: ms),
            // Apple lists entries in no promised order; newest first is what it usually sends.
            "latest_receipt_info": latest.reversed() as [[String: Any]],
            "pending_renewal_info": pending,
        ]
    }

    static func transaction(_ t: SimulatedChain.Transaction, chain: SimulatedChain, firstPurchaseMs: Int64, at ms: Int64) -> [String: Any] {
        var o: [String: Any] = [
            "quantity": "1", "product_id": t.productID, "transaction_id": t.transactionID,
            "original_transaction_id": chain.originalTransactionID, "web_order_line_item_id": "9\(t.transactionID)",
            "is_trial_period": t.isTrial ? "true" : "false",
            "is_in_intro_offer_period": t.isIntroOffer ? "true" : "false",
            "subscription_group_identifier": chain.groupID, "in_app_ownership_type": chain.ownershipType,
        ]
        // verifyReceipt names a promotional offer and an offer code; it has no key for a win-back offer, nor any price.
        switch SimulatedOffer.of(t, in: chain) {
        case let offer? where offer.type == 2: o["promotional_offer_id"] = offer.identifier
        case let offer? where offer.type == 3: o["offer_code_ref_name"] = offer.identifier
        default: break
        }
        addDate(&o, "purchase_date", t.purchaseMs)
        addDate(&o, "original_purchase_date", firstPurchaseMs)
        addDate(&o, "expires_date", t.expiresMs)
        if let upgraded = t.upgradedAtMs, upgraded <= ms {
            o["is_upgraded"] = "true"
            addDate(&o, "cancellation_date", upgraded)
            o["cancellation_reason"] = "0"
        } else if let refunded = t.refund(at: ms) {
            // A refund (of this period or an earlier one) or a Family Sharing revoke; gone again
            // once Apple reverses the refund.
            addDate(&o, "cancellation_date", refunded)
            o["cancellation_reason"] = String(t.refundReason)
        }
        return o
    }

    static func renewal(_ chain: SimulatedChain, current: SimulatedChain.Transaction, at ms: Int64) -> [String: Any] {
        var o: [String: Any] = [
            "original_transaction_id": chain.originalTransactionID,
            "product_id": current.productID,
            "auto_renew_product_id": chain.latest(chain.autoRenewProduct, at: ms) ?? current.productID,
            "auto_renew_status": (chain.latest(chain.autoRenew, at: ms) ?? true) ? "1" : "0",
        ]
        let retry = chain.billingRetry(at: ms)
        if current.expiresMs <= ms {
            // These two appear only once the subscription has ended.
            o["is_in_billing_retry_period"] = retry != nil ? "1" : "0"
            if let intent = chain.expirationIntent(at: ms) { o["expiration_intent"] = String(intent) }
        }
        if let grace = retry?.graceEndMs, grace > ms { addDate(&o, "grace_period_expires_date", grace) }
        return o
    }

    private static func style(_ zone: String) -> Date.VerbatimFormatStyle {
        Date.VerbatimFormatStyle(
            format: "\(year: .padded(4))-\(month: .twoDigits)-\(day: .twoDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits)",
            timeZone: TimeZone(identifier: zone)!, calendar: Calendar(identifier: .gregorian))
    }

    private static let gmt = style("UTC")
    private static let pacific = style("America/Los_Angeles")

    /// Apple's three forms of one date: `x` (GMT text), `x_ms` (a string of digits), `x_pst`.
    static func addDate(_ o: inout [String: Any], _ name: String, _ ms: Int64) {
        let date = Date(timeIntervalSince1970: Double(ms) / 1000)
        o[name] = gmt.format(date) + " Etc/GMT"
        o["\(name)_ms"] = String(ms)
        o["\(name)_pst"] = pacific.format(date) + " America/Los_Angeles"
    }
}
