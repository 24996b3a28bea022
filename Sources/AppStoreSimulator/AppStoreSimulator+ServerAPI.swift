import Foundation

extension AppStoreSimulator {
    /// Answers one App Store Server API request, in this order: the bearer token (401, empty
    /// body), an outage window (503, then 500), an injected fault, then the lookup — an id this
    /// environment does not know, or one not yet issued at the clock, is 404 4040010 — and the
    /// signed answer. Fault draws come from the seed, the request, the clock and the attempt
    /// number, apart from verifyReceipt's.
    public func answerServerAPI(_ request: ServerAPIRequest) -> SimulatedAnswer {
        let configuration = population.configuration
        let endpoint = request.endpoint.rawValue
        serverAPIArrivals.arrived()
        state.withLock { $0.statistics.serverAPIRequests[endpoint, default: 0] += 1 }
        guard serverAPIKey.accepts(authorization: request.authorization, bundleID: configuration.bundleID, now: request.receivedAt) else {
            return recordServerAPI(SimulatedAnswer(reply: .http(401, body: "", headers: [:]), delay: .zero), "http_401")
        }
        let revisionText = request.query["revision"]?.first
        let (clock, faults, attempt) = state.withLock { state -> (Int64, FaultConfiguration, UInt64) in
            let key = "server-api|\(request.environment.rawValue)|\(endpoint)|\(request.transactionID)|\(revisionText ?? "")"
            let attempt = state.attempts[key, default: 0]
            state.attempts[key] = attempt + 1
            return (state.clockMs, state.faults, attempt)
        }
        var random = SeededRandom(
            seed: configuration.seed ^ 0x5E7A_B1A5, stableHash("\(endpoint)|\(request.transactionID)|\(revisionText ?? "")"),
            UInt64(bitPattern: clock), attempt, request.environment == .sandbox ? 1 : 0)
        let latency = faults.latency.sample(&random)
        if faults.outages.contains(where: { $0.contains(clock) }) {
            let reply: SimulatedAnswer.Reply = attempt % 2 == 0
                ? .http(503, body: "Service Unavailable", headers: [:])
                : Self.apiError(500, 5_000_000, "An unknown error occurred.")
            return recordServerAPI(SimulatedAnswer(reply: reply, delay: latency), "outage")
        }
        let fault = faults.serverAPIFault(draw: Double.random(in: 0..<1, using: &random))
        if let fault, let error = fault.error {
            var answer = SimulatedAnswer(reply: Self.apiError(error.status, error.code, error.message), delay: latency)
            if fault == .rateLimited, case .http(let status, let body, var headers) = answer.reply {
                // Apple's Retry-After on the Server API is a UNIX time in milliseconds.
                headers["Retry-After"] = String(Int64(request.receivedAt.timeIntervalSince1970 * 1000) + Int64(faults.retryAfterSeconds) * 1000)
                answer.reply = .http(status, body: body, headers: headers)
            }
            return recordServerAPI(answer, "fault_\(fault.rawValue)")
        }
        if fault == .droppedConnection { return recordServerAPI(SimulatedAnswer(reply: .drop, delay: latency), "fault_\(FaultConfiguration.ServerAPIFault.droppedConnection.rawValue)") }

        if request.endpoint == .orderLookup {
            let json = ServerAPIResponseBuilder.orderLookup(orderTransaction(request.transactionID, environment: request.environment, at: clock), at: clock, configuration: configuration, sign: pki.sign)
            return recordServerAPI(SimulatedAnswer(reply: .json(Self.serializeServerAPI(json)), delay: latency), "status_200")
        }
        guard let found = population.transaction(id: request.transactionID), found.transaction.purchaseMs <= clock,
            found.subscriber.environment == request.environment.rawValue
        else { return recordServerAPI(SimulatedAnswer(reply: Self.apiError(404, 4_040_010, "Transaction id not found."), delay: latency), "error_4040010") }
        let pki = self.pki
        // The paged endpoints' `revision`: this simulator's own token, or Apple's 4000005.
        var offset = 0
        if let revisionText {
            guard let revision = HistoryRevision(token: revisionText) else {
                return recordServerAPI(SimulatedAnswer(reply: Self.apiError(400, 4_000_005, "Invalid request revision."), delay: latency), "error_4000005")
            }
            offset = revision.offset
        }
        var json: [String: Any]
        switch request.endpoint {
        case .allSubscriptionStatuses:
            let filter = request.query["status"].map { Set($0.compactMap { Int($0) }) }
            json = ServerAPIResponseBuilder.statuses(found.subscriber, at: clock, configuration: configuration, statuses: filter, sign: pki.sign)
        case .transactionHistory:
            let descending = request.query["sort"]?.first == "DESCENDING"
            json = ServerAPIResponseBuilder.history(found.subscriber, at: clock, configuration: configuration, offset: offset, descending: descending, sign: pki.sign)
        case .transactionInfo:
            json = ["signedTransactionInfo": pki.sign(ServerAPIResponseBuilder.transaction(
                found.transaction, chain: found.chain, environment: found.subscriber.environment, bundleID: configuration.bundleID, at: clock))]
        case .refundHistory:
            json = ServerAPIResponseBuilder.refunds(found.subscriber, at: clock, configuration: configuration, offset: offset, sign: pki.sign)
        case .orderLookup:
            return recordServerAPI(SimulatedAnswer(reply: Self.apiError(500, 5_000_000, "An unknown error occurred."), delay: latency), "error_5000000")
        }
        var outcome = "status_200"
        var delay = latency
        if fault == .tamperedSignature {
            Self.tamperFirstTransaction(&json)
            outcome = "fault_\(FaultConfiguration.ServerAPIFault.tamperedSignature.rawValue)"
        } else if fault == .slowAnswer {
            delay += faults.slowAnswerDelay
            outcome = "fault_\(FaultConfiguration.ServerAPIFault.slowAnswer.rawValue)"
        }
        return recordServerAPI(SimulatedAnswer(reply: .json(Self.serializeServerAPI(json)), delay: delay), outcome)
    }

    /// Changes the first signed transaction of a StatusResponse or HistoryResponse after signing.
    static func tamperFirstTransaction(_ json: inout [String: Any]) {
        if let signed = json["signedTransactionInfo"] as? String {
            json["signedTransactionInfo"] = SimulatorPKI.tampered(signed)
        } else if var signed = json["signedTransactions"] as? [String], !signed.isEmpty {
            signed[0] = SimulatorPKI.tampered(signed[0])
            json["signedTransactions"] = signed
        } else if var data = json["data"] as? [[String: Any]], var last = data.first?["lastTransactions"] as? [[String: Any]],
            let jws = last.first?["signedTransactionInfo"] as? String
        {
            last[0]["signedTransactionInfo"] = SimulatorPKI.tampered(jws)
            data[0]["lastTransactions"] = last
            json["data"] = data
        }
    }

    /// Apple's error answer: `{"errorCode":…,"errorMessage":…}` as JSON.
    static func apiError(_ status: Int, _ code: Int, _ message: String) -> SimulatedAnswer.Reply {
        let body = String(decoding: serializeServerAPI(["errorCode": code, "errorMessage": message]), as: UTF8.self)
        return .http(status, body: body, headers: ["Content-Type": "application/json"])
    }

    static func serializeServerAPI(_ object: [String: Any]) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
    }

    private func recordServerAPI(_ answer: SimulatedAnswer, _ outcome: String) -> SimulatedAnswer {
        state.withLock { $0.statistics.outcomes["server_api_\(outcome)", default: 0] += 1 }
        return answer
    }
}
