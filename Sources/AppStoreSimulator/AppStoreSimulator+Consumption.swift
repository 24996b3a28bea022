import Foundation

extension AppStoreSimulator {
    /// Send Consumption Information (`PUT …/inApps/v2/transactions/consumption/{transactionId}`)
    /// with Apple's checks in order: the token (401), a scripted failure (503, or 429 with Apple's
    /// `Retry-After` in ms), the body — `customerConsented` not true (400 4000035,
    /// InvalidCustomerConsentedError), `deliveryStatus` not Apple's (400 4000036),
    /// `sampleContentProvided` not a Boolean (400 4000041), `refundPreference` not Apple's or a
    /// `consumptionPercentage` for an auto-renewable subscription (400 without a code: Apple names
    /// no code for them in its library) — then the transaction (404 4040010 unknown in this
    /// environment or not yet bought). Taken: 202 with no body, recorded in ``consumptionAnswers``
    /// with Apple's decision before and after the answer weighed on it.
    public func answerSendConsumptionInformation(
        environment: SimulatedEnvironment, transactionID: String, body: Data, authorization: String?, receivedAt: Date = Date()
    ) -> (status: Int, body: Data, headers: [String: String]) {
        serverAPIArrivals.arrived()
        state.withLock { $0.statistics.serverAPIRequests["inApps/v2/transactions/consumption", default: 0] += 1 }
        guard serverAPIKey.accepts(authorization: authorization, bundleID: population.configuration.bundleID, now: receivedAt) else { return (401, Data(), [:]) }
        if let status = consumption.withLock({ $0.scripted.isEmpty ? nil : $0.scripted.removeFirst() }) {
            if status == 429 {
                let retryAt = Int64(receivedAt.timeIntervalSince1970 * 1000) + Int64(faults.retryAfterSeconds) * 1000
                let answer = Self.error(429, 4_290_000, "Rate limit exceeded.")
                return (answer.status, answer.body, ["Retry-After": String(retryAt)])
            }
            return (status, Data("Service Unavailable".utf8), [:])
        }
        let request = (try? JSONDecoder().decode([String: JSONScalar].self, from: body)) ?? [:]
        guard request["customerConsented"] == .bool(true) else {
            return Self.withoutHeaders(Self.error(400, 4_000_035, "Invalid request. The customer consented field is invalid or doesn't indicate the customer consented."))
        }
        guard case .string(let delivery)? = request["deliveryStatus"], Self.deliveryStatuses.contains(delivery) else {
            return Self.withoutHeaders(Self.error(400, 4_000_036, "Invalid request. The delivery status field is invalid."))
        }
        guard case .bool? = request["sampleContentProvided"] else {
            return Self.withoutHeaders(Self.error(400, 4_000_041, "Invalid request. The sample content provided field is invalid."))
        }
        var preference: String?
        if let value = request["refundPreference"] {
            guard case .string(let text) = value, Self.refundPreferences.contains(text) else { return (400, Data(), [:]) }
            preference = text
        }
        if request["consumptionPercentage"] != nil { return (400, Data(), [:]) }
        let clock = nowMs
        guard let found = population.transaction(id: transactionID), found.transaction.purchaseMs <= clock, found.subscriber.environment == environment.rawValue else {
            return Self.withoutHeaders(Self.error(404, 4_040_010, "Transaction id not found."))
        }
        // The answer weighs on Apple's seeded decision, and the truth keeps both.
        let seed = population.configuration.seed
        let (planned, decided) = records.withLock { population in
            population.modifyChain(found.chain.originalTransactionID) { chain, _ in
                chain.weighConsumptionAnswer(transactionID: transactionID, refundPreference: preference, at: clock, seed: seed)
            } ?? (nil, nil)
        }
        let answer = SimulatedConsumptionAnswer(
            transactionID: transactionID, environment: environment.rawValue, atMs: clock, body: String(decoding: body, as: UTF8.self), refundPreference: preference,
            plannedDecision: planned, decision: decided)
        consumption.withLock { $0.answers.append(answer) }
        state.withLock { $0.statistics.outcomes["server_api_consumption_202", default: 0] += 1 }
        return (202, Data(), [:])
    }

    /// Every Send Consumption Information request taken (202), in order.
    public var consumptionAnswers: [SimulatedConsumptionAnswer] { consumption.withLock { $0.answers } }

    /// Answers the next Send Consumption Information requests with these HTTP statuses (503: a
    /// server error; 429: Apple's rate limit with `Retry-After`), before any check.
    public func failNextConsumptionRequests(_ statuses: [Int]) {
        consumption.withLock { $0.scripted += statuses }
    }

    static let deliveryStatuses: Set<String> = ["DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM", "UNDELIVERED_SERVER_OUTAGE", "UNDELIVERED_OTHER"]
    static let refundPreferences: Set<String> = ["DECLINE", "GRANT_FULL", "GRANT_PRORATED"]

    static func withoutHeaders(_ answer: (status: Int, body: Data)) -> (status: Int, body: Data, headers: [String: String]) {
        (answer.status, answer.body, [:])
    }
}
