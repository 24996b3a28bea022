import AppStoreSimulator
import Foundation
import Testing

/// The shapes of genuine Apple traffic whose transaction is not the chain's current one, or whose
/// status the message's transaction does not tell: a refund of an earlier period while the
/// subscription renews on, a declined refund request, a reversed refund, an upgrade to a shorter
/// period, a downgrade at renewal, a Family Sharing member's revoke. Each checked with exact values
/// in V2 (its signed transaction and `data.status`), V1 (`unified_receipt`), the notification
/// history, verifyReceipt and the Server API, against the truth. Read with JSONSerialization.
@Suite struct SimulatedRefundShapesTests {
    static let start: Int64 = 1_790_000_000_000
    static let day: Int64 = 86_400_000
    static let hour: Int64 = 3_600_000
    /// Every shape many times over.
    static let population = Population(PopulationConfiguration(
        subscribers: 600, seed: 31, startMs: start, horizonMs: start + 400 * day, upgradeRate: 0.1,
        earlierRefundRate: 0.1, refundDeclinedRate: 0.05, refundReversedRate: 0.4, familySharedShare: 0.2, familyRevokeRate: 0.1))
    typealias Kit = ServerAPITestKit

    /// A V2 notification, decoded.
    struct Notified {
        var event: LifecycleEvent
        var type: String
        var subtype: String?
        var signedDate: Int64?
        var data: [String: Any]
        var transaction: [String: Any]
        var renewal: [String: Any]
        var signedPayload: String
        var status: Int? { data["status"] as? Int }
        var transactionID: String? { transaction["transactionId"] as? String }
    }

    /// The chain `id` of the population, with its subscriber.
    static func chain(_ predicate: (SimulatedChain) -> Bool) throws -> (SimulatedSubscriber, SimulatedChain) {
        for subscriber in population.subscribers where subscriber.environment == "Production" {
            if let chain = subscriber.chains.first(where: predicate) { return (subscriber, chain) }
        }
        throw CocoaError(.coderValueNotFound)
    }

