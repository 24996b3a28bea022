import AppStoreSimulator
import Foundation
import Testing

/// Upgrades, downgrades, Family Sharing, and what every event and status of the simulator says.
extension SimulatedRefundShapesTests {
    /// An upgrade from yearly to the monthly higher tier: the new transaction expires months
    /// before the upgraded one would have, and it is the current one — not the latest expiry.
    @Test func anUpgradeToAShorterPeriodCarriesTheNewTransaction() throws {
        let (subscriber, chain) = try Self.chain { chain in
            chain.transactions.contains { $0.productID == "premium.yearly" && ($0.upgradedAtMs ?? 0) > Self.start }
        }
        let old = try #require(chain.transactions.first { $0.productID == "premium.yearly" && ($0.upgradedAtMs ?? 0) > Self.start })
        let at = try #require(old.upgradedAtMs)
        let new = try #require(chain.transactions.first { $0.purchaseMs == at })
        #expect(new.productID == "premium.pro.monthly" && new.expiresMs == at + 30 * Self.day)
        #expect(new.expiresMs < old.expiresMs)
        #expect(chain.current(at: at)?.transactionID == new.transactionID)
        #expect(chain.current(at: at - 1)?.transactionID == old.transactionID)

        let (_, notified) = try Self.version2(chain, from: at - 1, through: at)
        let upgrade = try #require(notified.first { $0.event.kind == .upgraded })
        #expect(upgrade.type == "DID_CHANGE_RENEWAL_PREF" && upgrade.subtype == "UPGRADE")
        #expect(upgrade.status == 1)
        #expect(upgrade.transactionID == new.transactionID)
        #expect(Kit.int64(upgrade.transaction["expiresDate"]) == new.expiresMs)
        #expect(upgrade.transaction["transactionReason"] as? String == "PURCHASE")
        #expect(upgrade.renewal["autoRenewProductId"] as? String == "premium.pro.monthly")
        let v1 = try #require(try Self.version1(chain, from: at - 1, through: at).first { $0.event.kind == .upgraded }?.body)
        #expect(v1["notification_type"] as? String == "INTERACTIVE_RENEWAL")
        #expect(Self.unifiedEntries(v1)[old.transactionID]?["is_upgraded"] as? String == "true")
        #expect(Self.unifiedEntries(v1)[old.transactionID]?["cancellation_date_ms"] as? String == String(at))
        #expect(Self.unifiedEntries(v1)[new.transactionID]?["is_upgraded"] == nil)

        let truth = try #require(subscriber.entitlement(originalTransactionID: chain.originalTransactionID, at: at))
        #expect(truth.transactionID == new.transactionID && truth.productID == "premium.pro.monthly" && truth.expiresAtMs == new.expiresMs)
        #expect(truth.purchaseMs == at && truth.cancelledAtMs == nil && truth.state == "active")
        let api = try Self.serverAPI(chain, at: at)
        #expect(api.current["transactionId"] as? String == new.transactionID)
        if let upgraded = api.history[old.transactionID] {
            #expect(upgraded["isUpgraded"] as? Bool == true)
            #expect(upgraded["revocationDate"] == nil)
        }
    }

