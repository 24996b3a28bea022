import Foundation

extension AppStoreSimulator {
    /// A mass request takes this long in simulated time: Apple says hours or days; minutes keep
    /// tests short while still needing the status to be asked more than once.
    public static let massExtensionDurationMs: Int64 = 10 * 60_000

    /// Extend Subscription Renewal Dates for All Active Subscribers (`POST …/extend/mass`): checks
    /// the body as the single request does, plus `productId` (4000023 for one the app does not
    /// sell) and `storefrontCountryCodes` (4000027 an empty list, 4000028 a code that is not
    /// ISO 3166-1 alpha-3); answers `requestIdentifier` at once. The App Store works through it in
    /// ``ExtensionLedger/massDurationMs`` of simulated time (see ``setClock(_:)``); the same
    /// request identifier again is answered the same and starts nothing.
    public func answerMassExtension(environment: SimulatedEnvironment, body: Data, authorization: String?, receivedAt: Date = Date()) -> (status: Int, body: Data) {
        serverAPIArrivals.arrived()
        state.withLock { $0.statistics.serverAPIRequests["inApps/v1/subscriptions/extend/mass", default: 0] += 1 }
        guard serverAPIKey.accepts(authorization: authorization, bundleID: population.configuration.bundleID, now: receivedAt) else { return (401, Data()) }
        let request = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
        if let refusal = Self.refusal(of: request) { return refusal }
        let known = [Catalog.monthly, Catalog.yearly, Catalog.proMonthly, Catalog.storageMonthly].map(\.id)
        guard let productID = request["productId"] as? String, known.contains(productID) else { return Self.error(400, 4_000_023, "Invalid product id.") }
        let codes = request["storefrontCountryCodes"] as? [String]
        if let codes, codes.isEmpty { return Self.error(400, 4_000_027, "Invalid empty storefront country code list.") }
        if let codes, !codes.allSatisfy({ $0.count == 3 && $0.allSatisfy { $0.isASCII && $0.isUppercase } }) {
            return Self.error(400, 4_000_028, "Invalid storefront country code.")
        }
        let requestID = request["requestIdentifier"] as! String
        let clock = nowMs
        ledger.withLock { ledger in
            guard ledger.mass[requestID] == nil else { return }
            ledger.mass[requestID] = ExtensionLedger.MassRequest(
                requestIdentifier: requestID, productID: productID, days: (request["extendByDays"] as! NSNumber).intValue,
                reasonCode: (request["extendReasonCode"] as! NSNumber).intValue, storefrontCountryCodes: codes, environment: environment.rawValue,
                requestedAtMs: clock, completesAtMs: clock + ExtensionLedger.massDurationMs)
        }
        return (200, Self.serializeServerAPI(["requestIdentifier": requestID]))
    }

    /// Get Status of Subscription Renewal Date Extensions (`GET …/extend/mass/{productId}/{requestIdentifier}`):
    /// 404 4040009 for a request this environment does not know under that product.
    public func answerMassExtensionStatus(
        environment: SimulatedEnvironment, productID: String, requestIdentifier: String, authorization: String?, receivedAt: Date = Date()
    ) -> (status: Int, body: Data) {
        serverAPIArrivals.arrived()
        state.withLock { $0.statistics.serverAPIRequests["inApps/v1/subscriptions/extend/mass/status", default: 0] += 1 }
        guard serverAPIKey.accepts(authorization: authorization, bundleID: population.configuration.bundleID, now: receivedAt) else { return (401, Data()) }
        guard let request = ledger.withLock({ $0.mass[requestIdentifier] }), request.productID == productID, request.environment == environment.rawValue else {
            return Self.error(404, 4_040_009, "Status request not found.")
        }
        var json: [String: Any] = ["requestIdentifier": requestIdentifier, "complete": request.complete]
        if request.complete {
            json["completeDate"] = request.completesAtMs
            json["succeededCount"] = request.succeeded
            json["failedCount"] = request.failed
        }
        return (200, Self.serializeServerAPI(json))
    }

    /// Completes every mass request due by `ms`, at its own instant: each active subscription of
    /// the product in the request's storefronts (the simulator's customers are all in USA) is
    /// extended, or counted failed when Apple's rules refuse it (a free offer, two extensions
    /// already); a `RENEWAL_EXTENDED` or `RENEWAL_EXTENSION/FAILURE` for each, then the `SUMMARY`.
    func completeMassExtensions(through ms: Int64) {
        let due = ledger.withLock { ledger in ledger.mass.values.filter { !$0.complete && $0.completesAtMs <= ms }.sorted { $0.completesAtMs < $1.completesAtMs } }
        for var request in due {
            let at = request.completesAtMs
            let inStorefront = request.storefrontCountryCodes.map { $0.contains("USA") } ?? true
            var events: [LifecycleEvent] = []
            records.withLock { population in
                guard inStorefront else { return }
                for subscriber in population.subscribers where subscriber.environment == request.environment {
                    for chain in subscriber.chains {
                        guard let current = chain.current(at: at), current.productID == request.productID, current.expiresMs > at,
                            current.refund(at: at) == nil, chain.billingRetry(at: at) == nil
                        else { continue }
                        let result = population.modifyChain(chain.originalTransactionID) { chain, _ in
                            chain.extendRenewal(at: at, days: request.days, requestIdentifier: request.requestIdentifier, familyMembersIncluded: true)
                        }
                        if case .success? = result {
                            request.succeeded += 1
                            events.append(LifecycleEvent(kind: .renewalExtended, atMs: at, subscriberIndex: subscriber.index, originalTransactionID: chain.originalTransactionID))
                        } else {
                            request.failed += 1
                            events.append(LifecycleEvent(kind: .renewalExtensionFailed, atMs: at, subscriberIndex: subscriber.index, originalTransactionID: chain.originalTransactionID))
                        }
                    }
                }
            }
            request.complete = true
            ledger.withLock { $0.mass[request.requestIdentifier] = request }
            for event in events { notify(event) }
            let configuration = population.configuration
            var summary: [String: Any] = [
                "environment": request.environment, "bundleId": configuration.bundleID, "productId": request.productID,
                "requestIdentifier": request.requestIdentifier, "succeededCount": request.succeeded, "failedCount": request.failed,
            ]
            if request.environment == "Production" { summary["appAppleId"] = configuration.appAppleID }
            if let codes = request.storefrontCountryCodes { summary["storefrontCountryCodes"] = codes }
            let pki = self.pki
            outbox.withLock { $0?.scheduleSummary(summary, at: at, configuration: configuration, pki: pki) }
        }
    }
}