    /// The simulator's V2 notifications of the chain's events in (from, through], each delivered.
    static func version2(_ chain: SimulatedChain, from: Int64, through: Int64) throws -> (AppStoreSimulator, [Notified]) {
        let simulator = AppStoreSimulator(population: population, clockMs: from)
        simulator.sendNotifications(version: 2)
        while let attempt = simulator.nextNotificationAttempt(through: through) { simulator.recordNotificationAttempt(attempt, result: .success) }
        let notified = try simulator.notificationRecords.filter { $0.event?.originalTransactionID == chain.originalTransactionID }.map { record in
            let payload = try Kit.payload(record.signedPayload)
            let data = try #require(payload["data"] as? [String: Any])
            return Notified(
                event: try #require(record.event), type: try #require(payload["notificationType"] as? String), subtype: payload["subtype"] as? String,
                signedDate: Kit.int64(payload["signedDate"]), data: data,
                transaction: try Kit.payload(try #require(data["signedTransactionInfo"] as? String)),
                renewal: try Kit.payload(try #require(data["signedRenewalInfo"] as? String)), signedPayload: record.signedPayload)
        }
        return (simulator, notified)
    }

    /// The simulator's V1 bodies of the chain's events in (from, through].
    static func version1(_ chain: SimulatedChain, from: Int64, through: Int64) throws -> [(event: LifecycleEvent, body: [String: Any])] {
        let simulator = AppStoreSimulator(population: population, clockMs: from)
        simulator.sendNotifications(version: 1)
        while let attempt = simulator.nextNotificationAttempt(through: through) { simulator.recordNotificationAttempt(attempt, result: .success) }
        return try simulator.notificationRecords.filter { $0.event?.originalTransactionID == chain.originalTransactionID }.map { record in
            (try #require(record.event), try #require(try JSONSerialization.jsonObject(with: record.body) as? [String: Any]))
        }
    }

    /// verifyReceipt's `latest_receipt_info` entries of the chain at `ms`, by transaction id.
    static func receiptEntries(_ subscriber: SimulatedSubscriber, _ chain: SimulatedChain, at ms: Int64) throws -> [String: [String: Any]] {
        let simulator = AppStoreSimulator(population: population, clockMs: ms)
        let body = try JSONSerialization.data(withJSONObject: [
            "receipt-data": subscriber.receipt(at: ms), "password": "simulator-shared-secret", "exclude-old-transactions": false,
        ] as [String: Any])
        guard case .json(let data) = simulator.answer(environment: .production, body: body).reply else { throw CocoaError(.coderInvalidValue) }
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(json["status"] as? Int == 0)
        let entries = (json["latest_receipt_info"] as? [[String: Any]] ?? []).filter { $0["original_transaction_id"] as? String == chain.originalTransactionID }
        return Dictionary(uniqueKeysWithValues: entries.map { ($0["transaction_id"] as? String ?? "", $0) })
    }

    /// `entries` of a V1 body's `unified_receipt.latest_receipt_info`, by transaction id.
    static func unifiedEntries(_ body: [String: Any]) -> [String: [String: Any]] {
        let entries = (body["unified_receipt"] as? [String: Any])?["latest_receipt_info"] as? [[String: Any]] ?? []
        return Dictionary(uniqueKeysWithValues: entries.map { ($0["transaction_id"] as? String ?? "", $0) })
    }

    /// The Server API's answers at `ms`: the chain's `lastTransactions` entry (status and decoded
    /// transaction) and every transaction of Get Transaction History, by id.
    static func serverAPI(_ chain: SimulatedChain, at ms: Int64) throws -> (status: Int?, current: [String: Any], history: [String: [String: Any]]) {
        let simulator = AppStoreSimulator(population: population, clockMs: ms)
        func ask(_ endpoint: ServerAPIRequest.Endpoint) throws -> [String: Any] {
            let request = ServerAPIRequest(
                environment: .production, endpoint: endpoint, transactionID: chain.originalTransactionID, authorization: "Bearer " + (try Kit.token(simulator)))
            guard case .json(let data) = simulator.answerServerAPI(request).reply else { throw CocoaError(.coderInvalidValue) }
            return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        }
        let statuses = try ask(.allSubscriptionStatuses)
        let last = ((statuses["data"] as? [[String: Any]]) ?? []).flatMap { $0["lastTransactions"] as? [[String: Any]] ?? [] }
        let entry = try #require(last.first { $0["originalTransactionId"] as? String == chain.originalTransactionID })
        let current = try Kit.payload(try #require(entry["signedTransactionInfo"] as? String))
        let history = try #require(try ask(.transactionHistory)["signedTransactions"] as? [String]).map(Kit.payload)
        #expect(history.count <= 20)
        return (entry["status"] as? Int, current, Dictionary(uniqueKeysWithValues: history.map { ($0["transactionId"] as? String ?? "", $0) }))
    }

    /// Apple's `data.status` restated from the chain's history: the current period's, never the
    /// message's transaction's: 5 revoked, 1 active, 4 grace period, 3 billing retry, 2 expired.
    static func applesStatus(_ chain: SimulatedChain, at ms: Int64) -> Int {
        let current = chain.transactions.filter { $0.purchaseMs <= ms && ($0.upgradedAtMs ?? .max) > ms }.max { $0.purchaseMs < $1.purchaseMs }!
        if let refunded = current.refundedAtMs, refunded <= ms, (current.refundReversedAtMs ?? .max) > ms { return 5 }
        if current.expiresMs > ms { return 1 }
        guard let retry = chain.billingRetries.first(where: { $0.startMs <= ms && ms < $0.endMs }) else { return 2 }
        return (retry.graceEndMs ?? .min) > ms ? 4 : 3
    }

    /// The customer gets last month's charge back and keeps subscribing: `CONSUMPTION_REQUEST`
    /// and then `REFUND` carry the earlier transaction (revoked only in the second) while the
    /// status stays 1; V1's `REFUND` lists the whole chain, the earlier entry cancelled; the truth
    /// keeps the current period; verifyReceipt and the Server API mark only the earlier one.
    @Test func aRefundOfAnEarlierPeriodLeavesTheCurrentOneAsItWas() throws {
        let (subscriber, chain) = try Self.chain { chain in
            chain.transactions.contains { t in
                t.refundRequestedAtMs.map { $0 > Self.start } == true && t.refundedAtMs != nil && t.refundReversedAtMs == nil
            }
        }
        let earlier = try #require(chain.transactions.first { $0.refundRequestedAtMs.map { $0 > Self.start } == true && $0.refundedAtMs != nil })
        let asked = try #require(earlier.refundRequestedAtMs), refunded = try #require(earlier.refundedAtMs)
        let current = try #require(chain.current(at: refunded))
        #expect(current.transactionID != earlier.transactionID)
        #expect(current.purchaseMs > earlier.purchaseMs && current.expiresMs > refunded)
        #expect(earlier.refundReason == 1)
        #expect(refunded - asked >= 12 * Self.hour && refunded - asked <= 48 * Self.hour)

        let (simulator, notified) = try Self.version2(chain, from: asked - 1, through: refunded)
        let request = try #require(notified.first { $0.event.kind == .refundRequested })
        #expect(request.type == "CONSUMPTION_REQUEST" && request.subtype == nil)
        #expect(request.signedDate == asked)
        #expect(request.status == 1)
        #expect(request.data["consumptionRequestReason"] as? String == "UNSATISFIED_WITH_PURCHASE")
        #expect(request.transactionID == earlier.transactionID)
        #expect(Kit.int64(request.transaction["expiresDate"]) == earlier.expiresMs)
        #expect(request.transaction["revocationDate"] == nil)
        #expect(request.renewal["productId"] as? String == current.productID)
        #expect(Kit.int64(request.renewal["renewalDate"]) == current.expiresMs)

        let refund = try #require(notified.first { $0.event.kind == .refundedEarlierPeriod })
        #expect(refund.type == "REFUND" && refund.subtype == nil)
        #expect(refund.signedDate == refunded)
        #expect(refund.status == 1)
        #expect(refund.transactionID == earlier.transactionID)
        #expect(refund.transaction["productId"] as? String == earlier.productID)
        #expect(Kit.int64(refund.transaction["revocationDate"]) == refunded)
        #expect(refund.transaction["revocationReason"] as? Int == 1)
        #expect(refund.transaction["revocationType"] as? String == "REFUND_FULL")
        #expect(refund.transaction["inAppOwnershipType"] as? String == "PURCHASED")

        // The notification history serves the very payloads that were posted.
        simulator.setClock(refunded)
        let history = simulator.answerNotificationHistory(
            environment: "Production", body: Data(#"{"startDate":\#(refunded),"endDate":\#(refunded + 1)}"#.utf8), paginationToken: nil)
        let page = try #require(try JSONSerialization.jsonObject(with: history.body) as? [String: Any])
        let payloads = (page["notificationHistory"] as? [[String: Any]] ?? []).compactMap { $0["signedPayload"] as? String }
        #expect(payloads.contains(refund.signedPayload))

        // V1 has no CONSUMPTION_REQUEST for subscriptions; its REFUND lists the chain.
        let v1 = try Self.version1(chain, from: asked - 1, through: refunded)
        #expect(!v1.contains { $0.event.kind == .refundRequested })
        let body = try #require(v1.first { $0.event.kind == .refundedEarlierPeriod }?.body)
        #expect(body["notification_type"] as? String == "REFUND")
        #expect(body["auto_renew_status"] as? String == "true")
        let unified = Self.unifiedEntries(body)
        #expect(unified[earlier.transactionID]?["cancellation_date_ms"] as? String == String(refunded))
        #expect(unified[earlier.transactionID]?["cancellation_reason"] as? String == "1")
        #expect(unified[current.transactionID]?["cancellation_date_ms"] == nil)

        let after = refunded + 60_000
        let truth = try #require(subscriber.entitlement(originalTransactionID: chain.originalTransactionID, at: after))
        #expect(truth.state == "active")
        #expect(truth.cancelledAtMs == nil)
        #expect(truth.transactionID == current.transactionID && truth.purchaseMs == current.purchaseMs)
        #expect(truth.expiresAtMs == current.expiresMs && truth.productID == current.productID)
        #expect(truth.ownershipType == "PURCHASED")
        // Nothing of the truth moves at the request or the refund.
        var before = try #require(subscriber.entitlement(originalTransactionID: chain.originalTransactionID, at: asked - 1))
        before.latestReceipt = truth.latestReceipt
        #expect(before == truth)

        let entries = try Self.receiptEntries(subscriber, chain, at: after)
        #expect(entries[earlier.transactionID]?["cancellation_date_ms"] as? String == String(refunded))
        #expect(entries[earlier.transactionID]?["cancellation_reason"] as? String == "1")
        #expect(entries[current.transactionID]?["cancellation_date_ms"] == nil)
        let beforeRefund = try Self.receiptEntries(subscriber, chain, at: refunded - 1)
        #expect(beforeRefund[earlier.transactionID]?["cancellation_date_ms"] == nil)

        let api = try Self.serverAPI(chain, at: after)
        #expect(api.status == 1)
        #expect(api.current["transactionId"] as? String == current.transactionID)
        #expect(api.current["revocationDate"] == nil)
        if let old = api.history[earlier.transactionID] {
            #expect(Kit.int64(old["revocationDate"]) == refunded)
            #expect(old["revocationReason"] as? Int == 1)
        }
    }

    /// A request Apple declines: `CONSUMPTION_REQUEST`, then `REFUND_DECLINED`, both carrying the
    /// requested transaction untouched; no V1 message; the truth and every answer stay as they were.
    @Test func aDeclinedRefundRequestChangesNothing() throws {
        let (subscriber, chain) = try Self.chain { chain in chain.transactions.contains { ($0.refundDeclinedAtMs ?? 0) > Self.start } }
        let t = try #require(chain.transactions.first { ($0.refundDeclinedAtMs ?? 0) > Self.start })
        let asked = try #require(t.refundRequestedAtMs), declined = try #require(t.refundDeclinedAtMs)
        #expect(t.refundedAtMs == nil)
        let (_, notified) = try Self.version2(chain, from: asked - 1, through: declined)
        let request = try #require(notified.first { $0.event.kind == .refundRequested })
        let decline = try #require(notified.first { $0.event.kind == .refundDeclined })
        #expect(request.type == "CONSUMPTION_REQUEST")
        #expect(decline.type == "REFUND_DECLINED" && decline.subtype == nil)
        #expect(decline.signedDate == declined)
        for message in [request, decline] {
            #expect(message.transactionID == t.transactionID)
            #expect(message.transaction["revocationDate"] == nil)
            #expect(message.status == Self.applesStatus(chain, at: try #require(message.signedDate)))
        }
        #expect(try Self.version1(chain, from: asked - 1, through: declined).allSatisfy { ![.refundRequested, .refundDeclined].contains($0.event.kind) })
        var before = try #require(subscriber.entitlement(originalTransactionID: chain.originalTransactionID, at: asked - 1))
        let after = try #require(subscriber.entitlement(originalTransactionID: chain.originalTransactionID, at: declined + 1))
        before.latestReceipt = after.latestReceipt
        if chain.transactions.allSatisfy({ $0.purchaseMs <= asked - 1 || $0.purchaseMs > declined + 1 }) { #expect(before == after) }
        let entries = try Self.receiptEntries(subscriber, chain, at: declined + 1)
        #expect(entries[t.transactionID]?["cancellation_date_ms"] == nil)
    }

    /// Apple reverses a refund of the current period before it ends: `REFUND` (status 5) and
    /// then `REFUND_REVERSED` (status 1) whose transaction is signed again without revocation;
    /// the truth has the access back and every answer drops the cancellation.
    @Test func aReversedRefundOfTheCurrentPeriodGivesTheAccessBack() throws {
        let (subscriber, chain) = try Self.chain { chain in
            !chain.isFamilyShared && chain.transactions.contains { t in t.refundRequestedAtMs == nil && (t.refundedAtMs ?? 0) > Self.start && t.refundReversedAtMs != nil }
        }
        let t = try #require(chain.transactions.first { $0.refundRequestedAtMs == nil && ($0.refundedAtMs ?? 0) > Self.start && $0.refundReversedAtMs != nil })
        let refunded = try #require(t.refundedAtMs), reversed = try #require(t.refundReversedAtMs)
        #expect(reversed > refunded && reversed < t.expiresMs)
        #expect(subscriber.entitlement(originalTransactionID: chain.originalTransactionID, at: reversed - 1)?.state == "refunded")
        #expect(subscriber.entitlement(originalTransactionID: chain.originalTransactionID, at: reversed - 1)?.cancelledAtMs == refunded)

        let (_, notified) = try Self.version2(chain, from: refunded - 1, through: reversed)
        let refund = try #require(notified.first { $0.event.kind == .refunded })
        #expect(refund.type == "REFUND" && refund.status == 5)
        #expect(Kit.int64(refund.transaction["revocationDate"]) == refunded)
        #expect(refund.transaction["revocationReason"] as? Int == 0)
        let reversal = try #require(notified.first { $0.event.kind == .refundReversed })
        #expect(reversal.type == "REFUND_REVERSED" && reversal.subtype == nil)
        #expect(reversal.signedDate == reversed)
        #expect(reversal.status == 1)
        #expect(reversal.transactionID == t.transactionID)
        #expect(reversal.transaction["revocationDate"] == nil && reversal.transaction["revocationReason"] == nil)
        #expect(Kit.int64(reversal.transaction["expiresDate"]) == t.expiresMs)
        #expect(!(try Self.version1(chain, from: refunded - 1, through: reversed)).contains { $0.event.kind == .refundReversed })

        let truth = try #require(subscriber.entitlement(originalTransactionID: chain.originalTransactionID, at: reversed))
        #expect(truth.state == "active" && truth.isEntitled)
        #expect(truth.cancelledAtMs == nil)
        #expect(truth.transactionID == t.transactionID && truth.expiresAtMs == t.expiresMs)
        // Auto-renew stays off, as the refund left it: the renewal date stands, the period ends.
        #expect(truth.autoRenewStatus == false)
        #expect(try Self.receiptEntries(subscriber, chain, at: reversed)[t.transactionID]?["cancellation_date_ms"] == nil)
        #expect(try Self.receiptEntries(subscriber, chain, at: reversed - 1)[t.transactionID]?["cancellation_date_ms"] as? String == String(refunded))
        let api = try Self.serverAPI(chain, at: reversed)
        #expect(api.status == 1)
        #expect(api.current["transactionId"] as? String == t.transactionID && api.current["revocationDate"] == nil)
    }

    /// Apple reverses the refund of an earlier period: `REFUND_REVERSED` carries that transaction
    /// without revocation, status of the current period; nothing of the truth moves.
    @Test func aReversedRefundOfAnEarlierPeriodChangesNoColumn() throws {
        let (subscriber, chain) = try Self.chain { chain in
            chain.transactions.contains { t in t.refundRequestedAtMs != nil && (t.refundReversedAtMs ?? 0) > Self.start }
        }
        let t = try #require(chain.transactions.first { $0.refundRequestedAtMs != nil && ($0.refundReversedAtMs ?? 0) > Self.start })
        let reversed = try #require(t.refundReversedAtMs)
        let (_, notified) = try Self.version2(chain, from: reversed - 1, through: reversed)
        let reversal = try #require(notified.first { $0.event.kind == .earlierRefundReversed })
        #expect(reversal.type == "REFUND_REVERSED")
        #expect(reversal.transactionID == t.transactionID)
        #expect(reversal.transaction["revocationDate"] == nil)
        #expect(reversal.status == Self.applesStatus(chain, at: reversed))
        #expect(chain.current(at: reversed)?.transactionID != t.transactionID)
        var before = try #require(subscriber.entitlement(originalTransactionID: chain.originalTransactionID, at: reversed - 1))
        let after = try #require(subscriber.entitlement(originalTransactionID: chain.originalTransactionID, at: reversed))
        before.latestReceipt = after.latestReceipt
        #expect(before == after)
        #expect(try Self.receiptEntries(subscriber, chain, at: reversed)[t.transactionID]?["cancellation_date_ms"] == nil)
        #expect(try Self.receiptEntries(subscriber, chain, at: reversed - 1)[t.transactionID]?["cancellation_date_ms"] as? String == String(try #require(t.refundedAtMs)))
    }
}