    /// A downgrade waits for the renewal: `DOWNGRADE` changes only `autoRenewProductId`; the next
    /// `DID_RENEW` carries the lower product.
    @Test func aDowngradeTakesEffectAtTheNextRenewal() throws {
        let (_, chain) = try Self.chain { chain in
            chain.autoRenewProduct.dropFirst().contains { change in
                change.atMs > Self.start && change.value == "premium.monthly" && !chain.purchases.contains { $0.atMs == change.atMs }
                    && chain.transactions.contains { $0.purchaseMs > change.atMs && $0.productID == "premium.monthly" }
            }
        }
        let change = try #require(chain.autoRenewProduct.dropFirst().first { change in
            change.atMs > Self.start && change.value == "premium.monthly" && !chain.purchases.contains { $0.atMs == change.atMs }
        })
        let renewal = try #require(chain.transactions.first { $0.purchaseMs > change.atMs })
        let (_, notified) = try Self.version2(chain, from: change.atMs - 1, through: renewal.purchaseMs)
        let downgrade = try #require(notified.first { $0.event.kind == .downgraded })
        #expect(downgrade.type == "DID_CHANGE_RENEWAL_PREF" && downgrade.subtype == "DOWNGRADE")
        #expect(downgrade.transaction["productId"] as? String == "premium.pro.monthly")
        #expect(downgrade.renewal["productId"] as? String == "premium.pro.monthly")
        #expect(downgrade.renewal["autoRenewProductId"] as? String == "premium.monthly")
        #expect(downgrade.status == 1)
        let renewed = try #require(notified.first { $0.event.kind == .renewed && $0.signedDate == renewal.purchaseMs })
        #expect(renewed.type == "DID_RENEW" && renewed.subtype == nil)
        #expect(renewed.transactionID == renewal.transactionID)
        #expect(renewed.transaction["productId"] as? String == "premium.monthly")
        #expect(renewed.transaction["transactionReason"] as? String == "RENEWAL")
    }

    /// A Family Sharing member: every transaction `FAMILY_SHARED`; `REVOKE` (V2 and V1) re-signs
    /// the current one with `revocationDate` and reason 0, status 5; the access is gone.
    @Test func aFamilySharingMembersAccessIsRevoked() throws {
        let (subscriber, chain) = try Self.chain { chain in chain.isFamilyShared && chain.transactions.contains { ($0.refundedAtMs ?? 0) > Self.start } }
        let t = try #require(chain.transactions.first { ($0.refundedAtMs ?? 0) > Self.start })
        let revoked = try #require(t.refundedAtMs)
        #expect(chain.transactions.allSatisfy { !$0.isTrial && $0.refundRequestedAtMs == nil && $0.refundReversedAtMs == nil })

        let (_, notified) = try Self.version2(chain, from: revoked - 1, through: revoked)
        let revoke = try #require(notified.first { $0.event.kind == .revoked })
        #expect(revoke.type == "REVOKE" && revoke.subtype == nil)
        #expect(revoke.status == 5)
        #expect(revoke.transactionID == t.transactionID)
        #expect(revoke.transaction["inAppOwnershipType"] as? String == "FAMILY_SHARED")
        #expect(Kit.int64(revoke.transaction["revocationDate"]) == revoked)
        #expect(revoke.transaction["revocationReason"] as? Int == 0)
        #expect(revoke.transaction["revocationType"] as? String == "FAMILY_REVOKE")
        #expect(revoke.renewal["autoRenewStatus"] as? Int == 0)
        let v1 = try #require(try Self.version1(chain, from: revoked - 1, through: revoked).first { $0.event.kind == .revoked }?.body)
        #expect(v1["notification_type"] as? String == "REVOKE")
        #expect(Self.unifiedEntries(v1)[t.transactionID]?["in_app_ownership_type"] as? String == "FAMILY_SHARED")
        #expect(Self.unifiedEntries(v1)[t.transactionID]?["cancellation_date_ms"] as? String == String(revoked))

        let before = try #require(subscriber.entitlement(originalTransactionID: chain.originalTransactionID, at: revoked - 1))
        #expect(before.ownershipType == "FAMILY_SHARED" && before.isEntitled && before.cancelledAtMs == nil)
        let truth = try #require(subscriber.entitlement(originalTransactionID: chain.originalTransactionID, at: revoked))
        #expect(truth.state == "refunded" && !truth.isEntitled)
        #expect(truth.cancelledAtMs == revoked && truth.ownershipType == "FAMILY_SHARED" && truth.transactionID == t.transactionID)
        let entries = try Self.receiptEntries(subscriber, chain, at: revoked)
        #expect(entries.values.allSatisfy { $0["in_app_ownership_type"] as? String == "FAMILY_SHARED" })
        #expect(entries[t.transactionID]?["cancellation_date_ms"] as? String == String(revoked))
        #expect(entries[t.transactionID]?["cancellation_reason"] as? String == "0")
        let api = try Self.serverAPI(chain, at: revoked)
        #expect(api.status == 5)
        #expect(api.current["inAppOwnershipType"] as? String == "FAMILY_SHARED")
        #expect(Kit.int64(api.current["revocationDate"]) == revoked)
        #expect(api.history.values.allSatisfy { $0["inAppOwnershipType"] as? String == "FAMILY_SHARED" })
    }

    /// Every V2 notification of 60 days carries Apple's `data.status` for the chain at its
    /// `signedDate` — the current period's, whatever transaction it is about — and a billing
    /// failure inside a grace period is `DID_FAIL_TO_RENEW/GRACE_PERIOD`.
    @Test func everyStatusIsTheCurrentPeriodsAtTheSigningDate() throws {
        let simulator = AppStoreSimulator(population: Self.population, clockMs: Self.start)
        simulator.sendNotifications(version: 2)
        while let attempt = simulator.nextNotificationAttempt(through: Self.start + 60 * Self.day) { simulator.recordNotificationAttempt(attempt, result: .success) }
        var byStatus: [Int: Int] = [:]
        var aboutAnotherTransaction = 0
        for record in simulator.notificationRecords {
            let event = try #require(record.event)
            let payload = try Kit.payload(record.signedPayload)
            let data = try #require(payload["data"] as? [String: Any])
            let chain = try #require(Self.population.subscribers[event.subscriberIndex].chains.first { $0.originalTransactionID == event.originalTransactionID })
            let status = try #require(data["status"] as? Int)
            #expect(status == Self.applesStatus(chain, at: event.atMs), "\(event)")
            byStatus[status, default: 0] += 1
            let transaction = try Kit.payload(try #require(data["signedTransactionInfo"] as? String))
            if transaction["transactionId"] as? String != chain.current(at: event.atMs)?.transactionID { aboutAnotherTransaction += 1 }
            if event.kind == .failedToRenewInGracePeriod { #expect(payload["subtype"] as? String == "GRACE_PERIOD" && status == 4) }
        }
        #expect(Set(byStatus.keys) == [1, 2, 3, 4, 5], "\(byStatus)")
        #expect(aboutAnotherTransaction > 0)
    }

    /// A notification is about a transaction that exists at its instant: no refund, request or
    /// upgrade before its purchase (a period recovered inside its grace period is bought after
    /// the period began), no reversal before its refund, no answer before its request.
    @Test func everyEventIsAboutATransactionBoughtByThen() throws {
        for population in [Self.population, Population(PopulationConfiguration(subscribers: 1500, seed: 3, startMs: Self.start, horizonMs: Self.start + 300 * Self.day))] {
            var carried = 0
            for event in population.lifecycleEvents(after: 0, through: Self.start + 300 * Self.day) {
                let chain = try #require(population.subscribers[event.subscriberIndex].chains.first { $0.originalTransactionID == event.originalTransactionID })
                let current = try #require(chain.current(at: event.atMs), "\(event)")
                guard let id = event.transactionID else { continue }
                let t = try #require(chain.transactions.first { $0.transactionID == id })
                #expect(t.purchaseMs <= event.atMs, "\(event)")
                #expect(t.purchaseMs <= current.purchaseMs, "\(event)")
                carried += 1
            }
            for t in population.subscribers.flatMap(\.chains).flatMap(\.transactions) {
                for moment in [t.refundedAtMs, t.refundRequestedAtMs, t.upgradedAtMs].compactMap({ $0 }) { #expect(moment > t.purchaseMs, "\(t)") }
                if let reversed = t.refundReversedAtMs { #expect(reversed > t.refundedAtMs ?? .max, "\(t)") }
                if let answered = t.refundDeclinedAtMs ?? (t.refundRequestedAtMs == nil ? nil : t.refundedAtMs) {
                    #expect(answered > t.refundRequestedAtMs ?? .max, "\(t)")
                }
            }
            #expect(carried > 1000)
        }
    }

    /// The kinds that change no column change none; every other kind changes one.
    @Test func onlyRefundRequestsDeclinesAndEarlierPeriodsChangeNoColumn() throws {
        let events = Self.population.lifecycleEvents(after: Self.start, through: Self.start + 200 * Self.day)
        let instants = Dictionary(grouping: events) { "\($0.originalTransactionID)|\($0.atMs)" }
        var checked: [Bool: Int] = [:]
        for event in events where instants["\(event.originalTransactionID)|\(event.atMs)"]?.count == 1 {
            let subscriber = Self.population.subscribers[event.subscriberIndex]
            var before = try #require(subscriber.entitlement(originalTransactionID: event.originalTransactionID, at: event.atMs - 1))
            var after = try #require(subscriber.entitlement(originalTransactionID: event.originalTransactionID, at: event.atMs))
            (before.latestReceipt, after.latestReceipt, before.state, after.state) = ("", "", "", "")
            #expect((before != after) == event.changesEntitlement, "\(event)")
            checked[event.changesEntitlement, default: 0] += 1
        }
        #expect(checked[false, default: 0] > 50 && checked[true, default: 0] > 1000, "\(checked)")
    }

    /// The default rates play every new shape a few times in the default demo's 45 nights.
    @Test func theDefaultDemoPlaysEveryShape() {
        let population = Population(PopulationConfiguration(startMs: Self.start, horizonMs: Self.start + 135 * Self.day))
        var kinds: [LifecycleEvent.Kind: Int] = [:]
        for event in population.lifecycleEvents(after: Self.start - Self.hour, through: Self.start + 45 * Self.day) { kinds[event.kind, default: 0] += 1 }
        for kind: LifecycleEvent.Kind in [.refundRequested, .refundDeclined, .refundedEarlierPeriod, .refundReversed, .earlierRefundReversed, .revoked, .upgraded, .downgraded] {
            #expect(kinds[kind, default: 0] >= 3, "\(kind): \(kinds)")
        }
        let longToShort = population.subscribers.flatMap(\.chains).flatMap(\.transactions).filter {
            $0.productID == "premium.yearly" && ($0.upgradedAtMs ?? 0) > Self.start - Self.hour && ($0.upgradedAtMs ?? .max) <= Self.start + 45 * Self.day
        }
        #expect(longToShort.count >= 3, "upgrades from yearly: \(longToShort.count)")
        print("kinds in the default demo's nights: \(kinds.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue)=\($0.value)" }.joined(separator: " ")); from yearly \(longToShort.count)")
    }
}
