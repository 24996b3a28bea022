import Foundation

extension AppStoreSimulator {
    /// Extend a Subscription Renewal Date (`PUT …/inApps/v1/subscriptions/extend/{originalTransactionId}`)
    /// with Apple's checks in Apple's order: the token (401), the body (4000009 days not 1…90,
    /// 4000010 reason not 0…3, 4000011 no request identifier or one over 128 characters), the
    /// chain (4040005 unknown here), then its state (4030007 Family Sharing member, 4030004 not an
    /// active paid period, 4030005 two extensions in 365 days). A request identifier seen before
    /// gets its first answer again and extends nothing.
    public func answerExtendRenewalDate(
        environment: SimulatedEnvironment, originalTransactionID: String, body: Data, authorization: String?, receivedAt: Date = Date()
    ) -> (status: Int, body: Data) {
        serverAPIArrivals.arrived()
        state.withLock { $0.statistics.serverAPIRequests["inApps/v1/subscriptions/extend", default: 0] += 1 }
        guard serverAPIKey.accepts(authorization: authorization, bundleID: population.configuration.bundleID, now: receivedAt) else { return (401, Data()) }
        let request = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
        if let refusal = Self.refusal(of: request) { return refusal }
        let requestID = request["requestIdentifier"] as! String
        let days = (request["extendByDays"] as! NSNumber).intValue
        if let earlier = ledger.withLock({ $0.single[requestID] }) { return (earlier.status, Data(earlier.body.utf8)) }
        let clock = nowMs
        let outcome = records.withLock { population -> (Result<SimulatedChain.RenewalExtension, SimulatedChain.ExtensionRefusal>, Int)? in
            population.modifyChain(originalTransactionID) { chain, subscriber in
                guard subscriber.environment == environment.rawValue, let first = chain.transactions.first, first.purchaseMs <= clock else { return nil }
                return (chain.extendRenewal(at: clock, days: days, requestIdentifier: requestID), subscriber.index)
            } ?? nil
        }
        let answer: (status: Int, body: Data)
        switch outcome {
        case nil:
            answer = Self.error(404, 4_040_005, "Original transaction id not found.")
        case (.failure(let refusal), _)?:
            answer = Self.error(403, refusal.rawValue, Self.message(refusal))
        case (.success(let granted), let subscriber)?:
            answer = (200, Self.serializeServerAPI([
                "originalTransactionId": originalTransactionID, "webOrderLineItemId": "9\(granted.transactionID)", "success": true,
                "effectiveDate": granted.effectiveDateMs,
            ]))
            notify(LifecycleEvent(kind: .renewalExtended, atMs: clock, subscriberIndex: subscriber, originalTransactionID: originalTransactionID))
        }
        ledger.withLock { $0.single[requestID] = (originalTransactionID, answer.status, String(decoding: answer.body, as: UTF8.self)) }
        return answer
    }

    /// Apple's 400 for a body it refuses, nil for one it takes (the mass request's fields aside).
    static func refusal(of request: [String: Any]) -> (status: Int, body: Data)? {
        guard let days = request["extendByDays"] as? NSNumber, (1...90).contains(days.intValue) else {
            return error(400, 4_000_009, "Invalid extend by days value.")
        }
        guard let reason = request["extendReasonCode"] as? NSNumber, (0...3).contains(reason.intValue) else {
            return error(400, 4_000_010, "Invalid extend reason code.")
        }
        guard let id = request["requestIdentifier"] as? String, !id.isEmpty, id.count <= 128 else {
            return error(400, 4_000_011, "Invalid request identifier.")
        }
        return nil
    }

    static func message(_ refusal: SimulatedChain.ExtensionRefusal) -> String {
        switch refusal {
        case .ineligible: "Subscription extension ineligible."
        case .maxExtensions: "Subscription has reached the maximum number of extensions."
        case .familyShared: "Family shared subscription extension ineligible."
        }
    }

    static func error(_ status: Int, _ code: Int, _ message: String) -> (status: Int, body: Data) {
        (status, serializeServerAPI(["errorCode": code, "errorMessage": message]))
    }

    /// Schedules an event that happened at the clock with the outbox, when notifications are on.
    func notify(_ event: LifecycleEvent) {
        let population = self.population
        let pki = self.pki
        outbox.withLock { $0?.scheduleNow(event, population: population, pki: pki) }
    }
}
